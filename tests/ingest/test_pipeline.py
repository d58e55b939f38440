"""Tests of the ingest pipeline's worker processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.parsing import HANG

# Ingests three files with two workers, each of whose parses never ends; prints the
# pids of the two parsing processes, then waits until it is killed.
_PAUSED_INGEST = """
import multiprocessing, sys, threading, time
from pathlib import Path
from helpers.parsing import hang_on_marker
from quoteproof.ingest.pipeline import ingest_files
from quoteproof.store.open import open_store

folder = Path(sys.argv[1])
store = open_store(str(folder / "idx"), create=True)


def report() -> None:
    while len(multiprocessing.active_children()) < 2:
        time.sleep(0.05)
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)


threading.Thread(target=report, daemon=True).start()
next(ingest_files(store, sorted(folder.glob("*.txt")), jobs=2, parse=hang_on_marker))
"""


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_workers_exit_when_their_parent_is_killed(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.txt").write_text(f"File {name}: {HANG.decode()}.\n")
    parent = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_INGEST, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    workers: list[int] = []
    try:
        assert parent.stdout is not None
        workers = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(pid) for pid in workers)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        for _ in range(100):  # the fork server they come from ends with the parent
            if not any(_alive(pid) for pid in workers):
                break
            time.sleep(0.1)
        assert [pid for pid in workers if _alive(pid)] == []
    finally:
        parent.kill()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_script_without_a_main_guard_ingests_once(tmp_path: Path) -> None:
    # Files are parsed in child processes; they must not run the script again.
    (tmp_path / "notes.txt").write_text("Notes on washing hands with soap.\n")
    script = tmp_path / "ingest_notes.py"
    script.write_text(
        "from quoteproof import Index\n"
        f"index = Index.open({str(tmp_path / 'idx')!r}, create=True)\n"
        f"for result in index.ingest([{str(tmp_path / 'notes.txt')!r}], embed=False):\n"
        "    print(result.status)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert (done.returncode, done.stdout) == (0, "added\n"), done.stderr
    assert "Traceback" not in done.stderr
