"""Worker function for the audit-log concurrency test: it runs in spawned processes,
so it lives in an importable module (not a test file)."""

from __future__ import annotations

import time
from pathlib import Path

from quoteproof.store.base import NewEntry
from quoteproof.store.open import open_store


def append_worker(
    location: str, worker: int, count: int, ready_file: str, go_file: str
) -> list[int]:
    """Open the index, create `ready_file`, wait for `go_file`, then append `count`
    audit entries (pausing a little now and then, so that the writers interleave).
    Returns the `seq` numbers it was given."""
    store = open_store(location)
    try:
        Path(ready_file).touch()
        deadline = time.monotonic() + 60
        while not Path(go_file).exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        seqs = []
        for number in range(count):
            entry = store.append_audit(
                NewEntry(
                    f"w{worker}-{number}",
                    f"2026-01-01T00:00:{number:02d}+00:00",
                    f"user-{worker}",
                    ("default",),
                    f'{{"worker": {worker}, "number": {number}}}',
                ),
            )
            seqs.append(entry.seq)
            time.sleep(0.001 * (number % 3))  # let the other writers take turns
        return seqs
    finally:
        store.close()
