"""An evaluation run as JSON (`"schema": "quoteproof.eval/1"`), and the metrics read
back from it for the terminal, comparisons and the HTML page (`report_html`).

The JSON holds everything the HTML shows (each item's whole answer included), so
`report_html.render_report_html` works from a saved run alone.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from quoteproof import __version__
from quoteproof.codec import answer_to_dict
from quoteproof.errors import QuoteproofError
from quoteproof.evaluation.grading import Grade, summarize_grades
from quoteproof.evaluation.metrics import QuoteOverlap, RunMetrics, recall_at_k
from quoteproof.evaluation.runner import EvalRun, ItemResult
from quoteproof.model import Answer

__all__ = [
    "REPORT_SCHEMA",
    "MetricSpec",
    "ReportError",
    "as_number",
    "faithfulness_by_mode",
    "faithfulness_to_dict",
    "file_sha256",
    "flat_metrics",
    "format_delta",
    "format_value",
    "grade_to_dict",
    "load_report",
    "metric_specs",
    "recall_keys",
    "run_to_dict",
    "worst_graded",
    "write_json",
]

REPORT_SCHEMA = "quoteproof.eval/1"

Kind = Literal["rate", "ms", "count", "grade"]


class ReportError(QuoteproofError):
    """A run cannot be written, or a saved run cannot be read (not JSON, not a
    `quoteproof.eval/1` run)."""


# --- JSON -------------------------------------------------------------------------------


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def metrics_to_dict(metrics: RunMetrics) -> dict[str, Any]:
    """Return the run's metrics as JSON-ready data (rates 0-1, latency in ms)."""
    return {
        "items": metrics.items,
        "answerable": metrics.answerable,
        "unanswerable": metrics.unanswerable,
        "errors": metrics.errors,
        "quotes_checked": metrics.quotes_checked,
        "not_verbatim": metrics.not_verbatim,
        "verbatim_rate": _round(metrics.verbatim_rate),
        "quote_precision": _round(metrics.quote_precision),
        "quote_recall": _round(metrics.quote_recall),
        "citation_accuracy": _round(metrics.citation_accuracy),
        "refusal_correct": _round(metrics.refusal_correct),
        "false_refusal_rate": _round(metrics.false_refusal_rate),
        "retrieval_recall": {str(k): _round(v) for k, v in metrics.retrieval_recall.items()},
        "latency_ms": {
            "p50": _round(metrics.latency_p50_ms, 3),
            "p95": _round(metrics.latency_p95_ms, 3),
        },
        "tokens": {"prompt": metrics.prompt_tokens, "completion": metrics.completion_tokens},
        "faithfulness": {
            "mean": _round(metrics.faithfulness),
            "scored": sum(m.scored for m in metrics.faithfulness_by_mode.values()),
            "by_mode": {
                mode: {"answers": m.answers, "scored": m.scored, "mean": _round(m.mean)}
                for mode, m in metrics.faithfulness_by_mode.items()
            },
        },
    }


def grade_to_dict(grade: Grade | None) -> dict[str, Any] | None:
    """One item's grade as JSON-ready data (None: not graded)."""
    return dataclasses.asdict(grade) if grade is not None else None


def grading_to_dict(grades: Sequence[Grade]) -> dict[str, Any]:
    """The grades of a run, summarized (`grading.summarize_grades`)."""
    summary = summarize_grades(grades)
    return {
        "gradable": summary.gradable,
        "graded": summary.graded,
        "malformed": summary.malformed,
        "errors": summary.errors,
        "correct": summary.correct,
        "accuracy": _round(summary.accuracy),
        "mean_grade": _round(summary.mean_grade, 4),
        "distribution": {str(n): count for n, count in summary.distribution.items()},
    }


def _overlap_to_dict(overlap: QuoteOverlap | None) -> dict[str, int] | None:
    if overlap is None:
        return None
    return {
        "shown_chars": overlap.shown_chars,
        "overlap_chars": overlap.overlap_chars,
        "gold_chars": overlap.gold_chars,
        "covered_chars": overlap.covered_chars,
    }


def faithfulness_to_dict(answer: Answer | None) -> dict[str, Any] | None:
    """An answer's faithfulness in brief (None: no answer, or none assessed): its
    score, method, the claims shown and how many of them are supported, and the
    generated sentences removed (each counted unsupported)."""
    found = answer.faithfulness if answer is not None else None
    if found is None:
        return None
    return {
        "score": _round(found.score),
        "method": found.method,
        "claims": len(found.claims),
        "supported": sum(claim.supported for claim in found.claims),
        "removed": found.removed,
    }


def item_to_dict(result: ItemResult, ks: Sequence[int], top_k: int) -> dict[str, Any]:
    """Return one item's result as JSON-ready data."""
    item, scores, answer = result.item, result.scores, result.answer
    overlap = scores.overlap
    citations = scores.citations
    ranks = dict(scores.ranks) if scores.ranks else None
    return {
        "id": item.id,
        "line": item.line,
        "question": item.question,
        "answerable": item.answerable,
        "gold_refs": list(item.gold_refs),
        "gold_quotes": list(item.gold_quotes),
        "gold_answer": item.gold_answer,
        "status": result.status,
        "refusal_reason": answer.refusal_reason if answer else None,
        "error": result.error,
        "latency_ms": _round(scores.latency_ms, 3),
        "usage": (
            {"prompt_tokens": scores.usage[0], "completion_tokens": scores.usage[1]}
            if scores.usage
            else None
        ),
        "quotes_shown": len(answer.quotes) if answer else 0,
        "cited_shown": len(answer.cited) if answer else 0,
        "quotes_checked": scores.quotes_checked,
        "not_verbatim": [dataclasses.asdict(f) for f in result.not_verbatim],
        "quote_precision": _round(overlap.precision) if overlap else None,
        "quote_recall": _round(overlap.recall) if overlap else None,
        "overlap": _overlap_to_dict(overlap),
        "unlocated_gold_quotes": list(result.unlocated),
        "citation_accuracy": (
            _round(citations[0] / citations[1]) if citations and citations[1] else None
        ),
        "citations": {"correct": citations[0], "total": citations[1]} if citations else None,
        "gold_ranks": ranks,
        "retrieval_recall": (
            {str(k): _round(recall_at_k(ranks, k)) for k in ks} if ranks else None
        ),
        "recall_hit": result.hit_at(top_k),
        "missing_gold_refs": list(result.missing_refs),
        "faithfulness": faithfulness_to_dict(answer),
        "answer": answer_to_dict(answer) if answer else None,
        "grade": grade_to_dict(result.grade),
    }


def run_to_dict(
    run: EvalRun,
    *,
    set_path: str | Path,
    set_items: int,
    index: str,
    sample_size: int | None = None,
    seed: int | None = None,
    retriever: str | None = None,
) -> dict[str, Any]:
    """Return `run` as the JSON-ready report (`"schema": "quoteproof.eval/1"`).

    `set_items` is how many items the set holds (the run may be a sample of
    `sample_size` drawn with `seed`); `retriever` the retriever asked for (None:
    the index's default; the one used is in each answer's `retrieval`). A graded run
    has `config.grader` and `metrics.grading`; each item its `grade`.
    """
    options = run.options
    used = sorted(
        {
            r.answer.retrieval.retriever
            for r in run.items
            if r.answer is not None and r.answer.retrieval is not None
        }
    )
    path = Path(set_path)
    metrics = metrics_to_dict(run.metrics)
    if run.grader is not None:
        metrics["grading"] = grading_to_dict([r.grade for r in run.items if r.grade is not None])
    return {
        "schema": REPORT_SCHEMA,
        "quoteproof_version": __version__,
        "set": {
            "path": str(path),
            "name": path.stem,
            "sha256": file_sha256(path) if path.is_file() else None,
            "items": set_items,
            "sample": {"size": sample_size, "seed": seed},
        },
        "index": index,
        "config": {
            "backend": options.backend.name,
            "model": options.backend.model,
            "mode": options.mode,
            "strictness": options.strictness,
            "top_k": options.top_k,
            "threshold": options.threshold,
            "max_steps": options.max_steps,
            "faithfulness": options.faithfulness,
            "collections": list(options.collections) if options.collections else None,
            "retriever": retriever,
            "retrievers_used": used,
            "recall_k": list(run.ks),
            "depth": run.depth,
            "grader": ({"backend": run.grader[0], "model": run.grader[1]} if run.grader else None),
        },
        "started": run.started,
        "duration_s": round(run.duration_s, 3),
        "metrics": metrics,
        "verbatim_failures": [dataclasses.asdict(f) for r in run.items for f in r.not_verbatim],
        "items": [item_to_dict(r, run.ks, options.top_k) for r in run.items],
        "compare": None,
    }


def file_sha256(path: str | Path) -> str:
    """The hex SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_json(path: str | Path, report: Mapping[str, Any]) -> None:
    """Write `report` as indented UTF-8 JSON (parent folders created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def load_report(path: str | Path) -> dict[str, Any]:
    """Read a saved run; raise `ReportError` unless it is a `quoteproof.eval/1` run
    with metrics and items."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReportError(f"{path}: not a readable evaluation run: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != REPORT_SCHEMA:
        raise ReportError(f'{path}: not an evaluation run ("schema": "{REPORT_SCHEMA}" expected)')
    if not isinstance(data.get("metrics"), dict) or not isinstance(data.get("items"), list):
        raise ReportError(f'{path}: an evaluation run needs "metrics" and "items"')
    if not all(isinstance(item, dict) for item in data["items"]):
        raise ReportError(f'{path}: every entry of "items" must be an object')
    return data


def worst_graded(items: Sequence[Mapping[str, Any]], count: int = 5) -> list[Mapping[str, Any]]:
    """The `count` graded items of a saved run with the lowest grades (INCORRECT
    before CORRECT at the same grade, then in set order)."""
    graded = [
        item
        for item in items
        if isinstance(grade := item.get("grade"), dict) and isinstance(grade.get("grade"), int)
    ]
    graded.sort(key=lambda item: (item["grade"]["grade"], item["grade"]["verdict"] == "CORRECT"))
    return graded[:count]


# --- metrics, flat ---------------------------------------------------------------------


@dataclass(frozen=True)
class MetricSpec:
    """How one flat metric is labelled, shown, and which way is better."""

    key: str
    label: str
    kind: Kind
    higher_is_better: bool


_RATE_SPECS = (
    MetricSpec("verbatim_rate", "verbatim rate", "rate", True),
    MetricSpec("quote_precision", "quote precision", "rate", True),
    MetricSpec("quote_recall", "quote recall", "rate", True),
    MetricSpec("citation_accuracy", "citation accuracy", "rate", True),
    MetricSpec("faithfulness", "faithfulness (mean)", "rate", True),
    MetricSpec("refusal_correct", "refusal correct (unanswerable)", "rate", True),
    MetricSpec("false_refusal_rate", "false refusals (answerable)", "rate", False),
)


def recall_keys(metrics: Mapping[str, Any]) -> list[int]:
    """The k of each retrieval recall@k in `metrics` (a report's), in order."""
    recall = metrics.get("retrieval_recall")
    if not isinstance(recall, dict):
        return []
    return sorted(int(k) for k in recall if str(k).isdigit())


_GRADING_SPECS = (
    MetricSpec("accuracy", "accuracy (grader)", "rate", True),
    MetricSpec("mean_grade", "mean grade (grader, 1-5)", "grade", True),
    MetricSpec("malformed_grades", "malformed grades", "count", False),
)


def faithfulness_by_mode(metrics: Mapping[str, Any]) -> list[tuple[str, int, int, float | None]]:
    """A saved run's faithfulness per answer mode: (mode, answers, answers scored,
    mean score or None), in the report's order; none for a run saved before
    faithfulness was reported."""
    faithfulness = metrics.get("faithfulness")
    by_mode = faithfulness.get("by_mode") if isinstance(faithfulness, dict) else None
    if not isinstance(by_mode, dict):
        return []
    return [
        (str(mode), int(as_number(m.get("answers")) or 0), int(as_number(m.get("scored")) or 0),
         as_number(m.get("mean")))
        for mode, m in by_mode.items()
        if isinstance(m, dict)
    ]  # fmt: skip


def metric_specs(*reports_metrics: Mapping[str, Any]) -> list[MetricSpec]:
    """The flat metrics of one or more runs' `metrics`, in display order (recall@k
    for every k any of them has; the grader's when any of them was graded)."""
    ks = sorted({k for metrics in reports_metrics for k in recall_keys(metrics)})
    graded = any(isinstance(metrics.get("grading"), dict) for metrics in reports_metrics)
    return [
        *_RATE_SPECS,
        *(_GRADING_SPECS if graded else ()),
        *(MetricSpec(f"recall@{k}", f"retrieval recall@{k}", "rate", True) for k in ks),
        MetricSpec("latency_p50_ms", "latency p50", "ms", False),
        MetricSpec("latency_p95_ms", "latency p95", "ms", False),
        MetricSpec("prompt_tokens", "prompt tokens", "count", False),
        MetricSpec("completion_tokens", "completion tokens", "count", False),
        MetricSpec("errors", "errors", "count", False),
    ]


def as_number(value: object) -> float | None:
    """`value` when it is a number (not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def flat_metrics(metrics: Mapping[str, Any]) -> dict[str, float | None]:
    """A run's `metrics` as `{key: number or None}` with the keys of `metric_specs`."""
    flat = {spec.key: as_number(metrics.get(spec.key)) for spec in _RATE_SPECS}
    faithfulness = metrics.get("faithfulness")
    flat["faithfulness"] = (
        as_number(faithfulness.get("mean")) if isinstance(faithfulness, dict) else None
    )
    recall = metrics.get("retrieval_recall")
    for k in recall_keys(metrics):
        assert isinstance(recall, dict)
        flat[f"recall@{k}"] = as_number(recall.get(str(k)))
    latency = metrics.get("latency_ms")
    latency = latency if isinstance(latency, dict) else {}
    flat["latency_p50_ms"] = as_number(latency.get("p50"))
    flat["latency_p95_ms"] = as_number(latency.get("p95"))
    tokens = metrics.get("tokens")
    tokens = tokens if isinstance(tokens, dict) else {}
    flat["prompt_tokens"] = as_number(tokens.get("prompt"))
    flat["completion_tokens"] = as_number(tokens.get("completion"))
    flat["errors"] = as_number(metrics.get("errors"))
    grading = metrics.get("grading")
    if isinstance(grading, dict):
        flat["accuracy"] = as_number(grading.get("accuracy"))
        flat["mean_grade"] = as_number(grading.get("mean_grade"))
        flat["malformed_grades"] = as_number(grading.get("malformed"))
    return flat


def format_value(value: float | None, kind: Kind) -> str:
    """`97.5%`, `123.4 ms`, `1,024`, `4.13/5`, or `—` for no value."""
    return _formatted(value, kind, sign="", rate_unit="%")


def format_delta(delta: float | None, kind: Kind) -> str:
    """`+1.5 pp`, `-20.0 ms`, `+3`, `+0.25`, or `—`."""
    return _formatted(delta, kind, sign="+", rate_unit=" pp")


def _formatted(value: float | None, kind: Kind, sign: str, rate_unit: str) -> str:
    """`value` of `kind` with `sign` (`+`: always signed), a rate in percent followed
    by `rate_unit`; `—` for no value."""
    if value is None:
        return "—"
    if kind == "rate":
        return f"{value * 100:{sign}.1f}{rate_unit}"
    if kind == "ms":
        return f"{value:{sign},.1f} ms"
    if kind == "grade":
        return f"{value:{sign}.2f}" + ("/5" if not sign else "")
    return f"{value:{sign},.0f}"
