"""Fixtures for the HTTP API: a small index with collections A and B, a key for
each, and a TestClient of the app serving it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from quoteproof.index import Index
from quoteproof.keys import create_key
from quoteproof.server.app import create_app
from quoteproof.server.state import ServerConfig

A_TEXT = """# Shingles basics

Shingles causes a painful rash that usually appears on one side of the body.
Early signs of shingles include tingling, itching or pain where the rash will appear.
"""

A_SECOND = """Blood pressure is the force of blood pushing against the walls of the arteries.
A normal blood pressure is below 120/80 mmHg for most adults.
"""

B_TEXT = """# Project Bluebird

The shingles trial of Project Bluebird is confidential and enrols 40 volunteers.
The codename Bluebird must never appear outside collection B.
"""


@dataclass
class Server:
    """A running app over a fresh index: tokens for A and B, paths of the files."""

    client: TestClient
    index_dir: Path
    upload_dir: Path
    key_a: str
    key_b: str
    a_doc: str
    b_doc: str

    def headers(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"}

    @property
    def a(self) -> dict[str, str]:
        return self.headers(self.key_a)

    @property
    def b(self) -> dict[str, str]:
        return self.headers(self.key_b)


def build_index(root: Path) -> tuple[Path, str, str, str, str]:
    """An index under `root` with two A documents and one B document; return its
    path, the A and B tokens and the doc ids of `a.md` and `b.md`."""
    files = root / "files"
    files.mkdir()
    (files / "a.md").write_text(A_TEXT, encoding="utf-8")
    (files / "a2.txt").write_text(A_SECOND, encoding="utf-8")
    (files / "b.md").write_text(B_TEXT, encoding="utf-8")
    index_dir = root / "index"
    with Index.open(index_dir, create=True) as index:
        (a, a2) = index.ingest([files / "a.md", files / "a2.txt"], embed=False, collection="A")
        (b,) = index.ingest([files / "b.md"], embed=False, collection="B")
        assert a.doc_id and b.doc_id and a2.doc_id
        key_a, _ = create_key(index.store, "alice", ["A"])
        key_b, _ = create_key(index.store, "bob", ["B"])
    return index_dir, key_a, key_b, a.doc_id, b.doc_id


@contextmanager
def make_server(root: Path, **config: object) -> Iterator[Server]:
    """A `Server` over a new index under `root`; `config` overrides `ServerConfig`."""
    index_dir, key_a, key_b, a_doc, b_doc = build_index(root)
    upload_dir = root / "uploads"
    app = create_app(
        ServerConfig(index=str(index_dir), upload_dir=upload_dir, embed=False, **config)
    )
    with TestClient(app) as client:
        yield Server(client, index_dir, upload_dir, key_a, key_b, a_doc, b_doc)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """A fresh index and app per test (tests may upload and retire documents)."""
    with make_server(tmp_path) as running:
        yield running


@pytest.fixture
def server_with(tmp_path: Path) -> Callable[..., AbstractContextManager[Server]]:
    """`server_with(**config)`: a context manager giving a `Server` whose
    `ServerConfig` has `config` (e.g. `auth=False`, `max_upload_mb=0.01`)."""
    return lambda **config: make_server(tmp_path, **config)
