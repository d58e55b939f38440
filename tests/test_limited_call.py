"""A call in a child process the operating system limits: each limit ends the call
with the failure that names it, and the caller goes on."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import limited
from quoteproof import limited_call
from quoteproof.limited_call import Failure, Finished, LimitedCall, Limits

MB = 2**20
ROOMY = Limits(memory_bytes=256 * MB, cpu_seconds=60, wall_seconds=120)


def run(function: object, *args: object, limits: Limits = ROOMY) -> Finished | Failure:
    return LimitedCall(function, args, limits).outcome()  # type: ignore[arg-type]


def test_a_call_within_its_limits_returns_its_value() -> None:
    assert run(limited.echo, {"text": "é" * 10}) == Finished({"text": "é" * 10})
    assert run(limited.allocate, 64) == Finished(64 * MB)


def test_memory_past_the_limit_is_a_memory_failure() -> None:
    assert run(limited.allocate, 512, limits=ROOMY) == Failure("memory")


def test_a_value_too_large_to_send_back_is_a_memory_failure() -> None:
    # 100 MB fits in the limit once, not with the copy that sending it makes.
    small = Limits(memory_bytes=150 * MB, cpu_seconds=60, wall_seconds=120)
    assert run(limited.bytes_of, 100, limits=small) == Failure("memory")


def test_cpu_time_past_the_limit_is_a_cpu_failure() -> None:
    brief = Limits(memory_bytes=256 * MB, cpu_seconds=1, wall_seconds=120)
    assert run(limited.spin, limits=brief) == Failure("cpu")


def test_clock_time_past_the_limit_is_a_time_failure() -> None:
    brief = Limits(memory_bytes=256 * MB, cpu_seconds=60, wall_seconds=0.5)
    call = LimitedCall(limited.sleep_forever, (), brief)
    assert call.outcome() == Failure("time")
    assert not _running(call.pid)


def test_a_crash_and_an_exception_are_failures_that_say_which() -> None:
    assert run(limited.abort) == Failure("crash", "SIGABRT")
    assert run(limited.fail, "bad input") == Failure("error", "ValueError: bad input")


def test_kill_ends_the_child_at_once() -> None:
    call = LimitedCall(limited.sleep_forever, (), ROOMY)
    assert _running(call.pid)
    call.kill()
    assert not _running(call.pid)


def _running(pid: int | None) -> bool:
    """Whether `pid` is a live process (not gone, not a zombie)."""
    assert pid is not None
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def test_ctrl_c_in_the_parent_does_not_reach_the_child(tmp_path: Path) -> None:
    started = tmp_path / "started"
    call = LimitedCall(limited.touch_then_sleep, (str(started), 1.0), ROOMY)
    while not started.exists():
        time.sleep(0.01)
    assert call.pid is not None
    os.kill(call.pid, signal.SIGINT)  # what a terminal sends the whole process group
    assert call.outcome() == Finished("slept")


def test_an_outcome_ready_in_time_is_read_after_the_deadline() -> None:
    # `ingest` takes outcomes in file order: a quick file's waits for a slow one's.
    call = LimitedCall(limited.echo, ("quick",), Limits(256 * MB, 60, 0.5))
    time.sleep(1.0)
    assert call.outcome() == Finished("quick")


def test_ctrl_c_while_the_arguments_are_sent_leaves_no_child(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C landing between the child's start and the sending of its arguments left
    the child waiting for them, and the interrupted `ingest` waiting for the child at
    exit, for ever."""
    started: list[int | None] = []
    start = limited_call._start_without_main

    def recorded(process: multiprocessing.process.BaseProcess) -> None:
        start(process)
        started.append(process.pid)

    pipe = multiprocessing.Pipe

    def interrupted_pipe() -> tuple[Any, Any]:
        parent, child = pipe()

        def send(_obj: object) -> None:
            raise KeyboardInterrupt

        parent.send = send  # type: ignore[method-assign]
        return parent, child

    monkeypatch.setattr(limited_call, "_start_without_main", recorded)
    monkeypatch.setattr(limited_call.multiprocessing, "Pipe", interrupted_pipe)
    with pytest.raises(KeyboardInterrupt):
        LimitedCall(limited.echo, ("x",), ROOMY)
    (child,) = started
    assert not _running(child)


CUT_OFF_START = """
import signal, sys
from multiprocessing import forkserver
from helpers import limited
from quoteproof.limited_call import LimitedCall, Limits

signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, also when
connect = forkserver.connect_to_new_process  # the suite was started with SIGINT ignored

def connected_then_interrupted(fds):
    connected = connect(fds)  # the fork server forks the child, which then waits
    signal.raise_signal(signal.SIGINT)  # for what it runs: Ctrl-C lands here
    return connected

forkserver.connect_to_new_process = connected_then_interrupted
try:
    call = LimitedCall(limited.echo, ("x",), Limits(2**28, 60, 120))
except KeyboardInterrupt:
    print("interrupted")
else:
    print("not interrupted", call.outcome())
"""


def test_ctrl_c_while_a_child_starts_is_delivered_after_and_prints_no_traceback() -> None:
    """Ctrl-C landing after the fork server had forked a child, before the parent sent
    it what to run, left the child to die with "EOFError: Ran out of input" and its
    traceback in the user's terminal (an interrupted `ingest` printed it)."""
    tests = Path(__file__).parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", CUT_OFF_START], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.stdout.split() == ["interrupted"]
    assert "Traceback" not in done.stderr, done.stderr
