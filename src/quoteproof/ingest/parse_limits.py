"""What parsing one file may cost, by its size, and the cause a file that costs more
fails with.

A file is parsed and chunked in a child process the operating system limits
(`limited_call`). The limits grow with the file: `memory_mb` megabytes of memory
plus `memory_per_mb` for each megabyte of the file, and `seconds` of CPU time plus
`seconds_per_mb` for each megabyte; the clock allows `WALL_FACTOR` times the CPU
time plus `WALL_SLACK_S` (a busy machine, and the OCR command, whose time is not
the parser's). Ordinary
files use a fraction of this (a 10 MB Markdown file about 450 MB and 9 s; a PDF a
few MB); a 1 MB PDF whose page inflates to a gigabyte, or HTML that makes its
parser build 300 bytes per byte, meets the memory limit within a second or two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from quoteproof.defaults import DEFAULT_PARSE_MEMORY_MB, DEFAULT_PARSE_SECONDS
from quoteproof.limited_call import Failure, Limits

MEMORY_PER_MB = 64.0
"""Megabytes of memory allowed per megabyte of file, on top of `memory_mb`."""

SECONDS_PER_MB = 10.0
"""Seconds of CPU time allowed per megabyte of file, on top of `seconds`."""

WALL_FACTOR = 2
"""Clock time allowed, as a multiple of the CPU time allowed (plus `WALL_SLACK_S`)."""

WALL_SLACK_S = 30
"""Clock seconds allowed on top of `WALL_FACTOR` times the CPU time."""

_MB = 1_000_000
_MIB = 2**20


@dataclass(frozen=True)
class ParseLimits:
    """What parsing (and chunking) one file may cost: `memory_mb` megabytes of memory
    and `seconds` of CPU time for any file, plus `memory_per_mb` and
    `seconds_per_mb` per megabyte of the file. Raises ValueError unless the
    first two are positive and the others not negative."""

    memory_mb: float = DEFAULT_PARSE_MEMORY_MB
    seconds: float = DEFAULT_PARSE_SECONDS
    memory_per_mb: float = MEMORY_PER_MB
    seconds_per_mb: float = SECONDS_PER_MB

    def __post_init__(self) -> None:
        if self.memory_mb <= 0 or self.seconds <= 0:
            raise ValueError("parse limits must be positive")
        if self.memory_per_mb < 0 or self.seconds_per_mb < 0:
            raise ValueError("parse limits per megabyte must not be negative")

    def memory_bytes(self, size: int) -> int:
        """Bytes of memory a file of `size` bytes may use to parse."""
        return int((self.memory_mb + self.memory_per_mb * size / _MB) * _MIB)

    def cpu_seconds(self, size: int) -> int:
        """Whole seconds of CPU time a file of `size` bytes may use to parse (the
        kernel counts whole seconds)."""
        return math.ceil(self.seconds + self.seconds_per_mb * size / _MB)

    def for_size(self, size: int, wall_seconds: float | None = None) -> Limits:
        """The limits of a file of `size` bytes; the clock's at most `wall_seconds`."""
        cpu = self.cpu_seconds(size)
        wall = float(WALL_FACTOR * cpu + WALL_SLACK_S)
        if wall_seconds is not None:
            wall = min(wall, wall_seconds)
        return Limits(self.memory_bytes(size), cpu, wall)


def size_text(size: int) -> str:
    """`size` bytes as "512 bytes", "12 KB" or "4.6 MB" (decimal units), for messages."""
    if size < 1000:
        return f"{size} bytes"
    if size < _MB:
        return f"{size / 1000:.0f} KB"
    return f"{size / _MB:,.1f} MB"


def failure_cause(failure: Failure, limits: Limits, size: int) -> str:
    """The one-line cause a file of `size` bytes fails with when its parse under
    `limits` ended with `failure`."""
    of = f"the limit for a file of {size_text(size)}"
    memory = f"{limits.memory_bytes / _MIB:,.0f} MB"
    if failure.kind == "memory":
        return f"parsing needs more than {memory} of memory ({of})"
    if failure.kind == "cpu":
        return f"parsing takes more than {limits.cpu_seconds:g} s of CPU time ({of})"
    if failure.kind == "time":
        return f"parsing took longer than {limits.wall_seconds:.4g} s (the limit)"
    if failure.kind == "crash":
        return (
            f"the parser crashed ({failure.detail}), most likely out of memory: "
            f"it may use {memory} ({of})"
        )
    return f"cannot parse: {failure.detail}"
