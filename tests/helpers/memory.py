"""Peak memory of a command and every process it starts (Linux: reads /proc)."""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

POLL_S = 0.01
"""How often the processes are looked at."""


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    try:
        tasks = Path(f"/proc/{pid}/task").iterdir()
        found: list[int] = []
        for task in tasks:
            found += [int(child) for child in (task / "children").read_text().split()]
        return found
    except (FileNotFoundError, ProcessLookupError):
        return []


def _peak_rss(pid: int) -> int:
    """The largest resident set `pid` has had so far, in bytes (VmHWM), 0 if gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def run_with_peak_rss(
    command: list[str], env: dict[str, str] | None = None, timeout: float = 300
) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run `command`; return its result and the largest peak resident set (bytes)
    that it or any process under it reached, looked at every `POLL_S` seconds."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, text=True, env=env)
        peaks: dict[int, int] = {}
        deadline = time.monotonic() + timeout
        while process.poll() is None:
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"{command} ran past {timeout} s")
            tree, seen = [process.pid], set()
            while tree:
                pid = tree.pop()
                if pid not in seen:
                    seen.add(pid)
                    peaks[pid] = max(peaks.get(pid, 0), _peak_rss(pid))
                    tree += _children(pid)
            time.sleep(POLL_S)
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(command, process.returncode, out.read(), err.read())
    return result, max(peaks.values(), default=0)
