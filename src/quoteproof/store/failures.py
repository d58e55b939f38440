"""Database errors at the store boundary: every one leaves a store as a `StoreError`.

A driver error met in normal use (a full disk, a database locked by another
process, a read-only index directory, a damaged database file, a lost server
connection) is not a bug, and must reach every face as the error it is: one line
and exit 2 in the CLI, a JSON error from the HTTP API. A store class decorated with
`store_errors` lets its driver's errors out of its public methods only as a
`StoreError` whose message names the index and says the cause in plain words (the
driver's own text follows in parentheses); the driver's exception is its
`__cause__`. A write that fails this way was one transaction that did not commit,
so the index holds what it held before it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from quoteproof.errors import StoreError

__all__ = ["store_error", "store_errors"]

StoreClass = TypeVar("StoreClass", bound=type)

Explain = Callable[[BaseException], str | None]
"""Says the cause of a driver error in plain words, or None when there is nothing
to add to the driver's own text."""


def store_error(location: str, exc: BaseException, explain: Explain, driver: str) -> StoreError:
    """The `StoreError` for the driver error `exc` met on the index at `location`:
    `index LOCATION: CAUSE (DRIVER: its text)`, on one line."""
    detail = " ".join(str(exc).split()) or type(exc).__name__
    cause = explain(exc)
    message = f"{cause} ({driver}: {detail})" if cause else f"{driver}: {detail}"
    return StoreError(f"index {location}: {message}")


def store_errors(
    driver_errors: type[BaseException] | tuple[type[BaseException], ...],
    explain: Explain,
    driver: str,
) -> Callable[[StoreClass], StoreClass]:
    """A class decorator: each public method of the class, its own or inherited (a
    name not starting with `_`), raises `store_error(self.location, ...)` from any
    `driver_errors` it meets. Class and static methods are left as they are."""

    def decorate(cls: StoreClass) -> StoreClass:
        for name in dir(cls):
            member = inspect.getattr_static(cls, name)
            if not name.startswith("_") and inspect.isfunction(member):
                setattr(cls, name, _guarded(member, driver_errors, explain, driver))
        return cls

    return decorate


def _guarded(
    method: Callable[..., Any],
    driver_errors: type[BaseException] | tuple[type[BaseException], ...],
    explain: Explain,
    driver: str,
) -> Callable[..., Any]:
    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except driver_errors as exc:
            raise store_error(self.location, exc, explain, driver) from exc

    return guarded
