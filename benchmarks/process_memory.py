"""Memory of a process tree, read from Linux's /proc (for the serving benchmarks)."""

from __future__ import annotations

from pathlib import Path


def tree_memory_kb(pid: int, field: str) -> int:
    """The sum of `field` (a kB line of /proc/PID/status: "VmRSS", resident now;
    "VmHWM", peak resident) over process `pid` and its living descendants; 0 for a
    process that is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0
    own = next(
        (int(line.split()[1]) for line in status.splitlines() if line.startswith(f"{field}:")),
        0,
    )
    return own + sum(tree_memory_kb(int(child), field) for child in children)
