"""Rendering ingest: a progress display over files and pages, and the summary table.

File names, causes and the index location are shown with `visible_line`: one line
each, control characters visible, never parsed as markup."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import PurePath
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from quoteproof.ingest.formats import format_for
from quoteproof.ingest.pipeline import IngestResult
from quoteproof.render.progress import ProgressBar
from quoteproof.render.visible import visible_line
from quoteproof.retrieval.embed_index import EmbedReport
from quoteproof.retrieval.evidence import AUTOMATIC, Calibration
from quoteproof.store.base import IndexStats

STATUSES = ("added", "updated", "unchanged", "failed", "skipped")

MAX_FILES_SHOWN = 20
"""Ingested or skipped files named in the terminal (all are in the JSON)."""
INGESTED = ("added", "updated")
"""The statuses of a file this run put into the index."""


class _PagesColumn(ProgressColumn):
    """`1,234 pages · 210 pages/s` from the task's `pages` field."""

    def render(self, task: Task) -> Text:
        pages = int(task.fields.get("pages", 0))
        elapsed = task.elapsed or 0.0
        rate = f" · {pages / elapsed:,.0f} pages/s" if elapsed > 0 and pages else ""
        return Text(f"{pages:,} pages{rate}")


class IngestProgress(ProgressBar):
    """A progress bar over files with a running page count and pages/s, on `console`.

    Use as a context manager; call `file_done` after each file. Failures print one
    line (`failed: PATH: cause`) and warnings one line each (`warning: PATH: note`)
    above the bar (`visible_line`, never parsed as markup).
    """

    def __init__(self, console: Console, total_files: int) -> None:
        columns = (TextColumn("ingest"), BarColumn(), MofNCompleteColumn())
        more = (TextColumn("files"), _PagesColumn(), TimeElapsedColumn())
        super().__init__(console, "ingest", *columns, *more, pages=0)
        self.start(total_files)
        self._pages = 0
        self._started = time.perf_counter()

    @property
    def elapsed(self) -> float:
        """Seconds since the progress display was created."""
        return time.perf_counter() - self._started

    def file_done(self, result: IngestResult) -> None:
        """Record one file's result: advance the bar, add its pages, print problems."""
        console = self._progress.console
        path = visible_line(result.path)
        if result.status == "failed":
            line = f"failed: {path}: {visible_line(result.error or 'unknown')}"
            console.print(line, markup=False, soft_wrap=True)
        for warning in result.warnings:
            line = f"warning: {path}: {visible_line(warning)}"
            console.print(line, markup=False, soft_wrap=True)
        self._pages += result.pages
        self._progress.update(self._task, advance=1, pages=self._pages)


class EmbedProgress(ProgressBar):
    """A progress bar over chunks being embedded, with vectors/s, on `console`.

    Use as a context manager; pass `start` and `advance` to `Index.embed` as its
    `on_start` and `on_progress` callbacks.
    """

    def __init__(self, console: Console) -> None:
        columns = (TextColumn("embed"), BarColumn(), MofNCompleteColumn())
        more = (TextColumn("chunks"), _RateColumn(), TimeElapsedColumn())
        super().__init__(console, "embed", *columns, *more)

    def advance(self, count: int) -> None:
        """Record `count` more chunks embedded."""
        self._progress.update(self._task, advance=count)


class _RateColumn(ProgressColumn):
    """`480 chunks/s` from the task's progress."""

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        return Text(f"{task.completed / elapsed:,.0f}/s" if elapsed > 0 and task.completed else "")


def _paged_files(results: Sequence[IngestResult]) -> str:
    """The files of `results` that had pages, counted and named by format: "1 PDF
    file", "3 PDF and Word (.docx) files"."""
    paged = [PurePath(r.path).suffix for r in results if r.pages]
    kinds = {entry.name if (entry := format_for(suffix)) else suffix for suffix in paged}
    return f"{len(paged)} {' and '.join(sorted(kinds))} file{'s' * (len(paged) != 1)}"


def summary_table(
    results: Sequence[IngestResult],
    elapsed: float,
    location: str,
    stats: IndexStats,
    embedding: EmbedReport | None = None,
    threshold: Calibration | None = None,
) -> Table:
    """The table that ends an ingest run: files per status (failed files are named
    with their causes above it, by `IngestProgress`), the time taken with the pages
    read and the files they are in (only PDF and Word files have pages) and their
    speed, new chunks,
    vectors computed (and for how many chunks, when a long chunk had several), the
    embedding model, the index totals (`visible_line`, never markup), and the
    refusal threshold the index applies (`threshold_line`). Each row fits 80
    columns unless a name is longer."""
    table = Table(title="Ingest summary", title_justify="left", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    counted = status_counts(results)
    counts = " · ".join(
        f"{counted[s]} {s}" + (" (above)" if s == "failed" and counted[s] else "") for s in STATUSES
    )  # failed files are named, with their causes, as they fail
    pages = sum(r.pages for r in results)
    speed = f" ({pages / elapsed:,.0f} pages/s)" if elapsed > 0 and pages else ""
    table.add_row("files", counts)
    paged = f" · {pages:,} page{'s' * (pages != 1)} in {_paged_files(results)}" if pages else ""
    table.add_row("time", f"{elapsed:.1f} s{paged}{speed}")
    table.add_row("chunks", f"{sum(r.chunks for r in results):,} new")
    if embedding is not None:
        rate = f" ({embedding.per_second:,.0f}/s)" if embedding.embedded else ""
        done = f"{embedding.embedded:,} computed in {embedding.seconds:.1f} s{rate}"
        if embedding.embedded > embedding.chunks:  # a long chunk has one per passage
            done += f" for {embedding.chunks:,} chunks (a long chunk has one per part)"
        where = f" ({embedding.device})" if embedding.device else ""
        table.add_row("vectors", done)
        table.add_row("model", Text(f"{visible_line(embedding.model)}{where}"))
    totals = f"{visible_line(location)}: {stats.documents} documents, {stats.chunks} chunks"
    table.add_row("index", Text(f"{totals}, {stats.embedded} with vectors"))
    table.add_row("refusal", threshold_line(threshold))
    return table


def threshold_line(threshold: Calibration | None) -> str:
    """What an ingest says of the refusal threshold: calibrated, automatic (with how
    to fit it to the user's own questions), or none (key terms only)."""
    if threshold is None:
        return "no threshold: questions are screened for their key terms only"
    if threshold.source == AUTOMATIC:
        return (
            f"threshold {threshold.threshold:.3f}, estimated from {threshold.unanswerable} "
            "off-topic questions; `quoteproof calibrate` fits it to questions about "
            "your documents"
        )
    asked = threshold.answerable + threshold.unanswerable
    return f"threshold {threshold.threshold:.3f}, calibrated with {asked} of your questions"


def status_counts(results: Sequence[IngestResult]) -> dict[str, int]:
    """How many of `results` have each of STATUSES, in that order."""
    return {status: sum(r.status == status for r in results) for status in STATUSES}


def ingested_table(results: Sequence[IngestResult]) -> Table | None:
    """A table of the files this run added or updated, with their chunks, so that a
    folder's stray file shows (the first `MAX_FILES_SHOWN` of them and a line saying
    how many more; `visible_line`, never markup), or None when none was."""
    rows = [(r.path, r.status, f"{r.chunks:,}") for r in results if r.status in INGESTED]
    return _files_table("Ingested files", ("file", "status", "chunks"), rows)


def skipped_table(results: Sequence[IngestResult]) -> Table | None:
    """A table of the files the folder walks left out and why, the first
    `MAX_FILES_SHOWN` of them and a line saying how many more (`visible_line`,
    never markup), or None when none was."""
    rows = [(r.path, r.reason or "") for r in results if r.status == "skipped"]
    return _files_table("Skipped files", ("file", "reason"), rows)


def _files_table(
    title: str, columns: Sequence[str], rows: Sequence[tuple[str, ...]]
) -> Table | None:
    """A table of `rows` (a file's path first, never cut) under `columns`, at most
    MAX_FILES_SHOWN and a line counting the rest; None when there is no row."""
    if not rows:
        return None
    table = Table(title=title, title_justify="left")
    table.add_column(columns[0], overflow="fold")  # a name is never cut
    for name in columns[1:]:
        table.add_column(name)
    for row in rows[:MAX_FILES_SHOWN]:
        table.add_row(*(Text(visible_line(cell)) for cell in row))
    if len(rows) > MAX_FILES_SHOWN:
        more = len(rows) - MAX_FILES_SHOWN
        blanks = (Text("") for _ in columns[1:])
        table.add_row(Text(f"… and {more} more (all with --format json)"), *blanks)
    return table


def ingest_to_dict(
    results: Sequence[IngestResult],
    location: str,
    stats: IndexStats,
    not_done: Sequence[str] = (),
    finished: bool = True,
) -> dict[str, Any]:
    """An ingest run as JSON: `{"finished", "counts": {status: n}, "files": [{"path",
    "status", "doc_id", "version", "chunks", "pages", "error", "reason",
    "warnings"}], "not_done": [path], "index": {"location", "documents", "chunks",
    "with_vectors"}}`. An interrupted run is not `finished`; `not_done` names the
    files it did not ingest."""
    return {
        "finished": finished,
        "counts": status_counts(results),
        "files": [{**asdict(r), "warnings": list(r.warnings)} for r in results],
        "not_done": list(not_done),
        "index": {
            "location": location,
            "documents": stats.documents,
            "chunks": stats.chunks,
            "with_vectors": stats.embedded,
        },
    }


INTERRUPTED_STAGES = {
    "files": "no vectors and no refusal threshold computed for them",
    "vectors": "vectors not all computed, refusal threshold not estimated",
    "threshold": "refusal threshold not estimated",
}
"""What an ingest interrupted at each stage left undone."""


def interrupted_message(
    done: Sequence[IngestResult], not_done: int, stage: str, location: str
) -> str:
    """What an interrupted ingest did and did not do, in one line: the files `done`
    by status, how many it did not ingest (`not_done`), what the `stage` it stopped at (a key of
    `INTERRUPTED_STAGES`) left undone, and that the index answers no question until
    an ingest into it finishes (`visible_line`)."""
    counts = ", ".join(f"{n} {status}" for status, n in status_counts(done).items() if n)
    return (
        f"interrupted: {len(done)} of {len(done) + not_done} files done "
        f"({counts or 'none'}), {not_done} not ingested; {INTERRUPTED_STAGES[stage]}. Until "
        f"an ingest into {visible_line(location)} finishes, it answers no question: run "
        "the same `quoteproof ingest` again (files already stored are skipped)."
    )
