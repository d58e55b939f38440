"""Fixtures of the store tests: every test taking `location` runs on both stores."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where an index is made: a fresh PostgreSQL database, or a directory."""
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_database"))
    return str(tmp_path / "idx")
