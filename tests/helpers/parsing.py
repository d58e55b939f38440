"""Parse functions for parse workers in tests (they run in a child
process, so they live in an importable module)."""

from __future__ import annotations

import threading
from pathlib import Path

from quoteproof.ingest.parsing import IngestSettings, Parsed, parse_and_chunk

HANG = b"HANG"
"""A file holding these bytes never finishes parsing under `hang_on_marker`."""


def hang_on_marker(raw: bytes, path: Path, settings: IngestSettings) -> Parsed | str:
    """`parse_and_chunk`, except that a file containing `HANG` parses until the
    worker process is killed."""
    if HANG in raw:
        threading.Event().wait()
    return parse_and_chunk(raw, path, settings)


SPIN = b"SPIN"
"""A file holding these bytes parses for ever, using CPU time, under `spin_on_marker`."""


def spin_on_marker(raw: bytes, path: Path, settings: IngestSettings) -> Parsed | str:
    """`parse_and_chunk`, except that a file containing `SPIN` keeps the CPU busy
    until the worker process is stopped."""
    while SPIN in raw:
        pass
    return parse_and_chunk(raw, path, settings)
