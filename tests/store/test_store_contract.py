"""Contract tests every `Store` implementation must pass (SQLite and PostgreSQL)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from quoteproof.errors import IndexNotFoundError, StoreError
from quoteproof.model import CharRun, Layout, sha256_text
from quoteproof.store.base import (
    SCHEMA_VERSION,
    DocumentSummary,
    EmbeddingSpace,
    NewChunk,
    NewDocument,
    PendingEmbedding,
    Store,
    embed_key,
    embedding_input,
)
from quoteproof.store.refs import doc_id_candidates
from quoteproof.store.sqlite import DB_FILENAME, SQLiteStore


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "postgres":
        from quoteproof.store.postgres import PostgresStore

        opened: Store = PostgresStore.open(request.getfixturevalue("pg_database"), create=True)
    else:
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


def test_list_documents_lists_current_versions_by_path(store: Store) -> None:
    assert store.list_documents() == []
    b1 = store.add_document(new_doc("/b.csv", ["x,y", "1,2"], title="b"))
    a1 = store.add_document(new_doc("/a.txt", ["Aspirin."], title="A"))
    b2 = store.add_document(new_doc("/b.csv", ["x,y", "1,3"], title="b"))
    upper = store.add_document(new_doc("/Z.txt", ["Zinc."], title="Z"))
    assert b1.version == 1 and b2.version == 2
    assert store.list_documents() == [
        DocumentSummary(d.doc_id, d.version, d.source_path, d.title, d.format, d.sha256)
        for d in (upper, a1, b2)  # code-point order: "/Z" < "/a" < "/b"
    ]


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


def test_layout_original_and_chunk_metadata_round_trip(store: Store) -> None:
    text = "Page one text.\n\nPage two text."
    layout = Layout(
        page_starts=(0, 16),
        char_runs=(CharRun(0, 1, 0, 14), CharRun(16, 2, 3, 14)),
        ocr_pages=(2,),
    )
    chunks = (
        NewChunk(0, 14, ("A", "B"), "T › A › B › p. 1", (1,), "de", "file:///t.pdf#page=1"),
        NewChunk(16, 30, ("A",), "T › A › p. 2", (2,), "de", "file:///t.pdf#page=2", ocr=True),
    )
    new = NewDocument("/t.pdf", "T", "pdf", text, "f" * 64, chunks, layout, b"%PDF-bytes")
    doc = store.add_document(new)
    assert store.get_layout(doc.doc_id, 1) == layout
    assert store.get_original(doc.doc_id, 1) == b"%PDF-bytes"
    first, second = store.chunks_of(doc.doc_id, 1)
    assert (first.pages, first.language, first.source_uri, first.ocr) == (
        (1,),
        "de",
        "file:///t.pdf#page=1",
        False,
    )
    assert first.parent_section == ("A",)
    assert (second.pages, second.ocr, second.parent_section) == ((2,), True, ())
    plain = store.add_document(new_doc("/p.txt", ["plain"], title="T"))
    assert store.get_layout(plain.doc_id, 1) is None
    assert store.get_original(plain.doc_id, 1) is None
    assert store.source_paths_with_title("T") == ["/p.txt", "/t.pdf"]
    assert store.source_paths_with_title("nothing") == []


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def embed_pending(store: Store, vectors: dict[str, np.ndarray]) -> list[PendingEmbedding]:
    """Give every pending chunk the vector named by its last word; return what was pending."""
    pending = store.pending_embeddings()
    if pending:
        keys = [p.key for p in pending]
        store.add_embeddings(keys, np.stack([vectors[p.text.split()[-1]] for p in pending]))
    return pending


AXES = {"alpha": unit(1, 0, 0), "beta": unit(1, 1, 0), "gamma": unit(0, 0, 1)}


def test_dense_search_ranks_current_chunks_by_cosine(store: Store) -> None:
    assert store.embedding_space() is None
    store.set_embedding_space(EmbeddingSpace("toy", 3))
    doc = store.add_document(new_doc("/a.txt", ["one alpha", "two beta", "three gamma"], "T"))
    pending = embed_pending(store, AXES)
    assert sorted(p.text for p in pending) == sorted(
        embedding_input("T", ("Sec",), text) for text in ["one alpha", "two beta", "three gamma"]
    )
    assert store.pending_embeddings() == []
    assert store.stats().embedded == 3
    hits = store.search_dense(unit(1, 0.1, 0), 2)
    assert [h.chunk.text for h in hits] == ["one alpha", "two beta"]
    assert [h.rank for h in hits] == [1, 2]
    assert hits[0].score == pytest.approx(float(unit(1, 0.1, 0) @ AXES["alpha"]), abs=1e-5)
    assert store.get_chunk(hits[0].chunk.ref) == hits[0].chunk
    assert len(store.search_dense(unit(0, 0, 1), 10)) == 3
    assert store.search_dense(unit(0, 0, 1), 0) == []
    assert doc.version == 1


def test_only_new_or_changed_chunks_need_vectors(store: Store) -> None:
    store.set_embedding_space(EmbeddingSpace("toy", 3))
    store.add_document(new_doc("/a.txt", ["one alpha", "two beta"], "T"))
    embed_pending(store, AXES)
    store.add_document(new_doc("/a.txt", ["one alpha", "changed gamma"], "T"))
    assert [p.text.split()[-1] for p in store.pending_embeddings()] == ["gamma"]
    embed_pending(store, AXES)
    texts = [h.chunk.text for h in store.search_dense(unit(1, 1, 0), 10)]
    assert sorted(texts) == ["changed gamma", "one alpha"]  # the old version is not searched
    assert all(h.chunk.doc_version == 2 for h in store.search_dense(unit(1, 1, 0), 10))


def test_embedding_space_is_recorded_once_and_checked(store: Store) -> None:
    store.set_embedding_space(EmbeddingSpace("toy", 3))
    store.set_embedding_space(EmbeddingSpace("toy", 3))
    with pytest.raises(StoreError, match="toy"):
        store.set_embedding_space(EmbeddingSpace("other", 3))
    store.add_document(new_doc("/a.txt", ["one alpha"]))
    key = store.pending_embeddings()[0].key
    with pytest.raises(StoreError, match="3 dimensions"):
        store.add_embeddings([key], np.ones((1, 4), dtype=np.float32))
    assert store.stats().embedded == 0


def test_vectors_need_an_embedding_space(store: Store) -> None:
    store.add_document(new_doc("/a.txt", ["one alpha"]))
    key = store.pending_embeddings()[0].key
    with pytest.raises(StoreError, match="no embedding model"):
        store.add_embeddings([key], unit(1, 0, 0).reshape(1, 3))


def test_settings_round_trip(store: Store) -> None:
    assert store.get_setting("refusal_threshold") is None
    store.put_setting("refusal_threshold", '{"value": 0.3}')
    store.put_setting("refusal_threshold", '{"value": 0.4}')
    assert store.get_setting("refusal_threshold") == '{"value": 0.4}'


def test_storing_the_same_text_twice_adds_no_version(store: Store) -> None:
    first = store.add_document(new_doc("/a.txt", ["same words"]))
    again = store.add_document(new_doc("/a.txt", ["same words"]))
    assert again == first
    assert store.stats().versions == 1
    assert len(store.search_bm25("same", 10)) == 1


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


V1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1');
CREATE TABLE documents (doc_id TEXT NOT NULL, version INTEGER NOT NULL,
    source_path TEXT NOT NULL, title TEXT NOT NULL, format TEXT NOT NULL,
    text TEXT NOT NULL, sha256 TEXT NOT NULL, file_sha256 TEXT NOT NULL,
    ingested_at TEXT NOT NULL, is_current INTEGER NOT NULL, PRIMARY KEY (doc_id, version));
CREATE TABLE chunks (id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL,
    doc_version INTEGER NOT NULL, ordinal INTEGER NOT NULL, start INTEGER NOT NULL,
    end INTEGER NOT NULL, text TEXT NOT NULL, section TEXT NOT NULL, label TEXT NOT NULL,
    pages TEXT);
CREATE VIRTUAL TABLE chunks_fts USING fts5 (text, label, content='chunks',
    content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
INSERT INTO documents VALUES ('abc123', 1, '/old.txt', 'Old', 'text', 'Old words.',
    'x', 'y', '2026-01-01', 1);
INSERT INTO chunks VALUES (1, 'abc123.1', 'abc123', 1, 1, 0, 10, 'Old words.', '[]',
    'Old › ¶1', NULL);
INSERT INTO chunks_fts (rowid, text, label) VALUES (1, 'Old words.', 'Old › ¶1');
"""


def test_schema_1_index_is_migrated_in_place(tmp_path: Path) -> None:
    (tmp_path / "idx").mkdir()
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    db.executescript(V1_SCHEMA)
    db.close()
    store = SQLiteStore.open(tmp_path / "idx")
    chunk = store.get_chunk("abc123.1")
    assert chunk is not None
    assert (chunk.text, chunk.language, chunk.source_uri, chunk.ocr) == (
        "Old words.",
        "en",
        "",
        False,
    )
    assert [hit.chunk.ref for hit in store.search_bm25("words", 5)] == ["abc123.1"]
    store.add_document(new_doc("/new.txt", ["new words"]))
    store.close()
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )


def test_migrated_chunks_get_embedding_keys(tmp_path: Path) -> None:
    (tmp_path / "idx").mkdir()
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    db.executescript(V1_SCHEMA)
    db.close()
    store = SQLiteStore.open(tmp_path / "idx")
    assert store.pending_embeddings() == [
        PendingEmbedding(
            embed_key("Old", (), "Old words."), embedding_input("Old", (), "Old words.")
        )
    ]
    store.close()


def test_wal_mode(tmp_path: Path) -> None:
    SQLiteStore.open(tmp_path / "idx", create=True).close()
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_bm25_weighs_rare_terms_above_common_ones(store: Store) -> None:
    common = [f"Pain report number {n} mentions pain." for n in range(5)]
    store.add_document(new_doc("/a.txt", [*common, "Zoster was seen once."]))
    hits = store.search_bm25("zoster pain", 10)
    assert hits[0].chunk.text == "Zoster was seen once."  # IDF: the rare term counts most
    assert len(hits) == 6
