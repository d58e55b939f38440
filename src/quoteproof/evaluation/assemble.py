"""A finished evaluation run as it is saved and shown: the report (with the drift
since an earlier run), where it is written, and the lines naming what failed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quoteproof.evaluation.compare import Drift, compare_reports, drift_to_dict
from quoteproof.evaluation.report import ReportError, run_to_dict, write_json
from quoteproof.evaluation.report_html import render_report_html
from quoteproof.evaluation.runner import EvalRun


@dataclass(frozen=True)
class EvalReport:
    """The report of `run` (`report.run_to_dict`, plus `compare` when there was an
    earlier run) and the drift since that run (None without one)."""

    run: EvalRun
    report: dict[str, Any]
    drift: Drift | None

    @property
    def failed(self) -> bool:
        """True when a shown quote was not verbatim or a question failed."""
        return bool(self.run.metrics.not_verbatim or self.run.metrics.errors)

    def problem_lines(self) -> list[str]:
        """One line per shown quote that was not verbatim, then one per question that
        failed."""
        lines = [
            f"NOT VERBATIM {f['item_id']} {f['quote_id']} [{f['ref']}]: {f['reason']}"
            for f in self.report["verbatim_failures"]
        ]
        lines += [
            f"failed: {result.item.id}: {result.error}"
            for result in self.run.items
            if result.error is not None
        ]
        return lines


def report_paths(set_path: Path, output: Path | None, html: Path | None) -> tuple[Path, Path]:
    """Where the JSON and the HTML report go: `output` (default `eval-<set name>.json`
    in the working directory) and `html` (default: beside the JSON, `.html`)."""
    json_path = output or Path(f"eval-{set_path.stem}.json")
    return json_path, html or json_path.with_suffix(".html")


def assemble_report(
    run: EvalRun,
    *,
    set_path: Path,
    set_items: int,
    index: str,
    sample_size: int | None,
    seed: int | None,
    retriever: str | None,
    earlier: tuple[str, dict[str, Any]] | None = None,
) -> EvalReport:
    """The report of `run` over the set at `set_path` (of `set_items` questions) and
    `index`; `earlier` is (its name, its loaded report) to compare with."""
    report = run_to_dict(
        run,
        set_path=set_path,
        set_items=set_items,
        index=index,
        sample_size=sample_size,
        seed=seed,
        retriever=retriever,
    )
    drift = None
    if earlier is not None:
        drift = compare_reports(earlier[1], report, earlier[0])
        report["compare"] = drift_to_dict(drift)
    return EvalReport(run, report, drift)


def write_report(report: dict[str, Any], json_path: Path, html_path: Path) -> None:
    """Write `report` as JSON to `json_path` and as HTML to `html_path` (creating its
    folder). Raises `ReportError` when either cannot be written."""
    try:
        write_json(json_path, report)
        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(render_report_html(report), encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"cannot write the report: {exc}") from exc
