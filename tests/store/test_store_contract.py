"""Contract tests every `Store` implementation must pass (SQLite and PostgreSQL)."""

from __future__ import annotations

import dataclasses
import multiprocessing
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from helpers.audit import append_worker
from helpers.raw_sql import back_to_one_search_table, raw_execute
from quoteproof.errors import IndexNotFoundError, StoreError
from quoteproof.ingest.pipeline import ingest_file
from quoteproof.model import (
    DEFAULT_COLLECTION,
    CharRun,
    Layout,
    SourceTable,
    TableRow,
    sha256_text,
)
from quoteproof.store.audit_chain import (
    AUDIT_HEAD_SETTING,
    GENESIS_HASH,
    AuditHead,
    audit_hash,
    entry_signature,
    head_signature,
    parse_head,
)
from quoteproof.store.base import (
    SCHEMA_VERSION,
    ApiKey,
    DocumentSummary,
    NewChunk,
    NewDocument,
    NewEntry,
    Store,
    StoredDocument,
    check_collection_name,
)
from quoteproof.store.open import is_postgres_url, open_store
from quoteproof.store.refs import doc_id_candidates
from quoteproof.store.sqlite import DB_FILENAME, SQLiteStore
from quoteproof.store.vectors import (
    TRUNCATED_VECTORS_SETTING,
    EmbeddingSpace,
    PendingEmbedding,
    embed_key,
    embedding_input,
)


@pytest.fixture
def store(location: str) -> Iterator[Store]:
    opened = open_store(location, create=True)
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


TABLES = (
    SourceTable((TableRow(((0, 7),), header=True), TableRow(((8, 11), (14, 20))))),
    SourceTable((TableRow(((30, 30), (31, 40))),)),
)


def test_tables_are_stored_with_their_document_version(store: Store) -> None:
    doc = store.add_document(replace(new_doc("/t.txt", ["Aspirin thins blood."]), tables=TABLES))
    plain = store.add_document(new_doc("/p.txt", ["Take with water."]))
    assert store.get_tables(doc.doc_id, doc.version) == TABLES
    assert store.get_tables(plain.doc_id, plain.version) == ()
    assert store.get_tables("nope", 1) == ()


def test_list_documents_lists_current_versions_by_path(store: Store) -> None:
    assert store.list_documents() == [] and store.count_documents() == 0
    b1 = store.add_document(new_doc("/b.csv", ["x,y", "1,2"], title="b"))
    a1 = store.add_document(new_doc("/a.txt", ["Aspirin."], title="A"))
    b2 = store.add_document(new_doc("/b.csv", ["x,y", "1,3"], title="b"))
    upper = store.add_document(new_doc("/Z.txt", ["Zinc."], title="Z"))
    assert b1.version == 1 and b2.version == 2
    assert store.list_documents() == [
        DocumentSummary(d.doc_id, d.version, d.source_path, d.title, d.format, d.sha256)
        for d in (upper, a1, b2)  # code-point order: "/Z" < "/a" < "/b"
    ]
    assert store.count_documents() == 3  # the current versions only


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


def test_a_chunk_with_several_passages_is_scored_by_its_best(store: Store) -> None:
    """A chunk longer than the model reads is stored as one vector per passage: dense
    search finds it by any of them, scores it by the best, and lists it once."""
    store.set_embedding_space(EmbeddingSpace("toy", 3))
    store.add_document(new_doc("/a.txt", ["long alpha then gamma", "short beta"], "T"))
    pending = {p.text.split()[-1]: p for p in store.pending_embeddings()}
    assert set(pending) == {"gamma", "beta"}
    long, short = pending["gamma"], pending["beta"]
    assert (long.title, long.section, long.body) == ("T", ("Sec",), "long alpha then gamma")
    rows = np.stack([AXES["alpha"], AXES["gamma"], AXES["beta"]])
    store.add_embeddings([long.key, short.key], rows, [2, 1])
    assert store.pending_embeddings() == [] and store.stats().embedded == 2
    for query, first in ((unit(0, 0, 1), "long alpha then gamma"), (unit(1, 0.2, 0), None)):
        hits = store.search_dense(query, 10)
        assert len(hits) == 2  # one hit per chunk, not per passage
        assert hits[0].chunk.text == first or first is None
        scores = {h.chunk.text: h.score for h in hits}
        best = max(float(query @ AXES["alpha"]), float(query @ AXES["gamma"]))
        assert scores["long alpha then gamma"] == pytest.approx(best, abs=1e-5)
    assert [h.chunk.text for h in store.search_dense(unit(1, 0, 0), 1)] == ["long alpha then gamma"]
    # a key stored keeps its vectors
    store.add_embeddings([long.key], np.stack([AXES["beta"]] * 3), [3])
    assert store.search_dense(unit(0, 0, 1), 1)[0].score == pytest.approx(1.0, abs=1e-5)


def test_vectors_of_an_index_before_passages_are_marked_truncated(location: str) -> None:
    """An index of schema 6 held one vector per chunk, truncated to what the model
    reads: it opens and searches as before, and says so (a setting the retriever
    turns into a notice); an index without vectors, or a new one, is not marked."""
    store = open_store(location, create=True)
    store.set_embedding_space(EmbeddingSpace("toy", 3))
    store.add_document(new_doc("/a.txt", ["one alpha", "two beta"]))
    embed_pending(store, AXES)
    store.close()
    raw_execute(location, "UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    if is_postgres_url(location):  # schema 6's embeddings: one row per key
        raw_execute(location, "ALTER TABLE embeddings DROP CONSTRAINT embeddings_pkey")
        raw_execute(location, "ALTER TABLE embeddings DROP COLUMN part")
        raw_execute(location, "ALTER TABLE embeddings ADD PRIMARY KEY (key)")
    store = open_store(location)
    try:
        assert store.get_setting(TRUNCATED_VECTORS_SETTING) == "1"
        assert [h.chunk.text for h in store.search_dense(unit(1, 0, 0), 1)] == ["one alpha"]
        store.add_document(new_doc("/b.txt", ["three gamma"]))
        pending = store.pending_embeddings()
        store.add_embeddings([p.key for p in pending], np.stack([AXES["gamma"]] * 2), [2])
        assert [h.chunk.text for h in store.search_dense(unit(0, 0, 1), 1)] == ["three gamma"]
    finally:
        store.close()


def test_a_new_index_has_no_truncated_vectors(store: Store) -> None:
    store.set_embedding_space(EmbeddingSpace("toy", 3))
    store.add_document(new_doc("/a.txt", ["one alpha"]))
    embed_pending(store, AXES)
    assert store.get_setting(TRUNCATED_VECTORS_SETTING) is None


def test_passage_counts_must_add_up(store: Store) -> None:
    store.set_embedding_space(EmbeddingSpace("toy", 3))
    store.add_document(new_doc("/a.txt", ["one alpha"]))
    key = store.pending_embeddings()[0].key
    with pytest.raises(StoreError, match="expected 2 vectors"):
        store.add_embeddings([key], unit(1, 0, 0).reshape(1, 3), [2])
    with pytest.raises(StoreError, match="at least 1"):
        store.add_embeddings([key], np.zeros((0, 3), dtype=np.float32), [0])
    assert store.stats().embedded == 0


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
    store.delete_setting("refusal_threshold")
    store.delete_setting("never_set")
    assert store.get_setting("refusal_threshold") is None


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
    with pytest.raises(StoreError, match="UNIQUE constraint failed") as caught:
        store.add_document(new_doc("/dup.txt", ["one", "two"]))
    assert isinstance(caught.value.__cause__, sqlite3.IntegrityError)
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


# --- collections -------------------------------------------------------------------


def in_collection(new: NewDocument, collection: str) -> NewDocument:
    return dataclasses.replace(new, collection=collection)


def test_documents_keep_their_collection(store: Store) -> None:
    plain = store.add_document(new_doc("/a.txt", ["Aspirin."]))
    hr = store.add_document(in_collection(new_doc("/hr.txt", ["Leave policy."]), "hr"))
    eng = store.add_document(in_collection(new_doc("/eng.txt", ["Deploy policy."]), "eng.v2"))
    assert (plain.collection, hr.collection, eng.collection) == (DEFAULT_COLLECTION, "hr", "eng.v2")
    assert store.get_document(hr.doc_id) == hr
    assert store.get_document(eng.doc_id, 1) == eng

    def listed(*names: str) -> list[str]:
        paths = [d.source_path for d in store.list_documents(names)]
        assert store.count_documents(iter(names)) == len(paths)  # counts what it lists
        return paths

    assert [d.collection for d in store.list_documents()] == [DEFAULT_COLLECTION, "eng.v2", "hr"]
    assert listed("hr") == ["/hr.txt"]
    assert listed("hr", "eng.v2") == ["/eng.txt", "/hr.txt"]
    assert listed("nothing") == [] and listed() == []
    assert [d.source_path for d in store.list_documents(iter(["hr"]))] == ["/hr.txt"]
    assert store.list_documents(["hr"]) == [
        DocumentSummary(hr.doc_id, 1, "/hr.txt", "Doc", "text", hr.sha256, "hr")
    ]
    hr2 = store.add_document(in_collection(new_doc("/hr.txt", ["Leave policy v2."]), "hr"))
    assert [(d.version, d.collection) for d in store.list_documents(["hr"])] == [(2, "hr")]
    assert hr2.collection == "hr"


def test_invalid_collection_names_are_refused(store: Store) -> None:
    for name in ("", "a b", "x" * 65, "ü", "a/b", "a\n"):
        with pytest.raises(ValueError, match="collection name"):
            store.add_document(in_collection(new_doc("/a.txt", ["x"]), name))
    assert store.stats().versions == 0
    assert check_collection_name("A-z_0.9") == "A-z_0.9"
    assert check_collection_name("x" * 64) == "x" * 64
    with pytest.raises(ValueError, match="collection name"):
        check_collection_name("tab\t")


def collection_corpus(store: Store) -> dict[str, str]:
    """Store documents about pain in three collections; return doc id -> collection."""
    owners = {}
    for name, collection, paragraphs in [
        ("/a.txt", "default", ["Pain in the knee.", "Pain and swelling of the knee."]),
        ("/b.txt", "hr", ["Back pain at the desk.", "Desk height and pain."]),
        ("/c.txt", "hr", ["Leave when in pain."]),
        ("/d.txt", "eng", ["Pain of deploying on Friday.", "Knee surgery costs."]),
    ]:
        doc = store.add_document(in_collection(new_doc(name, paragraphs), collection))
        owners[doc.doc_id] = collection
    return owners


def test_bm25_filters_by_collection_without_changing_scores(store: Store) -> None:
    owners = collection_corpus(store)
    everything = store.search_bm25("knee pain", 20)
    assert len(everything) == 7  # every chunk names pain or knee
    for wanted in (["hr"], ["eng", "default"], ["default"], ["eng"]):
        hits = store.search_bm25("knee pain", 20, wanted)
        expected = [h for h in everything if owners[h.chunk.doc_id] in wanted]
        assert [h.chunk for h in hits] == [h.chunk for h in expected]
        assert [h.score for h in hits] == pytest.approx([h.score for h in expected])
        assert [h.rank for h in hits] == list(range(1, len(expected) + 1))
    top = store.search_bm25("knee pain", 1, ["hr"])
    assert len(top) == 1 and owners[top[0].chunk.doc_id] == "hr"
    assert store.search_bm25("knee pain", 20, []) == []
    assert store.search_bm25("knee pain", 20, ["nothing"]) == []
    assert store.search_bm25("knee pain", 20, iter(["eng"])) != []


def test_dense_search_filters_by_collection(store: Store) -> None:
    store.set_embedding_space(EmbeddingSpace("toy", 3))
    a = store.add_document(new_doc("/a.txt", ["one alpha", "two beta"], "T"))
    b = store.add_document(in_collection(new_doc("/b.txt", ["three gamma", "four beta"]), "hr"))
    embed_pending(store, AXES)
    query = unit(1, 0.1, 0)
    everything = store.search_dense(query, 10)
    assert len(everything) == 4
    for wanted, doc_ids in ((["hr"], {b.doc_id}), (["default"], {a.doc_id})):
        hits = store.search_dense(query, 10, wanted)
        expected = [h for h in everything if h.chunk.doc_id in doc_ids]
        assert [h.chunk for h in hits] == [h.chunk for h in expected]
        assert [h.score for h in hits] == pytest.approx([h.score for h in expected], abs=1e-5)
        assert [h.rank for h in hits] == [1, 2]
    (best_hr,) = store.search_dense(query, 1, ["hr"])
    assert best_hr.chunk.text == "four beta"
    assert [h.chunk.text for h in store.search_dense(query, 10, ["hr", "default"])] == [
        h.chunk.text for h in everything
    ]
    assert store.search_dense(query, 10, []) == []
    assert store.search_dense(query, 10, ["nothing"]) == []


# --- retiring documents ------------------------------------------------------------


def test_retired_documents_leave_search_and_listing_but_stay_readable(store: Store) -> None:
    store.set_embedding_space(EmbeddingSpace("toy", 3))
    v1 = store.add_document(new_doc("/a.txt", ["Warfarin alpha"], "T"))
    v2 = store.add_document(new_doc("/a.txt", ["Warfarin and aspirin alpha", "more beta"], "T"))
    other = store.add_document(new_doc("/b.txt", ["Heparin gamma"], "T"))
    embed_pending(store, AXES)
    old_refs = [c.ref for v in (1, 2) for c in store.chunks_of(v1.doc_id, v)]
    assert store.retire_document(v1.doc_id) is True
    assert store.retire_document(v1.doc_id) is False
    assert store.retire_document("nosuchid") is False

    assert store.search_bm25("warfarin", 10) == []
    assert store.search_bm25("warfarin", 10, ["default"]) == []
    assert {h.chunk.doc_id for h in store.search_dense(unit(1, 0, 0), 10)} == {other.doc_id}
    assert [d.doc_id for d in store.list_documents()] == [other.doc_id]
    assert store.count_documents() == 1 and store.count_documents(["default"]) == 1
    assert store.get_document(v1.doc_id, 1) == v1
    assert store.get_document(v1.doc_id) == v2
    assert all(store.get_chunk(ref) is not None for ref in old_refs)
    assert store.current_version("/a.txt") is None
    assert store.pending_embeddings() == []
    stats = store.stats()
    assert (stats.documents, stats.versions, stats.chunks, stats.embedded) == (1, 3, 1, 1)

    # Ingesting the path again (same text as before) makes a new current version.
    v3 = store.add_document(new_doc("/a.txt", ["Warfarin and aspirin alpha", "more beta"], "T"))
    assert (v3.doc_id, v3.version, v3.sha256) == (v1.doc_id, 3, v2.sha256)
    new_refs = [c.ref for c in store.chunks_of(v1.doc_id, 3)]
    assert len(new_refs) == 2 and not set(new_refs) & set(old_refs)
    current = store.current_version("/a.txt")
    assert current is not None and current.version == 3
    assert [h.chunk.ref for h in store.search_bm25("warfarin", 10)] == [new_refs[0]]
    assert store.pending_embeddings() == []  # the unchanged chunks keep their vectors
    assert {h.chunk.doc_version for h in store.search_dense(unit(1, 0, 0), 10)} == {1, 3}
    assert [(d.doc_id, d.version) for d in store.list_documents()] == [
        (v1.doc_id, 3),
        (other.doc_id, 1),
    ]
    assert store.stats().documents == 2 and store.stats().versions == 4
    assert store.add_document(new_doc("/a.txt", ["Warfarin and aspirin alpha", "more beta"])) == v3


def test_retired_single_version_comes_back_as_version_2(store: Store) -> None:
    v1 = store.add_document(in_collection(new_doc("/a.txt", ["Gout toe."]), "hr"))
    assert store.retire_document(v1.doc_id)
    assert store.search_bm25("gout", 5, ["hr"]) == []
    v2 = store.add_document(in_collection(new_doc("/a.txt", ["Gout toe."]), "eng"))
    assert (v2.version, v2.collection) == (2, "eng")
    assert [h.chunk.ref for h in store.search_bm25("gout", 5)] == [f"{v1.doc_id}.2.1"]
    assert store.search_bm25("gout", 5, ["hr"]) == []
    assert store.get_document(v1.doc_id, 1) == v1


def test_a_retired_file_ingested_again_is_labelled_with_its_stored_version(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "guide.md"
    path.write_text("# Guide\n\nAspirin thins the blood.\n")
    first = ingest_file(store, path)
    assert (first.status, first.version) == ("added", 1)
    assert first.doc_id is not None and store.retire_document(first.doc_id)
    path.write_text("# Guide\n\nAspirin thins the blood. Take it with water.\n")
    again = ingest_file(store, path)
    assert (again.status, again.doc_id, again.version) == ("updated", first.doc_id, 2)
    assert store.latest_version(str(path)) == 2
    labels = [chunk.label for chunk in store.chunks_of(first.doc_id, 2)]
    assert labels and all(label.startswith("Guide v2") for label in labels)
    assert all(" v" not in chunk.label for chunk in store.chunks_of(first.doc_id, 1))


# --- the version rule: decided once, in the write transaction ----------------------


def labelled_doc(path: str, text: str, made: list[tuple[int, list[str]]]) -> NewDocument:
    """A one-chunk document whose chunk the store makes once it has decided the
    version (its label names the version); each call is recorded in `made`."""

    def make(version: int, same_title_paths: list[str]) -> tuple[NewChunk, ...]:
        made.append((version, same_title_paths))
        return (NewChunk(0, len(text), (), f"Doc v{version}"),)

    return NewDocument(path, "Doc", "text", text, sha256_text(text), make)


def test_store_document_decides_the_version_and_says_what_it_did(store: Store) -> None:
    made: list[tuple[int, list[str]]] = []
    first = store.store_document(labelled_doc("/a.txt", "Gout one.", made))
    doc_id = first.document.doc_id
    assert (first.outcome, first.document.version) == ("added", 1)
    assert store.store_document(labelled_doc("/a.txt", "Gout one.", made)) == StoredDocument(
        first.document, "unchanged"
    )
    changed = store.store_document(labelled_doc("/a.txt", "Gout two.", made))
    assert (changed.outcome, changed.document.doc_id, changed.document.version) == (
        "updated",
        doc_id,
        2,
    )
    assert [h.chunk.ref for h in store.search_bm25("gout", 5)] == [f"{doc_id}.2.1"]
    assert store.retire_document(doc_id)
    back = store.store_document(labelled_doc("/a.txt", "Gout two.", made))  # retired text
    assert (back.outcome, back.document.version) == ("updated", 3)
    other = store.store_document(labelled_doc("/b.txt", "Gout three.", made))
    assert (other.outcome, other.document.version) == ("added", 1)
    assert other.document.doc_id != doc_id
    # The unchanged store made no chunks; each other one made them with its version.
    assert made == [(1, []), (2, ["/a.txt"]), (3, ["/a.txt"]), (1, ["/a.txt"])]
    assert [c.label for v in (1, 2, 3) for c in store.chunks_of(doc_id, v)] == [
        "Doc v1",
        "Doc v2",
        "Doc v3",
    ]
    assert store.stats().versions == 4


def test_labels_name_the_version_stored_when_another_writer_stored_one_meanwhile(
    tmp_path: Path,
) -> None:
    path = tmp_path / "guide.md"
    path.write_text("# Guide\n\nAspirin thins the blood.\n")
    store = SQLiteStore.open(tmp_path / "idx", create=True)
    other = SQLiteStore.open(tmp_path / "idx")
    try:
        assert ingest_file(store, path).version == 1
        meanwhile: list[int] = []

        def other_writer_first(statement: str) -> None:
            # Just before this ingest's write transaction begins, another process
            # stores a new version of the same file.
            if statement == "BEGIN IMMEDIATE" and not meanwhile:
                stored = other.add_document(new_doc(str(path), ["Aspirin thins it."], "Guide"))
                meanwhile.append(stored.version)

        store._db.set_trace_callback(other_writer_first)
        path.write_text("# Guide\n\nAspirin thins the blood. Take it with water.\n")
        result = ingest_file(store, path)
        store._db.set_trace_callback(None)
        assert meanwhile == [2]
        assert (result.status, result.version) == ("updated", 3)
        assert result.doc_id is not None
        labels = [chunk.label for chunk in store.chunks_of(result.doc_id, 3)]
        assert labels and all(label.startswith("Guide v3") for label in labels), labels
    finally:
        other.close()
        store.close()


# --- the audit log -----------------------------------------------------------------


def test_audit_log_appends_a_hash_chain(store: Store) -> None:
    assert store.audit_entries() == [] and store.get_audit_entry("e1") is None
    assert store.get_setting(AUDIT_HEAD_SETTING) is None
    first = store.append_audit(NewEntry("e1", "2026-01-01T10:00:00+00:00", None, (), '{"a": 1}'))
    second = store.append_audit(
        NewEntry("e2", "2026-01-01T10:00:01+00:00", "ann", ("hr", "Déjà"), '{"answer": "ü"}')
    )
    third = store.append_audit(
        NewEntry("e3", "2026-01-01T10:00:02+00:00", "bob", ("default",), "{}")
    )
    assert (first.seq, second.seq, third.seq) == (1, 2, 3)
    assert first.prev_hash == GENESIS_HASH
    assert second.prev_hash == first.hash and third.prev_hash == second.hash
    assert store.audit_entries() == [first, second, third]
    assert store.audit_entries(after_seq=1) == [second, third]
    assert store.audit_entries(after_seq=1, limit=1) == [second]
    assert store.audit_entries(after_seq=3) == []
    assert store.get_audit_entry("e2") == second
    assert second.collections == ("hr", "Déjà") and second.user == "ann"
    for entry in store.audit_entries():
        assert entry.hash == audit_hash(
            entry.prev_hash,
            entry.seq,
            entry.entry_id,
            entry.time,
            entry.user,
            entry.collections,
            entry.body,
        )
    assert store.get_setting(AUDIT_HEAD_SETTING) == f"3:{third.hash}"

    with pytest.raises(StoreError, match="e2"):
        store.append_audit(NewEntry("e2", "2026-01-01T10:00:03+00:00", None, (), "{}"))
    assert store.get_setting(AUDIT_HEAD_SETTING) == f"3:{third.hash}"
    fourth = store.append_audit(NewEntry("e4", "2026-01-01T10:00:04+00:00", None, (), "{}"))
    assert (fourth.seq, fourth.prev_hash) == (4, third.hash)


def test_audit_entries_and_head_are_signed_with_the_key(store: Store) -> None:
    key = b"k" * 32
    unsigned = store.append_audit(NewEntry("e1", "2026-01-01T10:00:00+00:00", None, (), "{}"))
    first = store.append_audit(
        NewEntry("e2", "2026-01-01T10:00:01+00:00", "ann", ("hr",), "{}"), key
    )
    second = store.append_audit(
        NewEntry("e3", "2026-01-01T10:00:02+00:00", None, (), '{"a": 1}'), key
    )
    assert unsigned.signature is None
    assert first.signature == entry_signature(key, first.hash)
    assert second.signature == entry_signature(key, second.hash) != first.signature
    assert store.audit_entries() == [unsigned, first, second]
    assert store.get_audit_entry("e3") == second
    head = store.get_setting(AUDIT_HEAD_SETTING)
    assert head is not None
    assert parse_head(head) == AuditHead(3, second.hash, head_signature(key, 3, second.hash))


def test_schema_5_index_gets_the_tables_table(tmp_path: Path) -> None:
    store = SQLiteStore.open(tmp_path / "idx", create=True)
    old = store.add_document(new_doc("/old.txt", ["Old words."]))
    store.close()
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    db.execute("DROP TABLE doc_tables")  # back to schema 5
    db.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    store = SQLiteStore.open(tmp_path / "idx")
    try:
        assert store.get_tables(old.doc_id, old.version) == ()
        new = store.add_document(replace(new_doc("/new.txt", ["New words."]), tables=TABLES))
        assert store.get_tables(new.doc_id, new.version) == TABLES
    finally:
        store.close()


def test_schema_7_search_is_migrated_to_statistics_per_collection(location: str) -> None:
    store = open_store(location, create=True)
    store.add_document(new_doc("/a.txt", ["Gout attacks the big toe.", "Rest helps gout."]))
    hr = store.add_document(replace(new_doc("/b.txt", ["Gout is rare."]), collection="hr"))
    hits = store.search_bm25("gout toe", 5)
    assert len(hits) == 3
    store.close()
    if is_postgres_url(location):  # back to one set of statistics for the whole index
        raw_execute(
            location,
            "CREATE TABLE bm25_stats (only_row BOOLEAN PRIMARY KEY DEFAULT true, "
            "chunks BIGINT NOT NULL, tokens BIGINT NOT NULL)",
        )
        raw_execute(
            location,
            "INSERT INTO bm25_stats SELECT true, count(*), sum(length(search_text)) "
            "FROM chunks WHERE is_current",
        )
        raw_execute(location, "DROP TABLE bm25_collection_stats")
        raw_execute(location, "UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    else:  # back to one full-text table for the whole index
        back_to_one_search_table(location, ("default", "hr"))
    store = open_store(location)
    try:
        migrated = store.search_bm25("gout toe", 5)
        assert [hit.chunk.ref for hit in migrated] == [hit.chunk.ref for hit in hits]
        assert [hit.score for hit in migrated] == pytest.approx([hit.score for hit in hits])
        assert [hit.chunk.ref for hit in store.search_bm25("gout", 5, ["hr"])] == [f"{hr.doc_id}.1"]
    finally:
        store.close()


def test_schema_4_audit_log_is_migrated_to_signatures(tmp_path: Path) -> None:
    store = SQLiteStore.open(tmp_path / "idx", create=True)
    old = store.append_audit(NewEntry("e1", "2026-01-01T10:00:00+00:00", None, (), "{}"))
    store.close()
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    db.execute("ALTER TABLE audit_log DROP COLUMN signature")  # back to schema 4
    db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    store = SQLiteStore.open(tmp_path / "idx")
    try:
        signed = store.append_audit(
            NewEntry("e2", "2026-01-01T10:00:01+00:00", None, (), "{}"), b"key"
        )
        assert store.audit_entries() == [old, signed] and old.signature is None
        assert signed.signature == entry_signature(b"key", signed.hash)
    finally:
        store.close()


@pytest.mark.parametrize(
    "statement",
    ["UPDATE audit_log SET body = 'forged'", "DELETE FROM audit_log WHERE seq = 1"],
    ids=["update", "delete"],
)
def test_audit_entries_cannot_be_changed_through_sql(
    location: str, store: Store, statement: str
) -> None:
    entry = store.append_audit(NewEntry("e1", "2026-01-01T10:00:00+00:00", "ann", ("hr",), "{}"))
    with pytest.raises(Exception, match="append-only"):
        raw_execute(location, statement)
    if is_postgres_url(location):
        with pytest.raises(Exception, match="append-only"):
            raw_execute(location, "TRUNCATE audit_log")
    assert store.audit_entries() == [entry]


def test_concurrent_appends_get_gapless_distinct_seq(location: str, tmp_path: Path) -> None:
    open_store(location, create=True).close()
    workers, per_worker = 4, 25
    ready = [tmp_path / f"ready-{n}" for n in range(workers)]
    go = tmp_path / "go"
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=spawn) as pool:
        futures = [
            pool.submit(append_worker, location, n, per_worker, str(ready[n]), str(go))
            for n in range(workers)
        ]
        deadline = time.monotonic() + 60
        while not all(r.exists() for r in ready) and time.monotonic() < deadline:
            time.sleep(0.01)
        go.touch()
        given = [future.result(timeout=120) for future in futures]
    total = workers * per_worker
    assert sorted(seq for seqs in given for seq in seqs) == list(range(1, total + 1))
    assert all(seqs == sorted(seqs) for seqs in given)
    store = open_store(location)
    try:
        entries = store.audit_entries()
        assert [e.seq for e in entries] == list(range(1, total + 1))
        assert len({e.entry_id for e in entries}) == total
        previous = GENESIS_HASH
        for entry in entries:
            assert entry.prev_hash == previous
            assert entry.hash == audit_hash(
                previous,
                entry.seq,
                entry.entry_id,
                entry.time,
                entry.user,
                entry.collections,
                entry.body,
            )
            previous = entry.hash
        assert store.get_setting(AUDIT_HEAD_SETTING) == f"{total}:{previous}"
    finally:
        store.close()


# --- API keys ----------------------------------------------------------------------


def test_api_keys_add_get_list_revoke(store: Store) -> None:
    assert store.list_api_keys() == [] and store.get_api_key("k1") is None
    first = ApiKey("k1", "ci", "a" * 64, ("default", "hr"), "2026-01-01T00:00:00+00:00")
    second = ApiKey("k0", "ann's laptop", "b" * 64, (), "2026-01-02T00:00:00+00:00")
    third = ApiKey("k2", "same second", "c" * 64, ("hr",), "2026-01-02T00:00:00+00:00")
    for key in (first, second, third):
        store.add_api_key(key)
    assert store.get_api_key("k1") == first
    assert store.list_api_keys() == [first, second, third]
    with pytest.raises(StoreError, match="k1"):
        store.add_api_key(dataclasses.replace(first, name="again"))
    assert store.revoke_api_key("k0") is True
    assert store.revoke_api_key("k0") is True
    assert store.revoke_api_key("missing") is False
    revoked = store.get_api_key("k0")
    assert revoked == dataclasses.replace(second, revoked=True)
    assert [k.revoked for k in store.list_api_keys()] == [False, True, False]


# --- migration of a schema-3 SQLite index ----------------------------------------

V3_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '3');
INSERT INTO meta VALUES ('setting:embedding_space', '{"model": "toy", "dimensions": 3}');
CREATE TABLE documents (doc_id TEXT NOT NULL, version INTEGER NOT NULL,
    source_path TEXT NOT NULL, title TEXT NOT NULL, format TEXT NOT NULL,
    text TEXT NOT NULL, sha256 TEXT NOT NULL, file_sha256 TEXT NOT NULL,
    ingested_at TEXT NOT NULL, is_current INTEGER NOT NULL, PRIMARY KEY (doc_id, version));
CREATE INDEX documents_by_path ON documents (source_path, version);
CREATE TABLE chunks (id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL,
    doc_version INTEGER NOT NULL, ordinal INTEGER NOT NULL, start INTEGER NOT NULL,
    end INTEGER NOT NULL, text TEXT NOT NULL, section TEXT NOT NULL, label TEXT NOT NULL,
    pages TEXT, language TEXT NOT NULL DEFAULT 'en', source_uri TEXT NOT NULL DEFAULT '',
    ocr INTEGER NOT NULL DEFAULT 0, embed_key TEXT NOT NULL DEFAULT '',
    FOREIGN KEY (doc_id, doc_version) REFERENCES documents (doc_id, version));
CREATE INDEX chunks_by_embed_key ON chunks (embed_key);
CREATE TABLE embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL);
CREATE INDEX documents_by_title ON documents (title);
CREATE TABLE layouts (doc_id TEXT NOT NULL, version INTEGER NOT NULL, pages TEXT NOT NULL,
    char_runs BLOB, PRIMARY KEY (doc_id, version));
CREATE TABLE originals (doc_id TEXT NOT NULL, version INTEGER NOT NULL, content BLOB NOT NULL,
    PRIMARY KEY (doc_id, version));
CREATE INDEX chunks_by_doc ON chunks (doc_id, doc_version, ordinal);
CREATE VIRTUAL TABLE chunks_fts USING fts5 (text, label, content='chunks',
    content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
INSERT INTO documents VALUES ('abc123', 1, '/old.txt', 'Old', 'text', 'Old words.',
    'x1', 'y1', '2026-01-01', 0);
INSERT INTO documents VALUES ('abc123', 2, '/old.txt', 'Old', 'text', 'Old alpha words.',
    'x2', 'y2', '2026-01-02', 1);
INSERT INTO chunks VALUES (1, 'abc123.1', 'abc123', 1, 1, 0, 10, 'Old words.', '[]',
    'Old › ¶1', NULL, 'en', '', 0, 'k1');
INSERT INTO chunks VALUES (2, 'abc123.2.1', 'abc123', 2, 1, 0, 16, 'Old alpha words.', '[]',
    'Old v2 › ¶1', NULL, 'en', '', 0, 'k2');
INSERT INTO chunks_fts (rowid, text, label) VALUES (2, 'Old alpha words.', 'Old v2 › ¶1');
"""


def test_schema_3_index_is_migrated_into_the_default_collection(tmp_path: Path) -> None:
    (tmp_path / "idx").mkdir()
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    db.executescript(V3_SCHEMA)
    db.execute("INSERT INTO embeddings VALUES ('k2', ?)", (unit(1, 0, 0).astype("<f4").tobytes(),))
    db.commit()
    db.close()
    store = SQLiteStore.open(tmp_path / "idx")
    try:
        (summary,) = store.list_documents()
        assert (summary.doc_id, summary.version, summary.collection) == ("abc123", 2, "default")
        assert store.list_documents(["default"]) == [summary]
        assert store.list_documents(["hr"]) == []
        old = store.get_document("abc123", 1)
        assert old is not None and old.collection == DEFAULT_COLLECTION
        assert [h.chunk.ref for h in store.search_bm25("words", 5, ["default"])] == ["abc123.2.1"]
        assert store.search_bm25("words", 5, ["hr"]) == []
        assert [h.chunk.ref for h in store.search_dense(unit(1, 0, 0), 5, ["default"])] == [
            "abc123.2.1"
        ]
        entry = store.append_audit(
            NewEntry("e1", "2026-01-01T00:00:00+00:00", None, ("default",), "{}")
        )
        assert entry.seq == 1
        signed = store.append_audit(
            NewEntry("e2", "2026-01-01T00:00:01+00:00", None, (), "{}"), b"key"
        )
        assert store.audit_entries() == [entry, signed] and signed.signature is not None
        store.add_api_key(ApiKey("k", "n", "s" * 64, ("default",), "2026-01-01T00:00:00+00:00"))
        assert store.retire_document("abc123")
        v3 = store.add_document(new_doc("/old.txt", ["Old alpha words."]))
        assert (v3.doc_id, v3.version) == ("abc123", 3)
    finally:
        store.close()
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        raw_execute(str(tmp_path / "idx"), "DELETE FROM audit_log")
    db = sqlite3.connect(tmp_path / "idx" / DB_FILENAME)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    db.close()
