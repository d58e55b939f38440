"""Rendering a refusal-threshold calibration as a terminal table."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from quoteproof.render.visible import visible_line
from quoteproof.retrieval.evidence import Calibration


def calibration_table(calibration: Calibration, location: str) -> Table:
    """A table of the stored threshold, its evidence kind and how it classified the
    labelled questions. Text from the index is never parsed as markup."""
    table = Table(title="Refusal threshold", title_justify="left", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    c = calibration
    table.add_row("threshold", f"{c.threshold:.4f}")
    table.add_row("evidence", Text(c.evidence_kind))
    table.add_row("answerable", f"{c.answerable} ({c.false_refusals} would be refused)")
    table.add_row("unanswerable", f"{c.unanswerable} ({c.missed_refusals} would not be refused)")
    table.add_row("accuracy", f"{c.accuracy:.1%}")
    table.add_row("stored in", Text(visible_line(location)))
    return table
