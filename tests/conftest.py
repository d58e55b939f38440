"""Shared pytest configuration and fixtures for quoteproof's tests."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.llm_servers import ScriptedAnthropicServer, ScriptedOpenAIServer

# A process that loads usearch before ONNX Runtime crashes when it loads ONNX Runtime;
# quoteproof loads them in the safe order (`store.ann`), and so do the tests, some of
# which import usearch themselves, whatever order they are collected in.
with contextlib.suppress(ImportError):
    import onnxruntime  # noqa: F401

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture
def repo_root() -> Path:
    """The repository's root directory."""
    return REPO_ROOT


@pytest.fixture(scope="session", autouse=True)
def audit_key_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The configuration folder, where the audit key every test (and every command a
    test runs, whatever `QUOTEPROOF_` variables it drops) is made and read: a
    temporary one, never the user's, and no `$QUOTEPROOF_AUDIT_KEY` of theirs."""
    from quoteproof.audit_key import AUDIT_KEY_VARIABLE

    folder = tmp_path_factory.mktemp("config")
    saved = {name: os.environ.pop(name, None) for name in ("XDG_CONFIG_HOME", AUDIT_KEY_VARIABLE)}
    os.environ["XDG_CONFIG_HOME"] = str(folder)
    yield folder
    for name, value in saved.items():
        os.environ.pop(name, None)
        if value is not None:
            os.environ[name] = value


@pytest.fixture(scope="session", autouse=True)
def model_cache_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The cache folder (`$XDG_CACHE_HOME`), where embedding models exported to ONNX
    are kept: a temporary one per test session, never the user's."""
    folder = tmp_path_factory.mktemp("cache")
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    yield folder
    os.environ.pop("XDG_CACHE_HOME", None)
    if saved is not None:
        os.environ["XDG_CACHE_HOME"] = saved


# --- scripted model servers on 127.0.0.1 (see tests/helpers/llm_servers.py) ----------


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    """A started scripted server; set `.script` before use."""
    server = ScriptedOpenAIServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def shared_openai_server() -> Iterator[ScriptedOpenAIServer]:
    """One scripted server for a whole session (for hypothesis tests)."""
    server = ScriptedOpenAIServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def anthropic_server() -> Iterator[ScriptedAnthropicServer]:
    """A started scripted Anthropic server; set `.script` before use."""
    server = ScriptedAnthropicServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def shared_anthropic_server() -> Iterator[ScriptedAnthropicServer]:
    """One scripted Anthropic server for a whole session (for hypothesis tests)."""
    server = ScriptedAnthropicServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def dead_server_url() -> str:
    """A loopback URL on which nothing listens (for 'server down' tests)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# --- a small corpus and index ------------------------------------------------------

CORPUS_FILES = {
    "shingles.md": (
        "# Shingles\n\n"
        "## What are the symptoms?\n\n"
        "The first sign of shingles is often burning or tingling pain. "
        "A rash of fluid-filled blisters appears one to five days later.\n\n"
        "Most people do not get shingles more than once.\n\n"
        "## How is it treated?\n\n"
        "Antiviral medicines such as acyclovir, valacyclovir and famciclovir "
        "can shorten the attack if started within 72 hours of the rash.\n"
    ),
    "dosing.txt": (
        "Remdesivir dosing\r\n\r\n"
        "The recommended dose is 200 mg on day 1, followed by 100 mg once daily.\r\n\r\n"
        "Do not use remdesivir in patients with known hypersensitivity.\r"
    ),
    "nested/pressure.html": (
        "<html><head><title>Blood pressure</title><script>alert('x')</script></head>"
        "<body><nav>Home | About</nav><main><h1>Blood pressure</h1>"
        "<h2>Normal values</h2><p>Normal blood pressure is lower than 120/80 mmHg.</p>"
        "<h2>Risks</h2><p>High blood pressure raises the risk of stroke and heart attack.</p>"
        "</main></body></html>"
    ),
}


def write_corpus(root: Path) -> Path:
    """Write the small test corpus under `root` and return its folder."""
    folder = root / "corpus"
    for name, text in CORPUS_FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return folder


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A folder with a Markdown, a text (CRLF) and an HTML document."""
    return write_corpus(tmp_path)


@pytest.fixture
def index_dir(tmp_path: Path, corpus: Path) -> Path:
    """An index directory with the small corpus ingested."""
    from quoteproof import Index

    location = tmp_path / "index"
    with Index.open(location, create=True) as index:
        results = index.ingest([corpus], embed=False)
    assert [r.status for r in results] == ["added"] * len(CORPUS_FILES)
    return location


@pytest.fixture(scope="session")
def session_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small corpus ingested once per session (read-only use)."""
    from quoteproof import Index

    root = tmp_path_factory.mktemp("session-index")
    location = root / "index"
    with Index.open(location, create=True) as index:
        index.ingest([write_corpus(root)], embed=False)
    return location


# --- PostgreSQL ----------------------------------------------------------------------

PG_URL_VARIABLE = "QUOTEPROOF_TEST_PG_URL"


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """The URL of a PostgreSQL server whose user may create databases.

    `$QUOTEPROOF_TEST_PG_URL` when set, else a private server started with pgserver
    (one per pytest-xdist worker, stopped at the end of the session). Skips when
    psycopg and pgvector, or (without the variable) pgserver, are not installed.
    """
    pytest.importorskip("psycopg", reason="PostgreSQL tests need psycopg (the postgres extra)")
    pytest.importorskip("pgvector", reason="PostgreSQL tests need pgvector (the postgres extra)")
    url = os.environ.get(PG_URL_VARIABLE)
    if url:
        yield url
        return
    pgserver = pytest.importorskip(
        "pgserver", reason=f"PostgreSQL tests need ${PG_URL_VARIABLE} or pgserver (dev extra)"
    )
    data = Path(tempfile.mkdtemp(prefix="quoteproof-pg-"))
    server = pgserver.get_server(data, cleanup_mode="stop")
    try:
        url = server.get_uri()
        _relax_durability(url)
        yield url
    finally:
        server.cleanup()
        shutil.rmtree(data, ignore_errors=True)


def _relax_durability(url: str) -> None:
    """Turn off fsync on a throwaway test server: commits get much faster."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET fsync = off")
        conn.execute("ALTER SYSTEM SET synchronous_commit = off")
        conn.execute("SELECT pg_reload_conf()")


def with_database(url: str, name: str) -> str:
    """Return the `postgresql://` URL `url` naming database `name` instead of its own."""
    base, separator, query = url.partition("?")
    scheme, _, rest = base.partition("://")
    authority = rest.split("/", 1)[0]
    return f"{scheme}://{authority}/{name}{separator}{query}"


@pytest.fixture
def pg_database(pg_url: str) -> Iterator[str]:
    """The URL of a fresh, empty database (dropped after the test)."""
    import psycopg
    from psycopg import sql

    name = f"quoteproof_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield with_database(pg_url, name)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
