"""`ProgressBar`: one rich progress bar on the terminal, shown while a `with` block
runs: the base of the ingest, embed and eval progress displays."""

from __future__ import annotations

from typing import Any, Self

from rich.console import Console
from rich.progress import Progress, ProgressColumn

from quoteproof.closing import ClosedOnExit

__all__ = ["ProgressBar"]


class ProgressBar(ClosedOnExit):
    """A bar of `columns` over one task named `label` (its total unknown until
    `start`; `fields` are the task's own fields), on `console`, removed when done.
    Use as a context manager: the bar shows inside the block."""

    def __init__(
        self, console: Console, label: str, *columns: str | ProgressColumn, **fields: Any
    ) -> None:
        self._progress = Progress(*columns, console=console, transient=True)
        self._task = self._progress.add_task(label, total=None, **fields)

    def __enter__(self) -> Self:
        self._progress.start()
        return self

    def close(self) -> None:
        """Stop the bar and take it off the terminal."""
        self._progress.stop()

    def start(self, total: int) -> None:
        """Set how many steps the bar counts to."""
        self._progress.update(self._task, total=total)
