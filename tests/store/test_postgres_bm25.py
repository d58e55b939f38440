"""PostgreSQL's bounded BM25 (impact-ordered postings) on a real server: it ranks
as the full scan does while every term's postings are read whole, reads at most
`bm25_candidates` postings per term and collection, and follows every write."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

pytest.importorskip("psycopg", reason="PostgreSQL tests need psycopg")
pytest.importorskip("pgvector", reason="PostgreSQL tests need pgvector")

from helpers.paragraph_docs import paragraph_doc
from quoteproof.store import postgres_bm25
from quoteproof.store.postgres import PostgresStore

WORDS = [f"w{i}" for i in range(60)]


@pytest.fixture
def store(pg_database: str) -> Iterator[PostgresStore]:
    opened = PostgresStore.open(pg_database, create=True)
    rng = random.Random(1)
    for n in range(12):
        paragraphs = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30))) for _ in range(10)
        ]
        opened.add_document(
            paragraph_doc(f"/d{n}.txt", paragraphs, "default" if n % 3 else "other")
        )
    opened.add_document(paragraph_doc("/d1.txt", ["w1 w2 w3 replaced"]))  # retires a version
    yield opened
    opened.close()


def search(store: PostgresStore, bounded: bool, query: str, limit: int, collections):  # type: ignore[no-untyped-def]
    store.bm25_bounded_from = 0 if bounded else 10**9
    return [(h.chunk.ref, h.score) for h in store.search_bm25(query, limit, collections)]


@pytest.mark.parametrize("collections", [None, ["other"], ["default", "other"]])
@pytest.mark.parametrize("query", ["w1 w2", "w3 w5 w7 w9", "label w4", "w59 replaced"])
def test_bounded_search_ranks_as_the_full_scan(
    store: PostgresStore, query: str, collections: list[str] | None
) -> None:
    full = search(store, False, query, 10, collections)
    bounded = search(store, True, query, 10, collections)
    assert [ref for ref, _ in bounded] == [ref for ref, _ in full]
    assert [score for _, score in bounded] == pytest.approx([s for _, s in full], abs=1e-9)


def test_at_most_the_candidates_of_each_term_are_scored(store: PostgresStore) -> None:
    store.bm25_candidates = 2
    for collections, searched in ((None, 2), (["other"], 1)):
        hits = search(store, True, "w1 w2 w3", 100, collections)
        assert 0 < len(hits) <= 3 * 2 * searched  # terms x candidates x collections
        full = search(store, False, "w1 w2 w3", 100, collections)
        assert len(full) > len(hits)
        assert {ref for ref, _ in hits} <= {ref for ref, _ in full}


def test_postings_follow_retirement_and_new_versions(store: PostgresStore) -> None:
    store.add_document(paragraph_doc("/d2.txt", ["zebra w1"]))
    assert [ref for ref, _ in search(store, True, "zebra", 10, None)] == [
        ref for ref, _ in search(store, False, "zebra", 10, None)
    ]
    assert len(search(store, True, "zebra", 10, None)) == 1
    doc_id = store.search_bm25("zebra", 1)[0].chunk.doc_id
    store.retire_document(doc_id)
    assert search(store, True, "zebra", 10, None) == []
    row = store._db.execute(
        "SELECT count(*) AS n FROM bm25_postings p JOIN chunks c ON c.id = p.chunk_id "
        "WHERE NOT c.is_current"
    ).fetchone()
    assert row is not None and row["n"] == 0


def test_the_migration_fill_writes_the_postings_every_write_keeps(store: PostgresStore) -> None:
    """Schema 10's migration makes the postings and document frequencies afresh; they
    are those the writes kept (impacts aside: a write's are at its time's statistics)."""
    postings = "SELECT chunk_id, lexeme, collection, tf, length FROM bm25_postings ORDER BY 1, 2"
    terms = "SELECT collection, lexeme, chunks FROM bm25_terms WHERE chunks > 0 ORDER BY 1, 2"
    kept = [store._db.execute(sql).fetchall() for sql in (postings, terms)]
    with store._db.transaction():
        for statement in postgres_bm25.FILL:
            store._db.execute(statement)
    assert [store._db.execute(sql).fetchall() for sql in (postings, terms)] == kept
    assert len(kept[0]) > 100 and len(kept[1]) > 60
