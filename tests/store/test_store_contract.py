"""Contract tests every `Store` implementation must pass (SQLite now; PostgreSQL later)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from quoteproof.errors import IndexNotFoundError, StoreError
from quoteproof.model import sha256_text
from quoteproof.store.base import NewChunk, NewDocument, Store
from quoteproof.store.refs import doc_id_candidates
from quoteproof.store.sqlite import DB_FILENAME, SQLiteStore


@pytest.fixture(params=["sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened = SQLiteStore.open(tmp_path / "idx", create=True)
    yield opened
    opened.close()


def new_doc(path: str, paragraphs: list[str], title: str = "Doc") -> NewDocument:
    text = "\n\n".join(paragraphs)
    chunks, offset = [], 0
    for number, paragraph in enumerate(paragraphs, start=1):
        chunks.append(NewChunk(offset, offset + len(paragraph), ("Sec",), f"{title} › ¶{number}"))
        offset += len(paragraph) + 2
    return NewDocument(path, title, "text", text, sha256_text(text), tuple(chunks))


def test_add_and_read_back(store: Store) -> None:
    doc = store.add_document(new_doc("/a.txt", ["Aspirin thins blood.", "Take with water."]))
    assert doc.version == 1 and doc.sha256 == sha256_text(doc.text)
    chunks = store.chunks_of(doc.doc_id, 1)
    assert [c.text for c in chunks] == ["Aspirin thins blood.", "Take with water."]
    for chunk in chunks:
        assert doc.text[chunk.start : chunk.end] == chunk.text
        assert store.get_chunk(chunk.ref) == chunk
        assert chunk.source_path == "/a.txt"
        assert chunk.section == ("Sec",)
    assert store.get_document(doc.doc_id) == doc
    assert store.get_chunk("nope.1") is None


def test_refs_are_unique_short_and_stable(store: Store) -> None:
    first = store.add_document(new_doc("/a.txt", ["one", "two"]))
    second = store.add_document(new_doc("/b.txt", ["one", "two"]))
    refs_a = [c.ref for c in store.chunks_of(first.doc_id, 1)]
    refs_b = [c.ref for c in store.chunks_of(second.doc_id, 1)]
    assert first.doc_id != second.doc_id
    assert len(set(refs_a + refs_b)) == 4
    assert all(len(ref) <= 10 for ref in refs_a + refs_b)
    assert refs_a == [f"{first.doc_id}.1", f"{first.doc_id}.2"]


def test_new_version_keeps_old_one_readable_but_unsearchable(store: Store) -> None:
    v1 = store.add_document(new_doc("/a.txt", ["Warfarin interacts with aspirin."]))
    v2 = store.add_document(new_doc("/a.txt", ["Heparin is an anticoagulant."]))
    assert (v2.doc_id, v2.version) == (v1.doc_id, 2)
    assert store.get_document(v1.doc_id, 1) == v1
    assert store.get_document(v1.doc_id) == v2
    old_ref = store.chunks_of(v1.doc_id, 1)[0].ref
    assert store.get_chunk(old_ref) is not None
    assert store.search_bm25("warfarin", 5) == []
    assert [h.chunk.doc_version for h in store.search_bm25("heparin", 5)] == [2]
    assert store.stats().documents == 1 and store.stats().versions == 2
    current = store.current_version("/a.txt")
    assert current is not None and current.version == 2


def test_bm25_ranks_and_ignores_query_syntax(store: Store) -> None:
    store.add_document(
        new_doc(
            "/a.txt",
            [
                "Shingles causes a painful rash.",
                "A rash can have many causes; shingles rash is one-sided.",
                "Blood pressure is measured in mmHg.",
            ],
        )
    )
    hits = store.search_bm25('shingles "rash" OR NOT (AND*', 10)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert len(hits) == 2
    assert hits[0].score >= hits[1].score
    assert store.search_bm25("   ?!  ", 10) == []
    assert store.search_bm25("stethoscope", 10) == []


def test_search_matches_label_words(store: Store) -> None:
    store.add_document(new_doc("/a.txt", ["Rest and fluids help."], title="Influenza"))
    assert len(store.search_bm25("influenza", 5)) == 1


def test_neighbours(store: Store) -> None:
    doc = store.add_document(new_doc("/a.txt", ["p1", "p2", "p3", "p4"]))
    chunks = store.chunks_of(doc.doc_id, 1)
    assert [c.ordinal for c in store.neighbours(chunks[1])] == [1, 3]
    assert [c.ordinal for c in store.neighbours(chunks[0])] == [2]
    assert [c.ordinal for c in store.neighbours(chunks[3], width=2)] == [2, 3]


def test_failed_write_leaves_nothing(tmp_path: Path) -> None:
    store = SQLiteStore.open(tmp_path / "idx", create=True)
    other = store.add_document(new_doc("/a.txt", ["x"]))
    # Make the second chunk's ref of the next document clash, so the write fails midway.
    clash = f"{doc_id_candidates('/dup.txt')[0]}.2"
    store._db.execute("UPDATE chunks SET ref = ? WHERE doc_id = ?", (clash, other.doc_id))
    with pytest.raises(sqlite3.IntegrityError):
        store.add_document(new_doc("/dup.txt", ["one", "two"]))
    assert store.current_version("/dup.txt") is None
    assert store.search_bm25("one", 5) == []
    assert store.stats().chunks == 1
    store.close()


def test_missing_index_and_newer_schema(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError, match="no index"):
        SQLiteStore.open(tmp_path / "absent")
    store = SQLiteStore.open(tmp_path / "idx", create=True)
    store.close()
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    db.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer"):
        SQLiteStore.open(tmp_path / "idx")


def test_wal_mode(tmp_path: Path) -> None:
    SQLiteStore.open(tmp_path / "idx", create=True).close()
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
