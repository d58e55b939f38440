"""Database errors in normal use (a full disk, a locked, read-only or damaged
database) reach the user as one line naming the index and the cause (CLI exit 2,
an HTTP JSON error), never as a traceback, and leave the index consistent."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from quoteproof import Index
from quoteproof.cli import app
from quoteproof.errors import StoreError
from quoteproof.store.sqlite import DB_FILENAME, SQLiteStore
from quoteproof.store.sqlite_schema import fts_table

Setup = Callable[[int], str]


def cli(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def assert_one_line_error(result: Result, *words: str) -> str:
    """Exit 2, one `error:` line on stderr naming every one of `words`, no traceback."""
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    assert isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: index "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    for word in words:
        assert word in lines[0]
    return lines[0]


@pytest.fixture
def connection_setup(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Setup]]:
    """SQL run on every store connection right after it is opened (the test appends
    functions of the database's page count that return it): a way to make the
    database behave as a full disk would."""
    statements: list[Setup] = []
    original = SQLiteStore.open

    def open_with_setup(
        cls: type[SQLiteStore], directory: str | Path, **kwargs: bool
    ) -> SQLiteStore:
        store = original(directory, **kwargs)
        for statement in statements:
            store._db.execute(statement(page_count(store)))
        return store

    monkeypatch.setattr(SQLiteStore, "open", classmethod(open_with_setup))
    yield statements


def page_count(store: SQLiteStore) -> int:
    return int(store._db.execute("PRAGMA page_count").fetchone()[0])


COLLECTIONS = "SELECT DISTINCT collection FROM documents WHERE is_current = 1"


def assert_consistent(index_dir: Path, absent: Path) -> None:
    """The index opens, passes SQLite's and FTS5's integrity checks, does not hold
    `absent`, and every document it holds is whole (chunks spanning its text)."""
    db = sqlite3.connect(index_dir / DB_FILENAME)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        for table in (fts_table(name) for (name,) in db.execute(COLLECTIONS)):
            db.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    finally:
        db.close()
    with Index.open(index_dir) as index:
        summaries = index.store.list_documents()
        assert summaries and str(absent) not in {s.source_path for s in summaries}
        for summary in summaries:
            document = index.store.get_document(summary.doc_id, summary.version)
            assert document is not None
            chunks = index.store.chunks_of(summary.doc_id, summary.version)
            assert chunks and all(c.text == document.text[c.start : c.end] for c in chunks)


def test_disk_full_during_ingest_is_one_line_and_leaves_whole_documents(
    index_dir: Path, tmp_path: Path, connection_setup: list[Setup]
) -> None:
    folder = tmp_path / "more"
    folder.mkdir()
    (folder / "a-small.md").write_text("# Small\n\nA short note about aspirin.\n")
    big = folder / "b-big.md"
    big.write_text("# Big\n\n" + "\n\n".join(f"Paragraph {n} " + "words " * 80 for n in range(400)))
    # The disk fills up soon: a few pages more than the index has.
    connection_setup.append(lambda pages: f"PRAGMA max_page_count = {pages + 16}")
    result = cli("ingest", str(folder), "--index", str(index_dir), "--no-embed", "--jobs", "1")
    assert_one_line_error(result, str(index_dir), "disk is full", "database or disk is full")
    connection_setup.clear()
    assert_consistent(index_dir, absent=big)
    with Index.open(index_dir) as index:
        assert str(folder / "a-small.md") in {s.source_path for s in index.store.list_documents()}


def test_a_database_locked_by_another_writer_is_one_line(
    index_dir: Path, tmp_path: Path, connection_setup: list[Setup]
) -> None:
    new = tmp_path / "new.md"
    new.write_text("# New\n\nA new document.\n")
    holder = sqlite3.connect(index_dir / DB_FILENAME, isolation_level=None)

    def another_writer_starts(_: int) -> str:
        holder.execute("BEGIN IMMEDIATE")  # once the index is open, for longer than we wait
        return "PRAGMA busy_timeout = 0"

    connection_setup.append(another_writer_starts)
    try:
        result = cli("ingest", str(new), "--index", str(index_dir), "--no-embed", "--jobs", "1")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert_one_line_error(result, "locked", "another process")
    connection_setup.clear()
    assert_consistent(index_dir, absent=new)


def test_a_write_refused_as_read_only_is_one_line(
    index_dir: Path, tmp_path: Path, connection_setup: list[Setup]
) -> None:
    new = tmp_path / "new.md"
    new.write_text("# New\n\nA new document.\n")
    connection_setup.append(lambda _: "PRAGMA query_only = ON")  # as a read-only file refuses
    result = cli("ingest", str(new), "--index", str(index_dir), "--no-embed", "--jobs", "1")
    assert_one_line_error(result, "read-only", "readonly database")
    connection_setup.clear()
    assert_consistent(index_dir, absent=new)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_read_only_index_directory_is_one_line(index_dir: Path, tmp_path: Path) -> None:
    new = tmp_path / "new.md"
    new.write_text("# New\n\nA new document.\n")
    for path in [*index_dir.iterdir(), index_dir]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        result = cli("ingest", str(new), "--index", str(index_dir), "--no-embed")
    finally:
        for path in [index_dir, *index_dir.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert_one_line_error(result, str(index_dir))
    assert_consistent(index_dir, absent=new)


def test_a_file_of_random_bytes_is_one_line(tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    index_dir.mkdir()
    (index_dir / DB_FILENAME).write_bytes(os.urandom(64 * 1024))
    result = cli("search", "anything", "--index", str(index_dir))
    assert_one_line_error(result, str(index_dir), "damaged or is not a quoteproof index")


def damage_table(index_dir: Path, table: str) -> None:
    """Overwrite the root page of `table` with random bytes (the rest stays readable)."""
    db = sqlite3.connect(index_dir / DB_FILENAME)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    (root,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    with (index_dir / DB_FILENAME).open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(os.urandom(page_size))


def test_a_damaged_table_met_while_searching_is_one_line(index_dir: Path) -> None:
    damage_table(index_dir, "chunks")
    result = cli("search", "shingles", "--index", str(index_dir), "--retriever", "bm25")
    assert_one_line_error(result, str(index_dir), "damaged")


def test_the_http_api_answers_a_damaged_index_with_a_json_error(index_dir: Path) -> None:
    from fastapi.testclient import TestClient

    from quoteproof.server.app import create_app
    from quoteproof.server.state import ServerConfig

    damage_table(index_dir, "documents")
    client = TestClient(create_app(ServerConfig(index=str(index_dir), auth=False)))
    response = client.get("/v1/documents")
    assert response.status_code == 500
    assert "damaged" in response.json()["error"] and str(index_dir) in response.json()["error"]


def test_store_methods_raise_store_errors(index_dir: Path) -> None:
    damage_table(index_dir, "documents")
    with Index.open(index_dir) as index:
        calls: list[Callable[[], object]] = [
            index.store.list_documents,
            index.store.stats,
        ]
        for call in calls:
            with pytest.raises(StoreError, match="damaged") as caught:
                call()
            assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)
