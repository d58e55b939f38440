"""BM25 in PostgreSQL that reads a bounded number of rows per question term:
impact-ordered postings.

PostgreSQL's GIN index over `search_text` finds every chunk that holds a term, and
scoring them all grows with the corpus (about a second per question at 100,000
chunks). Extensions built for this (ParadeDB's pg_search, VectorChord-bm25) are not
on PyPI and not in pgserver, so an index could not rely on them; quoteproof keeps
its own postings instead, which need nothing but plain tables and a B-tree:

- `bm25_postings`: one row per (current chunk, lexeme) with the term's weighted
  frequency in the chunk (`tf`, label positions counting `LABEL_WEIGHT`), the
  chunk's length, and an *impact*: the term-frequency part of BM25 at the
  collection's average length when written. A B-tree on (collection, lexeme,
  impact descending) lists a term's chunks best first.
- `bm25_terms`: per collection and lexeme, the number of current chunks holding it
  (the document frequency), kept by every write as `bm25_collection_stats` is.

A search takes, per collection searched and per lexeme of the question, the
`CANDIDATES_PER_TERM` postings of highest impact (an index range scan that stops
there), and scores those candidates exactly (Okapi BM25, k1 1.2, b 0.75, the same
formula as the full scan). A term held by no more chunks than that is read whole, so
its candidates are exactly the full scan's; for commoner terms (low IDF) a chunk
outside every term's top list can be missed: the benchmark measures the overlap.
Collections with fewer current chunks than `BOUNDED_FROM` are scored by the full
scan (`FULL_SQL`), so small indexes rank exactly as before.
"""

from __future__ import annotations

BM25_K1, BM25_B = 1.2, 0.75
LABEL_WEIGHT = 0.4  # a term in the label (weight C) counts 0.4, as in the SQLite store

CANDIDATES_PER_TERM = 1000
"""Postings read per question lexeme and collection (a question's depth is 50; a
term in fewer chunks than this is read whole)."""

BOUNDED_FROM = 20_000
"""Current chunks in the collections searched from which the bounded search runs;
below it the full scan costs less than ~100 ms and ranks exactly."""

_TF = f"(SELECT sum(CASE w WHEN 'A' THEN 1.0 ELSE {LABEL_WEIGHT} END) FROM unnest(u.weights) w)"


def _part(posting: str) -> str:
    """The term-frequency part of the BM25 score of posting `posting` (a row alias
    with `tf` and `length`) under its collection's statistics `s`."""
    return (
        f"{posting}.tf * {BM25_K1 + 1} / ({posting}.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} "
        f"* {posting}.length / greatest(s.tokens::float8 / greatest(s.chunks, 1), 1)))"
    )


DDL = (
    """CREATE TABLE IF NOT EXISTS bm25_postings (
    chunk_id BIGINT NOT NULL,
    lexeme TEXT NOT NULL,
    collection TEXT NOT NULL,
    tf DOUBLE PRECISION NOT NULL,
    length INTEGER NOT NULL,
    impact REAL NOT NULL,
    PRIMARY KEY (chunk_id, lexeme)
)""",
    "CREATE INDEX IF NOT EXISTS bm25_postings_by_impact "
    "ON bm25_postings (collection, lexeme, impact DESC)",
    """CREATE TABLE IF NOT EXISTS bm25_terms (
    collection TEXT NOT NULL,
    lexeme TEXT NOT NULL,
    chunks BIGINT NOT NULL,
    PRIMARY KEY (collection, lexeme)
)""",
)
"""The postings tables (schema 10)."""

_VERSION = "AND c.doc_id = %s AND c.doc_version = %s"

ADD_POSTINGS = f"""WITH added AS (
    INSERT INTO bm25_postings (chunk_id, lexeme, collection, tf, length, impact)
    SELECT x.id, x.lexeme, x.collection, x.tf, x.length, {_part("x")}
    FROM (
        SELECT c.id, u.lexeme, c.collection, {_TF} AS tf,
            count(*) OVER (PARTITION BY c.id) AS length
        FROM chunks c, LATERAL unnest(c.search_text) u
        WHERE c.is_current {_VERSION}
    ) x JOIN bm25_collection_stats s ON s.collection = x.collection
    RETURNING collection, lexeme
)
INSERT INTO bm25_terms (collection, lexeme, chunks)
SELECT collection, lexeme, count(*) FROM added GROUP BY collection, lexeme
ON CONFLICT (collection, lexeme) DO UPDATE SET chunks = bm25_terms.chunks + EXCLUDED.chunks"""
"""Postings of one version's chunks, their impacts at the collection's statistics
with the version counted, and the version's chunks added to the document
frequencies: one statement. A chunk's length is its number of lexemes (what
`length(search_text)` counts), taken as the count of its unnested rows so that its
tsvector is read once per chunk rather than once per posting; the subquery (not
flattened, for its window) computes each posting's `tf` once."""

UNCOUNT_TERMS = """INSERT INTO bm25_terms (collection, lexeme, chunks)
SELECT collection, lexeme, -count(*) FROM bm25_postings
WHERE chunk_id IN (SELECT id FROM chunks WHERE doc_id = %s AND doc_version = %s)
GROUP BY collection, lexeme
ON CONFLICT (collection, lexeme) DO UPDATE SET chunks = bm25_terms.chunks + EXCLUDED.chunks"""
"""Take one version's chunks (their postings still there) out of the document
frequencies."""

DROP_POSTINGS = """DELETE FROM bm25_postings
WHERE chunk_id IN (SELECT id FROM chunks WHERE doc_id = %s AND doc_version = %s)"""

FILL = ("DELETE FROM bm25_terms", "DELETE FROM bm25_postings", ADD_POSTINGS.replace(_VERSION, ""))
"""Postings and document frequencies of every current chunk, made afresh (the
migration to schema 10)."""

_BEST_CHUNKS = """SELECT {columns}, best.score FROM (
    SELECT id, score FROM scored ORDER BY score DESC, id LIMIT %s
) best JOIN chunks c ON c.id = best.id
    JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.doc_version
ORDER BY best.score DESC, c.id
"""
"""The `limit` best of the `scored` chunks (`id`, `score`), best first, read whole
(`{columns}`: the chunk columns) only once chosen."""

FULL_SQL = f"""
WITH q AS (SELECT {{tsquery}} AS query),
matched AS (
    SELECT c.id, c.collection, length(c.search_text)::float8 AS length, u.lexeme, {_TF} AS tf
    FROM chunks c, q, LATERAL unnest(c.search_text) u
    WHERE c.is_current AND c.search_text @@ q.query
        AND u.lexeme = ANY (SELECT lexeme FROM unnest(to_tsvector('{{config}}', %s)))
        AND {{only}}
),
df AS (SELECT collection, lexeme, count(*)::float8 AS n FROM matched GROUP BY collection, lexeme),
scored AS (
    SELECT m.id, sum(ln(1 + (s.chunks - df.n + 0.5) / (df.n + 0.5)) * {_part("m")}) AS score
    FROM matched m JOIN df USING (collection, lexeme)
        JOIN bm25_collection_stats s USING (collection)
    GROUP BY m.id
)
{_BEST_CHUNKS}"""
"""Okapi BM25 over every matching current chunk of the collections searched (the
full scan), each scored with its own collection's statistics: a term's frequency is
read from the chunk's tsvector (its positions, label ones weighted), its document
frequency is counted among the collection's matches (every chunk holding a question
term matches), and the collection's size and average length come from
`bm25_collection_stats`. To fill in: `{tsquery}` (the question's terms OR-ed, one
`%s` each), `{config}` (the text search configuration), `{only}` (a condition on
`c.collection` keeping the collections asked for, `true` for all) and `{columns}`
(the chunk columns); parameters: each term, the terms as one text, the collections
when `{only}` takes them, the limit. Only the best `limit` chunks are read whole."""

SEARCHED_CHUNKS = (
    "SELECT coalesce(sum(chunks), 0) AS n FROM bm25_collection_stats "
    "WHERE %s::text[] IS NULL OR collection = ANY (%s)"
)
"""The current chunks of the collections searched (None: all)."""

BOUNDED_SQL = f"""
WITH lex AS (SELECT DISTINCT lexeme FROM unnest(to_tsvector(%s::regconfig, %s))),
cols AS (
    SELECT collection FROM bm25_collection_stats
    WHERE %s::text[] IS NULL OR collection = ANY (%s)
),
candidates AS (
    SELECT DISTINCT top.chunk_id FROM lex, cols, LATERAL (
        SELECT p.chunk_id FROM bm25_postings p
        WHERE p.collection = cols.collection AND p.lexeme = lex.lexeme
        ORDER BY p.impact DESC LIMIT %s
    ) top
),
scored AS (
    SELECT p.chunk_id AS id,
        sum(ln(1 + (s.chunks - t.chunks + 0.5) / (t.chunks + 0.5)) * {_part("p")}) AS score
    FROM candidates k CROSS JOIN lex CROSS JOIN LATERAL (
            SELECT * FROM bm25_postings one
            WHERE one.chunk_id = k.chunk_id AND one.lexeme = lex.lexeme
            OFFSET 0
        ) p
        JOIN bm25_terms t ON t.collection = p.collection AND t.lexeme = p.lexeme
        JOIN bm25_collection_stats s ON s.collection = p.collection
    GROUP BY p.chunk_id
)
{_BEST_CHUNKS}"""
"""BM25 over the top postings of each question lexeme (`{columns}`: the chunk
columns); parameters: the text search configuration, the question's terms as one
text, the collections (None: all) twice, the postings per term, the limit.
Each candidate's postings of the question's lexemes are read one by one by the
postings' key (chunk, lexeme), a lookup fenced by `OFFSET 0` so that the planner
cannot turn it into a scan of every posting of each lexeme (which it chose from its
estimates, and which grows with the corpus: 80,000 rows read for a 3-word question
at 100k chunks); only the best `limit` chunks are then read whole."""
