"""Running one call in a child process that the operating system limits.

Parsing a file (`ingest.parse_worker`) and rendering a PDF page
(`server.pdf_pages`) run hostile input through libraries written in C that no
model of ours can bound: a Flate stream that inflates a thousandfold, markup the
HTML5 tree builder re-opens without end, a page of a million strokes. So each such
call runs in a fresh child process (`LimitedCall`) that, before it touches its
input, sets limits the kernel enforces on it:

- its address space (RLIMIT_AS): what the child holds once it has its input, plus
  `Limits.memory_bytes`; an allocation beyond fails, which Python raises as
  MemoryError and a C library turns into an error or a crash;
- its CPU time (RLIMIT_CPU): `Limits.cpu_seconds`, after which the kernel ends it
  with SIGXCPU;

and the parent ends it once `Limits.wall_seconds` have passed. Whatever happens in
the child, the parent gets a `Finished` value or a `Failure` saying which limit
was met, and goes on.

Children are forked from a fork server (`multiprocessing`'s "forkserver") that has
the parsers imported (`PRELOAD`): a child starts in milliseconds, holds none of its
parent's memory (an embedding model, caches), inherits none of its threads, and
does not run the parent's main module again (`_start_without_main`). A child ignores Ctrl-C
(its parent stops it) and dies with the fork server, which ends when the parent
does.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import multiprocessing
import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from multiprocessing import forkserver, spawn
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Literal

PRELOAD = (
    "quoteproof.ingest.pipeline",
    "quoteproof.ingest.pdf.parse",
    "quoteproof.ingest.office.docx",
    "trafilatura",
    "quoteproof.server.pdf_pages",
    "PIL.Image",
)
"""Modules the fork server imports once, so that no child imports them again (one
that cannot be imported, such as the server's without its extra, is left out)."""

CPU_GRACE_S = 5
"""Seconds of CPU time past the soft limit (SIGXCPU) before the kernel's SIGKILL."""

NEAR_LIMIT = 0.1
"""Within this share of the memory limit, a call's address space counts as at the
limit (see `Finished.near_limit`)."""

_PR_SET_PDEATHSIG = 1

FailureKind = Literal["memory", "cpu", "time", "crash", "error"]
"""Why a call gave no value: over its memory or CPU-time limit, past its
wall-clock limit, ended by a signal, or raised an exception."""


@dataclass(frozen=True)
class Limits:
    """What one call may use: `memory_bytes` more address space than the child
    holds with its input, `cpu_seconds` of CPU time, `wall_seconds` in all."""

    memory_bytes: int
    cpu_seconds: float
    wall_seconds: float


@dataclass(frozen=True)
class Finished:
    """A call that returned `value`. `near_limit`: its address space came within
    `NEAR_LIMIT` of the memory limit (a failure it reports as a value may be the
    memory limit's doing)."""

    value: Any
    near_limit: bool = False


@dataclass(frozen=True)
class Failure:
    """A call that gave no value: `kind` says why, `detail` gives the exception
    (kind "error") or the signal that ended the child (kind "crash")."""

    kind: FailureKind
    detail: str = ""


Outcome = Finished | Failure


_STARTING = threading.Lock()


def _start_without_main(process: BaseProcess) -> None:
    """Start `process` so that it does not run the parent's main module again (a
    script that ingests without `if __name__ == "__main__":` would ingest again in
    each child): while it starts, multiprocessing's preparation data for a child
    leaves out the main module's path and name. The calls children run live in
    importable modules."""
    with _STARTING:
        prepare = spawn.get_preparation_data

        def without_main(name: str) -> dict[str, Any]:
            data = prepare(name)
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
            return data

        spawn.get_preparation_data = without_main
        try:
            process.start()
        finally:
            spawn.get_preparation_data = prepare


@cache
def _fork_server() -> bool:
    """Whether children come from the fork server (preloaded with `PRELOAD`), which
    there is where processes can pass file descriptors (not on Windows)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    forkserver.set_forkserver_preload(list(PRELOAD))
    return True


def _new_process(target: Callable[..., Any], args: tuple[Any, ...]) -> BaseProcess:
    """A daemon process to run `target(*args)`: from the fork server, else spawned."""
    if _fork_server():
        server = multiprocessing.get_context("forkserver")
        return server.Process(target=target, args=args, name="quoteproof-limited", daemon=True)
    spawned = multiprocessing.get_context("spawn")
    return spawned.Process(target=target, args=args, name="quoteproof-limited", daemon=True)


def _end_with_parent() -> None:
    """Make this process end when its parent, the fork server, ends.

    The fork server ends once no process holds the write end of its "alive" pipe:
    its client, and each child it forks, which gets a copy (so that it could start
    processes itself). A child that keeps it keeps the fork server alive after its
    client died, and so itself: it closes its copy. Linux then kills it when the
    fork server ends (PR_SET_PDEATHSIG).
    """
    server = getattr(forkserver, "_forkserver", None)
    alive = getattr(server, "_forkserver_alive_fd", None)
    if isinstance(alive, int):
        with contextlib.suppress(OSError):
            os.close(alive)
        server._forkserver_alive_fd = None  # type: ignore[union-attr]
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _address_space(field: str = "VmSize") -> int | None:
    """This process's address space in bytes ("VmSize"), or the most it has had
    ("VmPeak"), from /proc (Linux); None where unknown."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _set_limits(memory_bytes: int, cpu_seconds: float) -> int | None:
    """Limit this process: no core file, address space now plus `memory_bytes`,
    CPU time `cpu_seconds` (SIGXCPU, then SIGKILL `CPU_GRACE_S` later). Hard limits
    too, so nothing in the process can raise them again. Returns the address space
    limit (None where it is not set)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = max(1, math.ceil(cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + CPU_GRACE_S))
    held = _address_space()
    if held is None:
        return None
    try:
        resource.setrlimit(resource.RLIMIT_AS, (held + memory_bytes, held + memory_bytes))
    except (ValueError, OSError):  # not enforced everywhere (macOS)
        return None
    return held + memory_bytes


def _near_limit(limit: int | None, memory_bytes: int) -> bool:
    """Whether this process's address space came within `NEAR_LIMIT` of `limit`."""
    peak = _address_space("VmPeak")
    return limit is not None and peak is not None and peak >= limit - NEAR_LIMIT * memory_bytes


def _child(connection: Connection, function: Callable[..., Any], limits: Limits) -> None:
    """The child: receive the arguments, limit itself, call, send the outcome back as
    `(kind, value, near_limit)` (`Finished` as kind "done"). A C library that
    cannot allocate often raises its own error rather than MemoryError (lexbor:
    "Can't parse HTML", libxml2: "Memory allocation failed"): an error raised with
    the address space near its limit is sent as kind "memory"."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_with_parent()
    try:
        args = connection.recv()
    except EOFError:
        return
    limit = _set_limits(limits.memory_bytes, limits.cpu_seconds)
    outcome: tuple[str, Any, bool]
    try:
        outcome = ("done", function(*args), False)
    except MemoryError:
        outcome = ("memory", "", True)
    except Exception as exc:  # the call's own failure: reported, not raised
        kind = "memory" if _near_limit(limit, limits.memory_bytes) else "error"
        outcome = (kind, f"{type(exc).__name__}: {exc}", True)
    del args
    if outcome[0] == "done":
        outcome = ("done", outcome[1], _near_limit(limit, limits.memory_bytes))
    try:
        connection.send(outcome)
    except MemoryError:
        outcome = ("memory", "", True)  # the value was too large to send back
        with contextlib.suppress(OSError):
            connection.send(outcome)
    except OSError:  # the parent is gone (killed by a Ctrl-C it did not catch)
        pass


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) back while the body runs, and deliver it after: a child
    whose start it cut off (the fork server had forked it, the parent had not yet
    sent what it runs) died printing a traceback into the user's terminal. Python
    delivers SIGINT to the main thread only; in any other, this holds nothing."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:
        yield  # (None: a handler set outside Python, which could not be put back)
        return
    pressed: list[int] = []
    signal.signal(signal.SIGINT, lambda number, _frame: pressed.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if pressed:
            signal.raise_signal(signal.SIGINT)


class LimitedCall:
    """`function(*args)` running in a fresh child process under `limits`.

    `function` must be picklable by reference (a module-level function). Wait on
    `waitable` (with `multiprocessing.connection.wait`, until `deadline`), then take
    `outcome()`; or call `outcome()` to wait for it. `kill` ends the child at once.
    """

    def __init__(self, function: Callable[..., Any], args: tuple[Any, ...], limits: Limits) -> None:
        self.limits = limits
        self._connection, child_end = multiprocessing.Pipe()
        self._process = _new_process(_child, (child_end, function, limits))
        self._outcome: Outcome | None = None
        self._closed = False
        try:
            with _ctrl_c_held():  # a child cut off half-started dies with a traceback
                _start_without_main(self._process)
                child_end.close()
                self.pid = self._process.pid
                self.started = time.monotonic()
                self.deadline = self.started + limits.wall_seconds
                with contextlib.suppress(OSError):  # the child is gone: `outcome` says how
                    self._connection.send(args)
        except BaseException:  # Ctrl-C, held back until here, or arguments that cannot
            self._abandon()  # be sent: the child would wait for them, and the exit for it
            raise

    def _abandon(self) -> None:
        """Kill the child, if it started, and close the pipe."""
        if self._process.pid is None:
            self._closed = True
            self._connection.close()
        else:
            self.kill()

    @property
    def waitable(self) -> Connection:
        """Ready (for `multiprocessing.connection.wait`) once the outcome can be read."""
        return self._connection

    def outcome(self) -> Outcome:
        """The call's outcome, waiting for it until `deadline`: a child still at work
        then is killed, and the outcome is a "time" `Failure` (one that finished in
        time is read whenever this is called)."""
        if self._outcome is not None:
            return self._outcome
        left = max(0.0, self.deadline - time.monotonic())
        if not wait([self._connection], left):
            self.kill()
            self._outcome = Failure("time")
            return self._outcome
        try:
            kind, value, near_limit = self._connection.recv()
        except (EOFError, OSError):
            self._outcome = self._death()
        else:
            done = kind == "done"
            self._outcome = Finished(value, near_limit) if done else Failure(kind, value)
        self._close()
        return self._outcome

    def _death(self) -> Failure:
        """How the child ended without sending an outcome."""
        self._process.join()
        code = self._process.exitcode or 0
        if code == -signal.SIGXCPU:
            return Failure("cpu")
        if code < 0:
            with contextlib.suppress(ValueError):
                return Failure("crash", signal.Signals(-code).name)
            return Failure("crash", f"signal {-code}")
        return Failure("crash", f"exit status {code}")

    def kill(self) -> None:
        """End the child now (an outcome not read yet is lost)."""
        if not self._closed and self._process.is_alive():
            self._process.kill()
        self._close()

    def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._process.join()
        self._connection.close()
        with contextlib.suppress(ValueError):
            self._process.close()
