"""One lock for PDFium in a process.

PDFium is not thread-safe: two threads inside it at once can crash the process (the
server answers in several threads, reading quote boxes; a library user may parse in
threads). Every use of pypdfium2 in a process that may run threads (opening,
reading, rendering, closing) runs inside `pdfium()`; files are parsed and pages
rendered in child processes (`limited_call`), where it costs nothing. The lock is
re-created in a forked child, so a child never inherits it held by another thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.RLock()


@contextmanager
def pdfium() -> Iterator[None]:
    """Hold the process's PDFium lock for the block (re-entrant: calls may nest)."""
    with _lock:
        yield


def _fresh_lock_in_child() -> None:
    global _lock
    _lock = threading.RLock()


os.register_at_fork(after_in_child=_fresh_lock_in_child)
