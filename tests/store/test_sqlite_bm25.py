"""SQLite's bounded BM25 on a real index: from `bm25_bounded_from` current chunks it
scores exactly the chunks that hold one of the question's rare terms (at most
`bm25_candidates` in all), with the full scan's scores, per collection; the rarest
term alone when none is rare; indexes made before it are searched the same way."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.paragraph_docs import paragraph_doc
from helpers.raw_sql import back_to_one_search_table
from quoteproof.store.base import NewDocument
from quoteproof.store.sqlite import DB_FILENAME, SQLiteStore
from quoteproof.store.sqlite_bm25 import table_rows
from quoteproof.store.sqlite_schema import fts_table

COMMON = ["c1", "c2", "c3", "c4"]  # each in about 30% of the chunks
RARE = {"zebra": [0, 15, 37], "yak": [3, 45, 31, 88], "xenon": [7, 50, 101]}
"""The chunks holding each rare word (chunk n is in document n // 10; documents 0, 3,
6 and 9 are in collection 'other'); the first two of each hold every common word
too; in odd chunks the word comes first, so it is in the label as well."""
CANDIDATES = 10  # the rare words' chunks fit; any common word's do not


def corpus() -> list[NewDocument]:
    """Twelve documents of ten chunks (every third in collection 'other'): filler
    words, the common words at random, the rare words in a few chunks each."""
    rng = random.Random(7)
    paragraphs = []
    for _ in range(120):
        words = [f"f{rng.randrange(300)}" for _ in range(rng.randint(6, 20))]
        words += [word for word in COMMON if rng.random() < 0.3 for _ in range(rng.randint(1, 3))]
        rng.shuffle(words)
        paragraphs.append(words)
    for word, places in RARE.items():
        for place in places:
            paragraphs[place].insert(0 if place % 2 else len(paragraphs[place]), word)
        for place in places[:2]:
            paragraphs[place] += COMMON
    return [
        paragraph_doc(
            f"/d{n}.txt",
            [" ".join(words) for words in paragraphs[n * 10 : n * 10 + 10]],
            "other" if n % 3 == 0 else "default",
        )
        for n in range(12)
    ]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore.open(tmp_path / "idx", create=True)
    for new in corpus():
        opened.add_document(new)
    opened.add_document(
        paragraph_doc("/d1.txt", ["zebra c1 replaced"], "default")
    )  # retires a version
    opened.bm25_candidates = CANDIDATES
    yield opened
    opened.close()


def search(
    store: SQLiteStore,
    bounded: bool,
    query: str,
    limit: int,
    collections: list[str] | None = None,
) -> list[tuple[str, float]]:
    store.bm25_bounded_from = 0 if bounded else 10**9
    return [(h.chunk.ref, h.score) for h in store.search_bm25(query, limit, collections)]


def holding(store: SQLiteStore, words: str, collections: list[str] | None) -> set[str]:
    """Refs of the current chunks (of `collections`) whose text or label holds one of
    `words`."""
    return {ref for ref, _ in search(store, False, words, 1000, collections)}


def assert_same(found: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [ref for ref, _ in found] == [ref for ref, _ in expected]
    assert [score for _, score in found] == pytest.approx([s for _, s in expected], abs=1e-9)


@pytest.mark.parametrize("collections", [None, ["other"], ["default", "other"]])
@pytest.mark.parametrize("query", ["zebra c1", "zebra yak c2 c3", "label yak c4", "xenon c1 c2"])
def test_bounded_search_scores_the_rare_terms_chunks_as_the_full_scan(
    store: SQLiteStore, query: str, collections: list[str] | None
) -> None:
    rare = " ".join(word for word in query.split() if word in RARE)
    common = [word for word in query.split() if word not in RARE]
    for word in common:  # the common words are common in every collection searched
        assert len(holding(store, word, collections)) > CANDIDATES
    full = search(store, False, query, 1000, collections)
    wanted = holding(store, rare, collections)
    expected = [(ref, score) for ref, score in full if ref in wanted]
    assert len(expected) < len(full)  # chunks holding common words only are left out
    assert_same(search(store, True, query, 1000, collections), expected)
    assert_same(search(store, True, query, 2, collections), expected[:2])
    alone = dict(search(store, False, rare, 1000, collections))
    assert any(score > alone[ref] + 0.01 for ref, score in expected)  # common words count
    store.bm25_candidates = 1000  # every term rare: the full scan's top 10
    assert_same(search(store, True, query, 10, collections), full[:10])


def test_the_rarest_term_alone_is_scored_when_none_is_rare(store: SQLiteStore) -> None:
    counts = {word: len(holding(store, word, None)) for word in ("c1", "c3")}
    assert min(counts.values()) > CANDIDATES and counts["c1"] != counts["c3"]
    rarest = min(counts, key=lambda word: counts[word])
    wanted = holding(store, rarest, None)
    full = search(store, False, "c1 c3", 1000)
    expected = [(ref, score) for ref, score in full if ref in wanted]
    assert len(expected) < len(full)
    assert_same(search(store, True, "c1 c3", 1000), expected)


def test_a_term_of_no_token_is_left_out(store: SQLiteStore) -> None:
    """FTS5 makes no token of "_" (a word to `query_terms`): it matches no chunk and
    adds nothing to a score, and is not taken for the rare term."""
    assert search(store, False, "_", 10) == []
    bounded = search(store, True, "_ c1 c3", 1000)
    assert bounded and len(bounded) < len(search(store, False, "_ c1 c3", 1000))
    assert_same(bounded, search(store, True, "c1 c3", 1000))


def test_collections_are_scored_by_their_own_statistics_and_merged(store: SQLiteStore) -> None:
    query = "zebra yak xenon c1"
    other = holding(store, "zebra yak xenon c1 c2 c3 c4", ["other"])
    hits = search(store, True, query, 1000, ["other"])
    assert hits and {ref for ref, _ in hits} <= other
    default = search(store, True, query, 1000, ["default"])
    merged = search(store, True, query, 1000)
    assert dict(merged) == pytest.approx(dict(hits + default), abs=1e-9)
    assert [score for _, score in merged] == sorted((s for _, s in merged), reverse=True)
    assert len(merged) < len(search(store, False, query, 1000))


def test_bounded_search_runs_from_bm25_bounded_from_current_chunks(store: SQLiteStore) -> None:
    full = search(store, False, "zebra c1", 1000)
    current = len(holding(store, "replaced f" + " f".join(map(str, range(300))), None))
    assert current == 111  # 120 chunks, less /d1.txt's first version, plus its second
    store.bm25_bounded_from = current
    assert len(store.search_bm25("zebra c1", 1000)) < len(full)
    store.bm25_bounded_from = current + 1
    assert [(h.chunk.ref, h.score) for h in store.search_bm25("zebra c1", 1000)] == full


def test_an_index_made_before_is_searched_bounded(tmp_path: Path) -> None:
    """An index of schema 7 (one full-text table for all collections), migrated on
    open, is searched as one made now."""
    store = SQLiteStore.open(tmp_path / "idx", create=True)
    for new in corpus():
        store.add_document(new)
    store.bm25_candidates = CANDIDATES
    made_now = search(store, True, "zebra yak c2", 1000)
    store.close()
    location = str(tmp_path / "idx")
    back_to_one_search_table(location, ("default", "other"))
    store = SQLiteStore.open(location)
    try:
        store.bm25_candidates = CANDIDATES
        assert_same(search(store, True, "zebra yak c2", 1000), made_now)
        assert len(made_now) < len(search(store, False, "zebra yak c2", 1000))
    finally:
        store.close()


def test_the_row_count_read_from_fts5_is_the_collection_s_current_chunks(
    store: SQLiteStore, tmp_path: Path
) -> None:
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    try:
        for collection in ("default", "other"):
            current = db.execute(
                "SELECT count(*) FROM chunks c JOIN documents d ON d.doc_id = c.doc_id "
                "AND d.version = c.doc_version WHERE d.is_current = 1 AND d.collection = ?",
                (collection,),
            ).fetchone()[0]
            assert current > 0 and table_rows(db, fts_table(collection)) == current
    finally:
        db.close()
