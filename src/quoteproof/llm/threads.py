"""How many CPU threads the local model runs on: the cores this process may use, less
the ones other processes are busy on right now, chosen again for every request.

llama.cpp's threads meet at a barrier after every step of the computation (hundreds
of times per token) and spin while they wait. When another process holds one of the
cores, one of the model's threads keeps losing its core and the others spin until it
gets it back: on 2 cores, 2 threads halved an answer on an idle machine, made it a
little slower than 1 thread beside one CPU-bound process and 5-7 times slower beside
several, while 1 thread took the same CPU time in every case
(docs/benchmarks.md#local-model). So a request runs on as many threads as there are
cores nobody else is using, at least one, for prompt processing and generation
alike; the count is read when the request starts, so a server that starts ingesting
between two answers gives its next answer fewer threads.

"Busy" is Linux's count of runnable tasks (`/proc/loadavg`'s fourth field, an
instant count, unlike the load averages, which include the model's own recent
work), less the task reading it, taken as the median of `SAMPLES` samples
`SAMPLE_INTERVAL_S` apart: a burst shorter than about half of that window does not
count, such as the embedding model's thread pool, which spins for some 50 ms after
embedding the question just before the model is called. Where that file does not
exist the 1-minute load average stands in for it.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

__all__ = ["busy_elsewhere", "choose_threads", "default_threads", "usable_cores"]

LOADAVG = Path("/proc/loadavg")
SAMPLES = 5
SAMPLE_INTERVAL_S = 0.04


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _running_tasks(loadavg: Path) -> int | None:
    """The runnable tasks counted in `loadavg` (`/proc/loadavg` format), or None."""
    try:
        fields = loadavg.read_text().split()
        return int(fields[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None


def busy_elsewhere(loadavg: Path = LOADAVG) -> int:
    """How many cores other tasks are busy on now: the median of `SAMPLES` counts of
    runnable tasks in `loadavg`, less the one reading it; the 1-minute load average
    (rounded) where the file cannot be read; 0 where neither exists."""
    counts = []
    for sample in range(SAMPLES):
        if sample:
            time.sleep(SAMPLE_INTERVAL_S)
        running = _running_tasks(loadavg)
        if running is None:
            break
        counts.append(running - 1)
    if counts:
        return max(0, round(statistics.median(counts)))
    if hasattr(os, "getloadavg"):
        return round(os.getloadavg()[0])
    return 0


def choose_threads(cores: int, busy: int) -> int:
    """The threads to run on with `cores` usable and `busy` of them taken by other
    tasks: the free ones, at least 1."""
    return max(1, cores - busy)


def default_threads() -> int:
    """The threads for a request starting now (see the module docstring)."""
    return choose_threads(usable_cores(), busy_elsewhere())
