"""Fixtures for retrieval tests: the small corpus ingested with vectors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import write_corpus


@pytest.fixture(scope="module")
def embedded_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small corpus ingested with all-MiniLM-L6-v2 vectors, once per module
    (read-only use; copy it with `embedded_copy` to change it)."""
    from quoteproof import Index

    root = tmp_path_factory.mktemp("embedded")
    with Index.open(root / "index", create=True) as index:
        index.ingest([write_corpus(root)], embed=True)
        stats = index.store.stats()
    assert stats.embedded == stats.chunks > 0
    return root / "index"


@pytest.fixture
def embedded_copy(embedded_index_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the embedded index."""
    return Path(shutil.copytree(embedded_index_dir, tmp_path / "index"))
