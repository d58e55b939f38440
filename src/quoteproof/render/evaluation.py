"""`quoteproof eval` on the terminal: a progress bar over the questions, the
summary table of a run, its faithfulness per answer mode and, for a graded run, its
grades."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from quoteproof.evaluation.compare import drift_lines
from quoteproof.evaluation.report import (
    faithfulness_by_mode,
    flat_metrics,
    format_value,
    metric_specs,
    worst_graded,
)
from quoteproof.evaluation.runner import ItemResult
from quoteproof.render.progress import ProgressBar
from quoteproof.render.visible import visible_line

__all__ = ["EvalProgress", "drift_lines", "faithfulness_lines", "grading_lines", "summary_table"]


class EvalProgress(ProgressBar):
    """A progress bar over the questions with running counts of answered, refused and
    failed ones, on `console` (stderr). Use as a context manager; pass `start` and
    `item_done` to `run_eval` as `on_start` and `on_item`."""

    def __init__(self, console: Console, label: str = "eval") -> None:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        more = (TextColumn("{task.fields[counts]}"), TimeElapsedColumn(), TimeRemainingColumn())
        super().__init__(console, label, *columns, *more, counts="")
        self.counts = {"answered": 0, "refused": 0, "error": 0}

    def item_done(self, result: ItemResult) -> None:
        """Count one finished question and advance the bar."""
        self.counts[result.status] = self.counts.get(result.status, 0) + 1
        counts = " · ".join(f"{n} {name}" for name, n in self.counts.items() if n)
        self._progress.update(self._task, advance=1, counts=counts)


def summary_table(report: Mapping[str, Any]) -> Table:
    """The metrics of a saved run as a two-column table titled with the set's name."""
    metrics = report.get("metrics")
    metrics = metrics if isinstance(metrics, dict) else {}
    set_info = report.get("set")
    name = set_info.get("name") if isinstance(set_info, dict) else None
    table = Table(title=Text(f"eval {visible_line(str(name))}"), title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row(
        "questions",
        f"{metrics.get('items')} ({metrics.get('answerable')} answerable, "
        f"{metrics.get('unanswerable')} unanswerable)",
    )
    flat = flat_metrics(metrics)
    for spec in metric_specs(metrics):
        value = flat.get(spec.key)
        text = format_value(value, spec.kind)
        if spec.key == "verbatim_rate" and value is not None and value < 1:
            text += "  FAIL"
        table.add_row(spec.label, text)
    checked = metrics.get("quotes_checked")
    table.caption = f"{checked} shown quotes re-read from the index"
    return table


def grading_lines(report: Mapping[str, Any], worst: int = 5) -> list[str]:
    """A graded run's grades: the grader, the count of each grade, the malformed
    grades (each with its problem) and the `worst` lowest-graded questions with the
    grader's justification. No lines for a run that was not graded. Every string
    from the run is made one visible line."""
    metrics = report.get("metrics")
    grading = metrics.get("grading") if isinstance(metrics, dict) else None
    if not isinstance(grading, dict):
        return []
    config = report.get("config")
    grader = config.get("grader") if isinstance(config, dict) else None
    grader = grader if isinstance(grader, dict) else {}
    items = [item for item in report.get("items") or () if isinstance(item, dict)]
    distribution = grading.get("distribution")
    counts = distribution if isinstance(distribution, dict) else {}
    lines = [
        f"grader: {visible_line(str(grader.get('backend')))} · "
        f"{visible_line(str(grader.get('model')))}; {grading.get('graded')} of "
        f"{grading.get('gradable')} answers graded, {grading.get('malformed')} malformed, "
        f"{grading.get('errors')} not graded",
        "grades: " + ", ".join(f"{n}: {counts.get(str(n), 0)}" for n in range(5, 0, -1)),
    ]
    for item in items:
        grade = item.get("grade")
        if isinstance(grade, dict) and grade.get("status") in ("malformed", "error"):
            lines.append(
                f"{grade.get('status')} grade: {visible_line(str(item.get('id')))}: "
                f"{visible_line(str(grade.get('problem')))}"
            )
    for worst_item in worst_graded(items, worst):
        graded = worst_item["grade"]
        lines.append(
            f"worst: {visible_line(str(worst_item.get('id')))} grade {graded['grade']} "
            f"{graded['verdict']}: {visible_line(str(graded.get('justification')))}"
        )
    return lines


def faithfulness_lines(report: Mapping[str, Any]) -> list[str]:
    """A run's faithfulness per answer mode, one line each: the mean score of the
    answers that make claims of their own, how many did, of how many answers, and the
    method asked for. No lines for a run saved before faithfulness was reported."""
    metrics = report.get("metrics")
    modes = faithfulness_by_mode(metrics if isinstance(metrics, dict) else {})
    if not modes:
        return []
    config = report.get("config")
    method = config.get("faithfulness") if isinstance(config, dict) else None
    lines = [f"faithfulness per mode ({visible_line(str(method))} check):"]
    for mode, answers, scored, mean in modes:
        lines.append(
            f"  {visible_line(mode)}: {format_value(mean, 'rate')} "
            f"({scored} of {answers} answers make claims of their own)"
        )
    return lines
