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
   without scoring anything and stops there). A phrase in no chunk (one of no
   token, such as "_") adds 0 to every score and is left out.
2. Takes as *rare* the rarest phrases whose chunks add up to no more than
   `CANDIDATE_ROWS`; the others are *common*.
3. Scores every chunk that holds a rare phrase, with all the question's phrases, in
   two MATCHes that split those chunks: `(rare) AND (common)` and `(rare) NOT
   (common)`. Each names every phrase once, so `bm25()` sums the same parts as the
   full scan's (a common phrase absent from a chunk adds 0): each chunk's score is
   the full scan's, to rounding. Each returns its best `limit`.
4. Ranks the union by score, ties by chunk id.

What is left out: chunks that hold only common phrases. One of them ranks above the
chunks found only when several common terms outweigh a rarer one. When no phrase is
in `CANDIDATE_ROWS` chunks or fewer, the rarest one alone is the rare one: its chunks
are then scored whatever their number (still fewer than the full scan's), so those
questions are not bounded.

Measured with the scale benchmark's text model (`benchmarks/scale.py`'s
`TextModel`: 50 questions of 2-5 words, over bare FTS5 tables of its chunks) on a
busy 2-core machine:

    chunks      full scan p50/p95   bounded p50/p95   top-10 overlap   score error
    100,000         20 / 42 ms         13 / 23 ms          1.000           4e-15
    1,000,000      222 / 645 ms        44 / 116 ms         0.996           4e-15

From 100k to 1M the full scan's p95 grew 15x and the bounded search's 5x. In the
scale benchmark itself (its own 50 questions, the whole store, a quieter machine)
BM25 p95 was 25 ms at 100k and 85 ms at 1M (3.3x; the full scan's 385 ms at 1M),
with the full scan's top 10 at both sizes. What still grows: the questions without
a rare phrase (5 of the 50 at 1M: the rarest phrase in 25,000-110,000 chunks,
100-270 ms), and FTS5's own count of the chunks holding each common phrase, which
`bm25()` makes for its idf in both MATCHes (it reads the phrase's whole doclist).
`CANDIDATE_ROWS` 10,000 gave 0.964 overlap and a p95 of 145 ms at 1M, 50,000 gave
1.000 and 175 ms (a busier machine then: its full scan's p95 800-830 ms). Removing
the rest needs document frequencies and postings of our own, as PostgreSQL keeps
(`postgres_bm25`).

Considered and left:

- Document frequencies from an `fts5vocab` 'row' table: its `term = ?` lookup seeks
  to the term, but counts its chunks by reading the term's whole doclist (~4 ms for
  a term in 68% of 100,000 chunks, growing with the corpus); the `LIMIT`-ed MATCH
  count stops at `CANDIDATE_ROWS`. Phrases also need no lexeme of ours: FTS5
  tokenizes them itself (porter stemming included), so nothing can disagree with it.
- Adding the common phrases' part in Python (FTS5's formula, lengths from the
  `_docsize` shadow table, term frequencies by tokenizing again) for the few hundred
  best chunks by the rare part: ~10 ms more per question, and chunks below that cut
  that hold a rare phrase and several common ones were missed (overlap 0.57 at 1M).
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
    phrases = [one for one in phrases if held[one]]  # in no chunk: adds 0 to every score
    if not phrases:
        return []
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
