"""Parsing uploads in a child process, so that no file can hold the server.

A `ParseWorker` is one long-lived child process that parses and chunks files
(`ingest.pipeline.parse_and_chunk`) one at a time. Its owner sends a file
(`start`), waits on `connection` among others (`multiprocessing.connection.wait`),
then takes the outcome (`result`). A parse that runs past its budget, or one
running when the server stops, is ended by killing the child (`kill`); the next
`start` starts a fresh one.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from quoteproof.ingest.pipeline import IngestSettings, Parsed, parse_and_chunk

ParseFunction = Callable[[bytes, Path, IngestSettings], Parsed | str]
"""What a worker runs on each file: `parse_and_chunk` or one with its contract."""


def _serve(connection: Connection, parse: ParseFunction) -> None:
    """The child's loop: parse each `(raw, path, settings)` received, send back the
    outcome (a failure's cause as a string), until None or the pipe closes."""
    while True:
        try:
            message = connection.recv()
        except EOFError:
            return
        if message is None:
            return
        raw, path, settings = message
        try:
            outcome = parse(raw, path, settings)
        except Exception as exc:  # a parser's own failure: the file fails, not the worker
            outcome = f"cannot parse: {type(exc).__name__}: {exc}"
        connection.send(outcome)


class ParseWorker:
    """One child process that parses files for the server, one at a time.

    `parse` runs in the child (`parse_and_chunk` unless given; it must be picklable
    by reference). `busy_since` is the monotonic time the file in progress was sent
    (None when idle).
    """

    def __init__(self, parse: ParseFunction = parse_and_chunk) -> None:
        self._parse = parse
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None
        self.busy_since: float | None = None

    @property
    def connection(self) -> Connection | None:
        """The pipe to wait on while a file is in progress (None when idle)."""
        return self._connection if self.busy_since is not None else None

    def start(self, raw: bytes, path: Path, settings: IngestSettings) -> None:
        """Send a file to parse, starting the child process first if needed (again
        if the one there has died)."""
        if self._process is None or not self._process.is_alive():
            self._spawn()
        assert self._connection is not None
        try:
            self._connection.send((raw, path, settings))
        except OSError:  # the child died since: start a new one
            self.kill()
            self._spawn()
            assert self._connection is not None
            self._connection.send((raw, path, settings))
        self.busy_since = time.monotonic()

    def result(self) -> Parsed | str:
        """The outcome of the file in progress (blocks until it is ready); the cause
        of failure when the child died."""
        assert self._connection is not None
        try:
            outcome: Parsed | str = self._connection.recv()
        except (EOFError, OSError):
            self.kill()
            return "cannot parse: the parsing process ended unexpectedly"
        self.busy_since = None
        return outcome

    def kill(self) -> None:
        """End the child at once (a parse in progress is dropped)."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.join()
        self._close_pipe()
        self.busy_since = None

    def close(self) -> None:
        """Stop an idle child cleanly; kill a busy one."""
        if self.busy_since is not None or self._process is None:
            self.kill()
            return
        process, self._process = self._process, None
        try:
            assert self._connection is not None
            self._connection.send(None)
        except OSError:
            process.kill()
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join()
        self._close_pipe()

    def _spawn(self) -> None:
        self._close_pipe()
        context = multiprocessing.get_context("spawn")  # the server runs threads: no fork
        parent, child = context.Pipe()
        process = context.Process(
            target=_serve, args=(child, self._parse), name="quoteproof-parse", daemon=True
        )
        process.start()
        child.close()
        self._process, self._connection = process, parent

    def _close_pipe(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
