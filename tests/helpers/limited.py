"""Calls for `limited_call.LimitedCall` in tests: each costs what its name says
(they run in a child process, so they live in an importable module)."""

from __future__ import annotations

import os
import time


def echo(value: object) -> object:
    return value


def allocate(megabytes: int) -> int:
    """Fill `megabytes` of memory; return its length."""
    return len(bytearray(megabytes * 2**20))


def bytes_of(megabytes: int) -> bytes:
    """A value of `megabytes` to send back."""
    return b"x" * (megabytes * 2**20)


def spin() -> None:
    """Use CPU time until stopped."""
    while True:
        pass


def sleep_forever() -> None:
    """Use no CPU time until stopped."""
    while True:
        time.sleep(60)


def abort() -> None:
    """End the process as a C library does on a failed allocation."""
    os.abort()


def fail(message: str) -> None:
    raise ValueError(message)


def touch_then_sleep(path: str, seconds: float) -> str:
    """Create the file `path`, sleep `seconds`, return "slept"."""
    with open(path, "w"):
        pass
    time.sleep(seconds)
    return "slept"
