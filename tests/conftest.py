"""Shared pytest configuration for quoteproof's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture
def repo_root() -> Path:
    """The repository's root directory."""
    return REPO_ROOT
