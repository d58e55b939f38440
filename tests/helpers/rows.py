"""Reading an index's raw rows, to prove that something left it unchanged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from quoteproof.store.sqlite import DB_FILENAME


def index_rows(directory: str | Path) -> list[tuple[object, ...]]:
    """Every row of every table of the SQLite index in `directory`, sorted, each
    prefixed with its table name."""
    db = sqlite3.connect(Path(directory) / DB_FILENAME)
    try:
        tables = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = [(t, *row) for t in sorted(tables) for row in db.execute(f"SELECT * FROM {t}")]
    finally:
        db.close()
    return sorted(rows, key=repr)
