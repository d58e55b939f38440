"""BM25 in SQLite that scores a bounded number of chunks per question: those that
hold one of its rarer terms, each scored exactly by FTS5.

FTS5's `bm25()` over a question (its terms OR-ed, each a quoted phrase) scores every
chunk that holds any of them, so the full scan (`sqlite_schema.bm25_search_sql`)
grows with the corpus. BM25 is a sum over the question's phrases of idf(phrase) x a
term-frequency part of the chunk, and FTS5 takes the chunk count, average length and
each phrase's document frequency from the whole table whatever the MATCH selects. So
a search, per collection searched (`bounded_scores`):

1. Counts the chunks that hold each phrase, but no more than `CANDIDATE_ROWS` of
   them (a MATCH of that phrase alone, `LIMIT`-ed: FTS5 walks the phrase's doclist
   without scoring anything and stops there).
2. Takes as *rare* the rarest phrases whose chunks add up to no more than
   `CANDIDATE_ROWS`; the others are *common*.
3. Scores every chunk that holds a rare phrase, with all the question's phrases, in
   two MATCHes that split those chunks: `(rare) AND (common)` and `(rare) NOT
   (common)`. Each names every phrase once, so `bm25()` sums the same parts as the
   full scan's (a common phrase absent from a chunk adds 0): each chunk's score is
   the full scan's, to rounding. Each returns its best `limit`.
4. Ranks the union by score, ties by chunk id.

What is left out: chunks that hold only common phrases. One of them ranks above the
chunks found only when several common terms outweigh a rarer one; on the benchmark's
synthetic text the top 10 was the full scan's 100% at 100,000 chunks and 99.6% at
1,000,000 (`benchmarks/scale.py`'s `bm25 ov` measures it). When no phrase is in
`CANDIDATE_ROWS` chunks or fewer, the rarest one alone is the rare one: its chunks
are then scored whatever their number, still far fewer than the full scan's.

Considered and left: document frequencies from an `fts5vocab` 'row' table (its
`term = ?` lookup seeks to the term but counts its chunks by reading the term's whole
doclist, ~4 ms for a term in 68% of 100,000 chunks, growing with the corpus; the
limited MATCH count stops at `CANDIDATE_ROWS`, and phrases need no lexeme: FTS5
tokenizes them itself, so no stemmer of ours can disagree with it), and adding the
common terms' part in Python for the best few hundred chunks by the rare part
(tokenizing them again cost ~10 ms, and chunks below that cut that hold the rare term
and several common ones were missed: 57% overlap at 1,000,000 chunks against 99.6%).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

BM25_WEIGHTS = (1.0, 0.4)
"""Column weights for bm25(): chunk text counts fully, the label (title, sections) less."""

TOKENIZE = "porter unicode61 remove_diacritics 2"
"""The tokenizer of every collection's FTS5 table."""

BOUNDED_FROM = 20_000
"""Current chunks in the collections searched from which the bounded search runs;
below it the full scan costs a few milliseconds and ranks exactly."""

CANDIDATE_ROWS = 20_000
"""The chunks a question's rare phrases may hold in all, per collection: what a
bounded search scores (unless even its rarest phrase is commoner)."""


def scores_sql(table: str) -> str:
    """Return the SQL of the BM25 score (`id`, `score`) of each row of FTS5 table
    `table` that MATCHes the one `?` (the full scan of a collection)."""
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    return (
        f"SELECT rowid AS id, -bm25({table}, {weights}) AS score FROM {table} WHERE {table} MATCH ?"
    )


def table_rows(db: sqlite3.Connection, table: str) -> int:
    """The rows of FTS5 table `table`: the first SQLite varint of its averages record
    (row 1 of its `_data` shadow table; fts5Int.h), 0 when it has none yet."""
    row = db.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    record: bytes = row[0] if row is not None else b""
    value = 0
    for position, byte in enumerate(record[:9]):
        if position == 8:  # a ninth byte gives all its 8 bits
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value


def bounded_scores(
    db: sqlite3.Connection,
    table: str,
    phrases: Sequence[str],
    limit: int,
    candidate_rows: int = CANDIDATE_ROWS,
) -> list[tuple[int, float]]:
    """The best `limit` (row id, BM25 score) of FTS5 table `table` for the question
    `phrases` (distinct FTS5 phrases, `fts.fts_phrases`; the full scan MATCHes them
    OR-ed) among the rows that hold one of its rare phrases (see the module), best
    first, ties by row id; scores equal the full scan's."""
    if limit <= 0 or not phrases:
        return []
    held = {
        one: db.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
            (one, candidate_rows + 1),
        ).fetchone()[0]
        for one in phrases
    }
    rare: set[str] = set()
    total = 0
    for one in sorted(phrases, key=lambda p: (held[p], p)):
        if total + held[one] > candidate_rows:
            break
        rare.add(one)
        total += held[one]
    if not rare:
        held = {
            one: db.execute(
                f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (one,)
            ).fetchone()[0]
            for one in phrases
        }
        rare = {min(phrases, key=lambda p: (held[p], p))}
    either = " OR ".join(one for one in phrases if one in rare)
    common = " OR ".join(one for one in phrases if one not in rare)
    best = f"{scores_sql(table)} ORDER BY score DESC, id LIMIT ?"
    matches = [f"({either}) AND ({common})", f"({either}) NOT ({common})"] if common else [either]
    found = [
        (int(row[0]), float(row[1]))
        for match in matches
        for row in db.execute(best, (match, limit))
    ]
    return sorted(found, key=lambda pair: (-pair[1], pair[0]))[:limit]
