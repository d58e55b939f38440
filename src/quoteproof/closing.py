"""`ClosedOnExit`: what holds something open (an index, a store, a PDF, a progress
bar) is closed at the end of a `with` block."""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["ClosedOnExit"]


class ClosedOnExit:
    """A base for what holds something open: `with x:` closes it (`close`) at the end."""

    def close(self) -> None:
        """Release what this holds."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
