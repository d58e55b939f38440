"""Parsing files in limited child processes, one file at a time per worker.

A `ParseWorker` hands each file it is given (`start`) to a fresh child process
that the operating system limits by the file's size (`limited_call.LimitedCall`
under `IngestSettings.limits`): the child parses and chunks it
(`parsing.parse_and_chunk`) and exits. Its owner waits on `connection` among
others (`multiprocessing.connection.wait`), until `deadline` at the latest, then
takes the outcome (`result`): the parsed file, or the cause it failed with, which
names the limit it met. `kill` ends a parse at once. `quoteproof ingest` and the
server both parse this way.
"""

from __future__ import annotations

from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

from quoteproof.ingest.parse_limits import failure_cause
from quoteproof.ingest.parsing import IngestSettings, Parsed, parse_and_chunk
from quoteproof.limited_call import Failure, Finished, LimitedCall

ParseFunction = Callable[[bytes, Path, IngestSettings], Parsed | str]
"""What a worker runs on each file: `parse_and_chunk` or one with its contract."""


class ParseWorker:
    """Parses one file at a time, each in its own limited child process.

    `parse` runs in the child (`parse_and_chunk` unless given; it must be picklable
    by reference). `timeout_s`, when given, caps the clock time of any file below
    what its limits allow. `busy_since` is the monotonic time the file in progress
    was started (None when idle).
    """

    def __init__(self, parse: ParseFunction | None = None, timeout_s: float | None = None) -> None:
        self._parse = parse or parse_and_chunk
        self._timeout = timeout_s
        self._call: LimitedCall | None = None
        self._size = 0

    @property
    def busy_since(self) -> float | None:
        """When the file in progress was started (None when idle)."""
        return self._call.started if self._call is not None else None

    @property
    def connection(self) -> Connection | None:
        """What to wait on while a file is in progress (None when idle)."""
        return self._call.waitable if self._call is not None else None

    @property
    def deadline(self) -> float:
        """The monotonic time the file in progress fails unless done (inf when idle)."""
        return self._call.deadline if self._call is not None else float("inf")

    def start(self, raw: bytes, path: Path, settings: IngestSettings) -> None:
        """Start parsing a file in a new child process (the worker must be idle)."""
        assert self._call is None, "a file is in progress"
        limits = settings.limits.for_size(len(raw), self._timeout)
        self._size = len(raw)
        self._call = LimitedCall(self._parse, (raw, path, settings), limits)

    def result(self) -> Parsed | str:
        """The outcome of the file in progress (waits for it, until `deadline` at the
        latest): the parsed file, or the cause it failed with. Interrupted while it
        waits, the parse is killed."""
        call, self._call = self._call, None
        assert call is not None, "no file in progress"
        try:
            outcome = call.outcome()
        except BaseException:  # Ctrl-C while waiting: no child left behind
            call.kill()
            raise
        if isinstance(outcome, Finished):
            parsed: Parsed | str = outcome.value
            if not (isinstance(parsed, str) and outcome.near_limit):
                return parsed
            outcome = Failure("memory")  # a cause given at the memory limit: its doing
        return failure_cause(outcome, call.limits, self._size)

    def kill(self) -> None:
        """End the parse in progress at once (its outcome is dropped)."""
        call, self._call = self._call, None
        if call is not None:
            call.kill()
