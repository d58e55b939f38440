"""PostgreSQL-specific behaviour of `PostgresStore` (the shared contract is in
test_store_contract.py): opening, errors without passwords, HNSW search, the API."""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from quoteproof import Index
from quoteproof.errors import IndexNotFoundError, StoreError
from quoteproof.model import sha256_text
from quoteproof.retrieval.retriever import RetrievalSettings
from quoteproof.store.base import SCHEMA_VERSION, NewChunk, NewDocument, NewEntry
from quoteproof.store.vectors import EmbeddingSpace, PendingEmbedding, embedding_input

psycopg = pytest.importorskip("psycopg", reason="PostgreSQL tests need psycopg")
pytest.importorskip("pgvector", reason="PostgreSQL tests need pgvector")

from quoteproof.store.postgres import PostgresStore  # noqa: E402
from quoteproof.store.postgres_connection import redact_url, scrub  # noqa: E402


@pytest.fixture
def store(pg_database: str) -> Iterator[PostgresStore]:
    opened = PostgresStore.open(pg_database, create=True)
    yield opened
    opened.close()


def paragraphs_doc(path: str, paragraphs: list[str], title: str = "T") -> NewDocument:
    text = "\n\n".join(paragraphs)
    chunks, offset = [], 0
    for paragraph in paragraphs:
        chunks.append(NewChunk(offset, offset + len(paragraph), (), paragraph))
        offset += len(paragraph) + 2
    return NewDocument(path, title, "text", text, sha256_text(text), tuple(chunks))


def test_missing_index_without_create(pg_database: str) -> None:
    with pytest.raises(IndexNotFoundError, match="no index at postgresql://"):
        PostgresStore.open(pg_database)
    PostgresStore.open(pg_database, create=True).close()
    PostgresStore.open(pg_database).close()


def test_newer_schema_is_refused(pg_database: str) -> None:
    PostgresStore.open(pg_database, create=True).close()
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="newer"):
        PostgresStore.open(pg_database)


def test_foreign_meta_table_is_not_an_index(pg_database: str) -> None:
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    with pytest.raises(StoreError, match="not a quoteproof index"):
        PostgresStore.open(pg_database, create=True)


def test_unreachable_server_error_names_no_password() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://reader:s3cret-pw@127.0.0.1:{port}/quoteproof?connect_timeout=3"
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL") as caught:
        Index.open(url)
    message = str(caught.value)
    assert "s3cret-pw" not in message and "reader:***@127.0.0.1" in message
    assert "\n" not in message


def test_passwords_are_masked() -> None:
    assert redact_url("postgresql://u:pw@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact_url("postgres://h/db?sslmode=require&password=pw") == (
        "postgres://h/db?sslmode=require&password=***"
    )
    assert redact_url("postgresql://postgres:@/postgres?host=/tmp/x") == (
        "postgresql://postgres:@/postgres?host=/tmp/x"
    )
    assert scrub("auth failed: p@ss\n  for user", "postgresql://u:p%40ss@h/db") == (
        "auth failed: *** for user"
    )


def test_location_has_no_password(pg_database: str) -> None:
    with_password = pg_database.replace("postgres:@", "postgres:unused-pw@")
    store = PostgresStore.open(with_password, create=True)  # the test server trusts
    try:
        assert "unused-pw" not in store.location and "postgres:***@" in store.location
    finally:
        store.close()


def test_text_with_nul_is_refused_cleanly(store: PostgresStore) -> None:
    with pytest.raises(StoreError, match="NUL"):
        store.add_document(paragraphs_doc("/nul.txt", ["a\x00b"]))
    assert store.stats().versions == 0


def test_a_lost_connection_is_a_store_error(store: PostgresStore, pg_database: str) -> None:
    store.add_document(paragraphs_doc("/a.txt", ["Aspirin thins blood."]))
    with psycopg.connect(pg_database, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    for call in (store.list_documents, lambda: store.add_document(paragraphs_doc("/b", ["B."]))):
        with pytest.raises(StoreError, match=r"PostgreSQL server (ended|was lost)") as e:
            call()
        assert "\n" not in str(e.value) and str(e.value).startswith("index postgresql://")
        assert isinstance(e.value.__cause__, psycopg.Error)


def unit_rows(rng: np.random.Generator, count: int, dimensions: int) -> np.ndarray:
    rows = rng.normal(size=(count, dimensions)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("force_index", [False, True], ids=["planner", "hnsw"])
def test_dense_search_returns_limit_hits_in_cosine_order(
    store: PostgresStore, force_index: bool
) -> None:
    rng = np.random.default_rng(7)
    store.set_embedding_space(EmbeddingSpace("toy", 8))
    store.add_document(paragraphs_doc("/many.txt", [f"passage {i}" for i in range(300)]))
    pending = store.pending_embeddings()
    vectors = unit_rows(rng, len(pending), 8)
    store.add_embeddings([p.key for p in pending], vectors)
    by_input = {p.text: v for p, v in zip(pending, vectors, strict=True)}
    if force_index:  # small tables are scanned; make the planner take the HNSW index
        store._db.execute("ANALYZE")
        store._db.execute("SET enable_seqscan = off")
        store._db.execute("SET enable_sort = off")
        plan = store._db.execute(
            "EXPLAIN SELECT key FROM embeddings ORDER BY vector <=> %s LIMIT 100", (vectors[0],)
        ).fetchall()
        assert "embeddings_hnsw" in str(plan)
    for query in unit_rows(rng, 5, 8):
        hits = store.search_dense(query, 100)  # ef_search 200 < 300 vectors
        assert [h.rank for h in hits] == list(range(1, 101))
        expected = sorted((float(v @ query) for v in vectors), reverse=True)[:100]
        assert [h.score for h in hits] == pytest.approx(expected, abs=1e-5)
        for hit in hits[:10]:
            vector = by_input[embedding_input("T", (), hit.chunk.text)]
            assert hit.score == pytest.approx(float(vector @ query), abs=1e-5)
    assert len(store.search_dense(unit_rows(rng, 1, 8)[0], 1000)) == 300


def _replace_200_by_5(store: PostgresStore, rng: np.random.Generator) -> list[PendingEmbedding]:
    """Store 200 chunks with random vectors, replace them by a version of 5 chunks and
    return what those 5 lack a vector for."""
    store.set_embedding_space(EmbeddingSpace("toy", 8))
    store.add_document(paragraphs_doc("/a.txt", [f"old {i}" for i in range(200)]))
    pending = store.pending_embeddings()
    store.add_embeddings([p.key for p in pending], unit_rows(rng, len(pending), 8))
    store.add_document(paragraphs_doc("/a.txt", [f"new {i}" for i in range(5)]))
    return store.pending_embeddings()


def test_dense_search_falls_back_to_exact_when_retired_vectors_crowd(
    store: PostgresStore,
) -> None:
    rng = np.random.default_rng(3)
    pending = _replace_200_by_5(store, rng)
    far = -np.ones((len(pending), 8), dtype=np.float32) / np.sqrt(8)
    store.add_embeddings([p.key for p in pending], far)
    store._db.execute("ANALYZE")
    store._db.execute("SET enable_seqscan = off")  # the index's 40 candidates are all retired
    hits = store.search_dense(np.ones(8, dtype=np.float32) / np.sqrt(8), 10)
    assert sorted(h.chunk.text for h in hits) == [f"new {i}" for i in range(5)]
    assert all(h.score == pytest.approx(-1.0, abs=1e-5) for h in hits)


def test_the_exact_fallback_scores_each_chunk_by_its_best_passage(store: PostgresStore) -> None:
    rng = np.random.default_rng(4)
    pending = _replace_200_by_5(store, rng)
    far = -np.ones(8, dtype=np.float32) / np.sqrt(8)
    nearer = -np.array([1, 1, 1, 1, 1, 1, 0, 0], dtype=np.float32) / np.sqrt(6)  # cosine -0.87
    store.add_embeddings(
        [p.key for p in pending], np.stack([far, nearer] * len(pending)), [2] * len(pending)
    )
    store._db.execute("ANALYZE")
    store._db.execute("SET enable_seqscan = off")  # the index's candidates are all retired
    query = np.ones(8, dtype=np.float32) / np.sqrt(8)
    hits = store.search_dense(query, 10)
    assert sorted(h.chunk.text for h in hits) == [f"new {i}" for i in range(5)]  # each once
    assert all(h.score == pytest.approx(float(nearer @ query), abs=1e-5) for h in hits)


def test_index_api_ingests_and_searches(pg_database: str, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "gout.md").write_text("# Gout\n\nGout attacks often start in the big toe.\n")
    (folder / "anaemia.txt").write_text("Anaemia\n\nIron deficiency is a common cause.\n")
    with Index.open(pg_database, create=True) as index:
        results = index.ingest([folder])
        assert sorted(r.status for r in results) == ["added", "added"]
        hits = index.search("what causes anaemia? iron", top_k=3)
        assert hits and "Iron deficiency" in hits[0].chunk.text
        assert "big toe" in index.search("gout toe", top_k=1)[0].chunk.text
        assert [r.status for r in index.ingest([folder])] == ["unchanged", "unchanged"]
        assert index.store.stats().documents == 2
    with Index.open(pg_database) as reopened:
        assert reopened.search("gout", top_k=1)


def test_cli_ingest_and_batch_search_on_postgres(pg_database: str, corpus: Path) -> None:
    from test_cli import run

    ingested = run("ingest", str(corpus), "--index", pg_database)
    assert ingested.returncode == 0, ingested.stderr
    assert "5 with vectors" in " ".join(ingested.stderr.split())
    assert "postgresql://" in ingested.stderr
    queries = corpus.parent / "q.jsonl"
    queries.write_text(
        '{"id": "p", "text": "hypertension increases chance of a cerebrovascular accident"}\n'
        '{"id": "d", "text": "remdesivir dose"}\n'
    )
    for retriever in ("bm25", "dense", "hybrid"):
        with Index.open(pg_database, retrieval=RetrievalSettings(retriever=retriever)) as index:
            hits = index.search("remdesivir dose", top_k=2)
            assert hits[0].chunk.source_path.endswith("dosing.txt"), retriever
    result = run("search", "--queries", str(queries), "--top-k", "2", "--index", pg_database)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["p", "d"]
    assert lines[0]["hits"][0]["source_path"].endswith("pressure.html")  # dense found it
    assert lines[1]["hits"][0]["source_path"].endswith("dosing.txt")


def test_bm25_statistics_follow_the_current_versions(store: PostgresStore) -> None:
    store.add_document(paragraphs_doc("/a.txt", ["Gout attacks start in the big toe."]))
    store.add_document(paragraphs_doc("/b.txt", ["Anaemia has many causes.", "Iron helps."]))
    store.add_document(paragraphs_doc("/a.txt", ["Gout is a form of arthritis."]))  # retires v1
    assert collection_statistics(store)["default"][0] == store.stats().chunks == 3


def collection_statistics(store: PostgresStore) -> dict[str, tuple[int, int]]:
    """The BM25 statistics per collection (chunks, tokens), checked against a count of
    the current chunks."""
    recorded = {
        row["collection"]: (row["chunks"], row["tokens"])
        for row in store._db.execute(
            "SELECT collection, chunks, tokens FROM bm25_collection_stats WHERE chunks > 0"
        ).fetchall()
    }
    counted = {
        row["collection"]: (row["chunks"], row["tokens"])
        for row in store._db.execute(
            "SELECT collection, count(*) AS chunks, sum(length(search_text)) AS tokens "
            "FROM chunks WHERE is_current GROUP BY collection"
        ).fetchall()
    }
    assert recorded == counted
    return recorded


def test_dense_search_with_a_collection_falls_back_to_exact_when_others_crowd(
    store: PostgresStore,
) -> None:
    rng = np.random.default_rng(5)
    store.set_embedding_space(EmbeddingSpace("toy", 8))
    store.add_document(paragraphs_doc("/crowd.txt", [f"crowd {i}" for i in range(200)]))
    store.add_document(
        dataclasses.replace(paragraphs_doc("/few.txt", [f"few {i}" for i in range(5)]), **HR)
    )
    pending = store.pending_embeddings()
    vectors = np.stack(
        [
            -np.ones(8, dtype=np.float32) / np.sqrt(8)
            if "few" in p.text
            else unit_rows(rng, 1, 8)[0]
            for p in pending
        ]
    )
    store.add_embeddings([p.key for p in pending], vectors)
    store._db.execute("ANALYZE")
    store._db.execute("SET enable_seqscan = off")  # the index's candidates are all "crowd"
    query = np.ones(8, dtype=np.float32) / np.sqrt(8)
    hits = store.search_dense(query, 10, ["hr"])
    assert sorted(h.chunk.text for h in hits) == [f"few {i}" for i in range(5)]
    assert all(h.score == pytest.approx(-1.0, abs=1e-5) for h in hits)
    assert all(h.chunk.source_path == "/few.txt" for h in store.search_dense(query, 3, ["hr"]))
    assert len(store.search_dense(query, 10, ["default"])) == 10


@pytest.mark.parametrize(
    ("crowd", "nearest", "exact_before_0_8"),
    [(1200, 0, 1), (1200, 12, 1), (300, 12, 0)],
    ids=["none-first", "12-first", "widened"],
)
def test_a_crowded_collection_gets_its_exact_top_10(
    store: PostgresStore,
    monkeypatch: pytest.MonkeyPatch,
    crowd: int,
    nearest: int,
    exact_before_0_8: int,
) -> None:
    """`crowd` chunks of another collection are nearer than all but the `nearest` few
    of the collection's 30. Its search widens ef_search by the share of chunks it holds
    (30/330: 880, above the index's 330 rows; 30/1230: 1,000, pgvector's most). When
    fewer than the 40 passages fetched qualify among those candidates, pgvector 0.8 or
    later scans on to the collection's own (no exact scan), and earlier ones stop, so
    the store scans exactly (even when 10 chunks qualified). The result is the exact
    top 10 either way."""
    rng = np.random.default_rng(8)
    query = np.ones(8, dtype=np.float32) / np.sqrt(8)
    store.set_embedding_space(EmbeddingSpace("toy", 8))
    store.add_document(paragraphs_doc("/crowd.txt", [f"crowd {i}" for i in range(crowd)]))
    store.add_document(
        dataclasses.replace(paragraphs_doc("/hr.txt", [f"hr {i}" for i in range(30)]), **HR)
    )
    pending = store.pending_embeddings()
    near = query + rng.normal(size=(len(pending), 8)).astype(np.float32) * 0.1  # cosine > 0.9
    first = {f"hr {i}" for i in range(nearest)}
    vectors = np.stack(
        [
            query + (near[i] - query) * 0.3  # nearer than any of the crowd
            if p.text.split("\n")[-1] in first
            else near[i]
            if "crowd" in p.text
            else unit_rows(rng, 1, 8)[0]
            for i, p in enumerate(pending)
        ]
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.add_embeddings([p.key for p in pending], vectors)
    scores = {p.text: float(v @ query) for p, v in zip(pending, vectors, strict=True)}
    store._db.execute("ANALYZE")
    store._db.execute("SET enable_seqscan = off")  # the planner takes the HNSW index
    store._db.execute("SET enable_sort = off")  # (not the collection's rows, sorted)
    exact_scans = []
    scan = store._exact_dense
    monkeypatch.setattr(store, "_exact_dense", lambda *args: exact_scans.append(1) or scan(*args))
    hits = store.search_dense(query, 10, ["hr"])
    expected = sorted((t for t in scores if "hr" in t), key=lambda t: -scores[t])[:10]
    assert [embedding_input("T", (), h.chunk.text) for h in hits] == expected
    assert [h.score for h in hits] == pytest.approx([scores[t] for t in expected], abs=1e-5)
    assert len(exact_scans) == (0 if store.iterative_scan else exact_before_0_8)


HR = {"collection": "hr"}


def test_bm25_statistics_follow_retirement(store: PostgresStore) -> None:
    a = store.add_document(paragraphs_doc("/a.txt", ["Gout attacks start in the big toe."]))
    store.add_document(
        dataclasses.replace(paragraphs_doc("/b.txt", ["Anaemia has causes.", "Iron."]), **HR)
    )
    store.retire_document(a.doc_id)
    assert {name: chunks for name, (chunks, _) in collection_statistics(store).items()} == {"hr": 2}
    store.add_document(paragraphs_doc("/a.txt", ["Gout attacks start in the big toe."]))
    assert {name: chunks for name, (chunks, _) in collection_statistics(store).items()} == {
        "hr": 2,
        "default": 1,
    }


def test_schema_3_index_is_migrated_in_place(pg_database: str) -> None:
    store = PostgresStore.open(pg_database, create=True)
    doc = store.add_document(paragraphs_doc("/old.txt", ["Old words of gout."]))
    store.close()
    with psycopg.connect(pg_database, autocommit=True) as conn:  # back to schema 3
        for statement in (
            "DROP TABLE audit_log",
            "DROP TABLE api_keys",
            "DROP FUNCTION quoteproof_audit_append_only",
            "DROP INDEX documents_by_collection",
            "ALTER TABLE documents DROP COLUMN collection",
            "ALTER TABLE chunks DROP COLUMN collection",
            "UPDATE meta SET value = '3' WHERE key = 'schema_version'",
        ):
            conn.execute(statement)
    store = PostgresStore.open(pg_database)
    try:
        assert store.get_document(doc.doc_id) == doc
        assert [d.collection for d in store.list_documents(["default"])] == ["default"]
        assert [h.chunk.ref for h in store.search_bm25("gout", 5, ["default"])] == [
            f"{doc.doc_id}.1"
        ]
        assert store.search_bm25("gout", 5, ["hr"]) == []
        entry = store.append_audit(NewEntry("e1", "2026-01-01T00:00:00+00:00", None, (), "{}"))
        assert entry.seq == 1 and entry.signature is None
        assert store.get_setting("audit_head") == f"1:{entry.hash}"
        signed = store.append_audit(
            NewEntry("e2", "2026-01-01T00:00:01+00:00", None, (), "{}"), b"k"
        )
        assert store.audit_entries() == [entry, signed] and signed.signature is not None
        with pytest.raises(psycopg.Error, match="append-only"):
            store._db.execute("DELETE FROM audit_log")
    finally:
        store.close()
    with psycopg.connect(pg_database, autocommit=True) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert row == (str(SCHEMA_VERSION),)
