"""The local model's threads: the cores no other process is busy on, at least one,
read again for each request; `threads` fixes them."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.local_extra import local_extra_installed
from quoteproof.llm import threads
from quoteproof.llm.threads import busy_elsewhere, choose_threads, usable_cores


@pytest.mark.parametrize(
    ("cores", "busy", "chosen"), [(2, 0, 2), (2, 1, 1), (2, 7, 1), (1, 0, 1), (16, 3, 13)]
)
def test_the_free_cores_at_least_one(cores: int, busy: int, chosen: int) -> None:
    assert choose_threads(cores, busy) == chosen


def test_busy_is_the_running_tasks_less_the_reader(tmp_path: Path) -> None:
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.50 0.40 0.30 3/120 5555\n")
    assert busy_elsewhere(loadavg) == 2
    loadavg.write_text("0.50 0.40 0.30 1/120 5555\n")
    assert busy_elsewhere(loadavg) == 0


def test_without_the_file_the_load_average_stands_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (2.6, 1.0, 0.5))
    assert busy_elsewhere(tmp_path / "missing") == 3
    (tmp_path / "garbled").write_text("nothing here")
    assert busy_elsewhere(tmp_path / "garbled") == 3


@pytest.fixture
def spinner() -> Iterator[None]:
    """A CPU-bound process beside the test, running."""
    process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        yield
    finally:
        process.kill()
        process.wait()


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="Linux's /proc/loadavg")
@pytest.mark.usefixtures("spinner")
def test_a_cpu_bound_process_beside_counts_as_busy() -> None:
    assert busy_elsewhere() >= 1
    if usable_cores() >= 2:
        assert threads.default_threads() < usable_cores()


@pytest.mark.skipif(not local_extra_installed(), reason="the local extra is not installed")
@pytest.mark.skipif(usable_cores() < 2, reason="needs 2 cores to leave one")
@pytest.mark.usefixtures("spinner")
def test_the_local_backend_leaves_the_busy_core_unless_told() -> None:
    import llama_cpp

    from quoteproof.llm.base import CompletionRequest, Message
    from quoteproof.llm.local import LocalBackend

    request = CompletionRequest((Message("user", "Say yes."),), "q", (), max_tokens=2)
    for fixed, expected in ((None, range(1, usable_cores())), (2, range(2, 3))):
        backend = LocalBackend(threads=fixed)
        backend.complete(request)
        ctx = backend._llama._ctx.ctx
        assert backend.threads in expected
        assert llama_cpp.llama_n_threads(ctx) == llama_cpp.llama_n_threads_batch(ctx)
        assert llama_cpp.llama_n_threads(ctx) == backend.threads


def test_a_short_burst_is_not_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread pool still spinning for the first samples (2 of 5) is outvoted."""
    counts = iter([3, 3, 1, 1, 1])
    monkeypatch.setattr(threads, "_running_tasks", lambda loadavg: next(counts))
    monkeypatch.setattr(threads, "SAMPLE_INTERVAL_S", 0.0)
    assert busy_elsewhere() == 0
    steady = iter([3, 3, 3, 1, 1])
    monkeypatch.setattr(threads, "_running_tasks", lambda loadavg: next(steady))
    assert busy_elsewhere() == 2
