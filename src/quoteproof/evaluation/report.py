"""An evaluation run as JSON (`"schema": "quoteproof.eval/1"`) and as one
self-contained HTML page.

The JSON holds everything the HTML shows (each item's whole answer included), so
`render_report_html` works from a saved run alone. The HTML page has no scripts:
inline CSS allowed by hash in its Content-Security-Policy, plots as `data:` PNG
images, and every string taken from the run (questions, ids, gold text, errors,
paths) escaped; answers are drawn by the project's safe renderer,
`quoteproof.render.html.render_answer_html`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from quoteproof import __version__
from quoteproof.codec import answer_from_dict, answer_to_dict
from quoteproof.errors import QuoteproofError
from quoteproof.evaluation import plots
from quoteproof.evaluation.metrics import QuoteOverlap, RunMetrics, recall_at_k
from quoteproof.evaluation.runner import EvalRun, ItemResult, NotVerbatim
from quoteproof.receipts import answer_as_recorded
from quoteproof.render.html import PAGE_CSS, escape, render_answer_html

__all__ = [
    "REPORT_SCHEMA",
    "MetricSpec",
    "ReportError",
    "file_sha256",
    "flat_metrics",
    "format_value",
    "load_report",
    "metric_specs",
    "render_report_html",
    "run_to_dict",
    "write_json",
]

REPORT_SCHEMA = "quoteproof.eval/1"

Kind = Literal["rate", "ms", "count"]


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
    }


def _not_verbatim_to_dict(failure: NotVerbatim) -> dict[str, Any]:
    return {
        "item_id": failure.item_id,
        "quote_id": failure.quote_id,
        "ref": failure.ref,
        "doc_id": failure.doc_id,
        "doc_version": failure.doc_version,
        "start": failure.start,
        "end": failure.end,
        "reason": failure.reason,
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
        "not_verbatim": [_not_verbatim_to_dict(f) for f in result.not_verbatim],
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
        "answer": answer_to_dict(answer) if answer else None,
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
    the index's default; the one used is in each answer's `retrieval`).
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
            "collections": list(options.collections) if options.collections else None,
            "retriever": retriever,
            "retrievers_used": used,
            "recall_k": list(run.ks),
            "depth": run.depth,
        },
        "started": run.started,
        "duration_s": round(run.duration_s, 3),
        "metrics": metrics_to_dict(run.metrics),
        "verbatim_failures": [_not_verbatim_to_dict(f) for r in run.items for f in r.not_verbatim],
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
    MetricSpec("refusal_correct", "refusal correct (unanswerable)", "rate", True),
    MetricSpec("false_refusal_rate", "false refusals (answerable)", "rate", False),
)


def _recall_keys(metrics: Mapping[str, Any]) -> list[int]:
    recall = metrics.get("retrieval_recall")
    if not isinstance(recall, dict):
        return []
    return sorted(int(k) for k in recall if str(k).isdigit())


def metric_specs(*reports_metrics: Mapping[str, Any]) -> list[MetricSpec]:
    """The flat metrics of one or more runs' `metrics`, in display order (recall@k
    for every k any of them has)."""
    ks = sorted({k for metrics in reports_metrics for k in _recall_keys(metrics)})
    return [
        *_RATE_SPECS,
        *(MetricSpec(f"recall@{k}", f"retrieval recall@{k}", "rate", True) for k in ks),
        MetricSpec("latency_p50_ms", "latency p50", "ms", False),
        MetricSpec("latency_p95_ms", "latency p95", "ms", False),
        MetricSpec("prompt_tokens", "prompt tokens", "count", False),
        MetricSpec("completion_tokens", "completion tokens", "count", False),
        MetricSpec("errors", "errors", "count", False),
    ]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def flat_metrics(metrics: Mapping[str, Any]) -> dict[str, float | None]:
    """A run's `metrics` as `{key: number or None}` with the keys of `metric_specs`."""
    flat = {spec.key: _number(metrics.get(spec.key)) for spec in _RATE_SPECS}
    recall = metrics.get("retrieval_recall")
    for k in _recall_keys(metrics):
        assert isinstance(recall, dict)
        flat[f"recall@{k}"] = _number(recall.get(str(k)))
    latency = metrics.get("latency_ms")
    latency = latency if isinstance(latency, dict) else {}
    flat["latency_p50_ms"] = _number(latency.get("p50"))
    flat["latency_p95_ms"] = _number(latency.get("p95"))
    tokens = metrics.get("tokens")
    tokens = tokens if isinstance(tokens, dict) else {}
    flat["prompt_tokens"] = _number(tokens.get("prompt"))
    flat["completion_tokens"] = _number(tokens.get("completion"))
    flat["errors"] = _number(metrics.get("errors"))
    return flat


def format_value(value: float | None, kind: Kind) -> str:
    """`97.5%`, `123.4 ms`, `1,024`, or `—` for no value."""
    if value is None:
        return "—"
    if kind == "rate":
        return f"{value * 100:.1f}%"
    if kind == "ms":
        return f"{value:,.1f} ms"
    return f"{value:,.0f}"


def format_delta(delta: float | None, kind: Kind) -> str:
    """`+1.5 pp`, `-20.0 ms`, `+3`, or `—`."""
    if delta is None:
        return "—"
    if kind == "rate":
        return f"{delta * 100:+.1f} pp"
    if kind == "ms":
        return f"{delta:+,.1f} ms"
    return f"{delta:+,.0f}"


# --- HTML ------------------------------------------------------------------------------

REPORT_CSS = """\
body{max-width:80rem}
table.grid{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
table.grid th,table.grid td{border:1px solid #d1d5db;padding:.25rem .5rem;text-align:left;
vertical-align:top}
table.grid th{background:#f3f4f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.wrong td{background:#fef2f2}
.status-refused{color:#92400e}.status-error{color:#7f1d1d;font-weight:700}
.better{color:#14532d}.worse{color:#7f1d1d}
.fail{color:#7f1d1d;font-weight:700}.pass{color:#14532d;font-weight:700}
.plots{display:flex;flex-wrap:wrap;gap:1rem}
.plots figure{margin:0}.plots img{max-width:100%;height:auto;border:1px solid #e5e7eb}
section.item{border-top:2px solid #e5e7eb;margin-top:2rem;padding-top:.5rem}
.item-facts{display:grid;grid-template-columns:auto 1fr;gap:0 1rem}
.item-facts dt{font-weight:600}.item-facts dd{margin:0}
.gold-quote{border-left:4px solid #9ca3af;padding-left:.75rem;color:#374151;white-space:pre-wrap}
.gold-label{font-size:.85rem;font-style:italic;color:#4b5563;margin:.5rem 0 0}
.meta{color:#4b5563}
"""

_ANSWER_IDS = re.compile(r'(id="|href="#)qp-')


def _e(value: object) -> str:
    """Any value from the run, as escaped HTML character data."""
    return escape("" if value is None else str(value))


def _style_hash(css: str) -> str:
    digest = hashlib.sha256(css.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _png(data: bytes | None, alt: str, caption: str) -> str:
    if data is None:
        return ""
    encoded = base64.b64encode(data).decode("ascii")
    return (
        f'<figure><img alt="{_e(alt)}" src="data:image/png;base64,{encoded}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _items(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [item for item in _list(report.get("items")) if isinstance(item, dict)]


def _recall_points(report: Mapping[str, Any]) -> list[tuple[int, float]]:
    """Recall at every k from 1 to the run's depth, from each item's gold ranks."""
    depth = _number(_dict(report.get("config")).get("depth")) or 0
    ranked = [
        {str(ref): rank if isinstance(rank, int) else None for ref, rank in ranks.items()}
        for item in _items(report)
        if isinstance(ranks := item.get("gold_ranks"), dict) and ranks
    ]
    if not ranked:
        return []
    points = []
    for k in range(1, int(depth) + 1):
        values = [v for ranks in ranked if (v := recall_at_k(ranks, k)) is not None]
        points.append((k, sum(values) / len(values)))
    return points


def _plots(report: Mapping[str, Any], flat: Mapping[str, float | None]) -> str:
    if not plots.plots_available():
        return "<p class=\"meta\">Plots need matplotlib: pip install 'quoteproof[eval]'.</p>"
    latencies = [
        float(v) for item in _items(report) if (v := _number(item.get("latency_ms"))) is not None
    ]
    rates = {
        spec.label: flat.get(spec.key)
        for spec in metric_specs(_dict(report.get("metrics")))
        if spec.kind == "rate"
    }
    figures = [
        _png(plots.metric_bars(rates), "bar chart of the rate metrics", "Metrics"),
        _png(
            plots.recall_curve(_recall_points(report)),
            "retrieval recall of the gold sources against k",
            "Retrieval recall@k",
        ),
        _png(
            plots.latency_histogram(latencies),
            "histogram of ask latencies",
            "Latency of ask",
        ),
    ]
    return f'<div class="plots">{"".join(figures)}</div>'


def _metrics_table(flat: Mapping[str, float | None], specs: Sequence[MetricSpec]) -> str:
    rows = []
    for spec in specs:
        value = flat.get(spec.key)
        css = ""
        if spec.key == "verbatim_rate" and value is not None:
            css = ' class="pass"' if value >= 1 else ' class="fail"'
        rows.append(
            f'<tr><th scope="row">{_e(spec.label)}</th>'
            f'<td class="num"><span{css}>{_e(format_value(value, spec.kind))}</span></td></tr>'
        )
    return (
        '<table class="grid metrics"><thead><tr><th>metric</th><th>value</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _failures(report: Mapping[str, Any]) -> str:
    failures = [f for f in _list(report.get("verbatim_failures")) if isinstance(f, dict)]
    if not failures:
        return ""
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{_e(f.get(key))}</td>"
            for key in ("item_id", "quote_id", "ref", "doc_id", "doc_version", "start", "end")
        )
        + f"<td>{_e(f.get('reason'))}</td></tr>"
        for f in failures
    )
    return (
        '<section id="not-verbatim"><h2 class="fail">Quotes that are not verbatim</h2>'
        '<table class="grid"><thead><tr><th>item</th><th>quote</th><th>ref</th><th>doc</th>'
        "<th>version</th><th>start</th><th>end</th><th>reason</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _drift(report: Mapping[str, Any]) -> str:
    drift = report.get("compare")
    if not isinstance(drift, dict):
        return ""
    rows = []
    for change in _list(drift.get("metrics")):
        if not isinstance(change, dict):
            continue
        verdict = change.get("verdict")
        css = f' class="{verdict}"' if verdict in ("better", "worse") else ""
        rows.append(
            f'<tr><th scope="row">{_e(change.get("label"))}</th>'
            f'<td class="num">{_e(change.get("old_text"))}</td>'
            f'<td class="num">{_e(change.get("new_text"))}</td>'
            f'<td class="num"><span{css}>{_e(change.get("delta_text"))}</span></td>'
            f"<td>{_e(verdict or '')}</td></tr>"
        )
    changes = [c for c in _list(drift.get("items")) if isinstance(c, dict)]
    anchors = {item.get("id"): n for n, item in enumerate(_items(report), start=1)}
    item_rows = []
    for change in changes:
        n = anchors.get(change.get("id"))
        name = _e(change.get("id"))
        link = f'<a href="#item-{n}">{name}</a>' if n is not None else name
        item_rows.append(f"<li>{link}: {_e(change.get('change'))}</li>")
    only = []
    for key, text in (("only_old", "only in the earlier run"), ("only_new", "only in this run")):
        ids = [str(i) for i in _list(drift.get(key))]
        if ids:
            only.append(f"<p>{len(ids)} item(s) {text}: {_e(', '.join(ids))}</p>")
    return (
        '<section id="drift"><h2>Changes since the earlier run</h2>'
        f'<p class="meta">Compared with {_e(drift.get("against"))} '
        f"(started {_e(drift.get('against_started'))}).</p>"
        '<table class="grid"><thead><tr><th>metric</th><th>before</th><th>now</th>'
        f"<th>change</th><th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f"<h3>Items whose outcome changed ({len(changes)})</h3>"
        + (f"<ul>{''.join(item_rows)}</ul>" if item_rows else "<p>None.</p>")
        + "".join(only)
        + "</section>"
    )


def _yes_no(value: object) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return "—"


def _wrong(item: Mapping[str, Any]) -> bool:
    status = item.get("status")
    if status == "error":
        return True
    refused = status == "refused"
    return refused if item.get("answerable") else not refused


def _questions_table(items: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for n, item in enumerate(items, start=1):
        status = str(item.get("status"))
        css = ' class="wrong"' if _wrong(item) else ""
        latency = _number(item.get("latency_ms"))
        rows.append(
            f'<tr{css}><td class="num">{n}</td>'
            f'<td><a href="#item-{n}">{_e(item.get("id"))}</a></td>'
            f"<td>{_e(item.get('question'))}</td>"
            f"<td>{_yes_no(item.get('answerable'))}</td>"
            f'<td><span class="status-{_e(status)}">{_e(status)}</span></td>'
            f'<td class="num">{_e(item.get("quotes_shown"))}</td>'
            f"<td>{_yes_no(item.get('recall_hit'))}</td>"
            f'<td class="num">{_e(format_value(latency, "ms"))}</td></tr>'
        )
    return (
        '<section id="questions"><h2>Questions</h2>'
        '<p class="meta">Rows shaded: an answerable question refused, an unanswerable one '
        "answered, or an error.</p>"
        '<table class="grid"><thead><tr><th>#</th><th>id</th><th>question</th>'
        "<th>answerable</th><th>status</th><th>quotes shown</th><th>recall hit</th>"
        f"<th>latency</th></tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def _answer_html(item: Mapping[str, Any], n: int) -> str:
    data = item.get("answer")
    if data is None:
        return f'<p class="status-error">No answer: {_e(item.get("error"))}</p>'
    try:
        answer = answer_as_recorded(answer_from_dict(data))
    except ValueError as exc:
        return f'<p class="status-error">The saved answer cannot be read: {_e(exc)}</p>'
    fragment = render_answer_html(answer, show_cited=True)
    # The renderer's element ids are its own (`qp-q1`); answer text is escaped, so a
    # `"` never appears raw in it and only those ids match. Prefix them per item so
    # that ids stay unique on a page of many answers.
    return _ANSWER_IDS.sub(lambda m: f"{m.group(1)}i{n}-qp-", fragment)


def _item_section(item: Mapping[str, Any], n: int, ks: Sequence[str]) -> str:
    facts: list[tuple[str, str]] = [
        ("answerable", _yes_no(item.get("answerable"))),
        ("status", _e(item.get("status"))),
    ]
    if item.get("refusal_reason"):
        facts.append(("refusal reason", _e(item.get("refusal_reason"))))
    if item.get("error"):
        facts.append(("error", _e(item.get("error"))))
    facts.append(("latency", _e(format_value(_number(item.get("latency_ms")), "ms"))))
    facts.append(
        ("quotes shown", f"{_e(item.get('quotes_shown'))} (cited: {_e(item.get('cited_shown'))})")
    )
    if item.get("gold_quotes"):
        precision = format_value(_number(item.get("quote_precision")), "rate")
        recall = format_value(_number(item.get("quote_recall")), "rate")
        facts.append(("quote precision · recall", f"{_e(precision)} · {_e(recall)}"))
        citations = _dict(item.get("citations"))
        facts.append(
            (
                "citations on gold",
                f"{_e(citations.get('correct'))} of {_e(citations.get('total'))}",
            )
        )
    ranks = _dict(item.get("gold_ranks"))
    if ranks:
        listed = "; ".join(
            f"{ref} (rank {rank})" if rank is not None else f"{ref} (not retrieved)"
            for ref, rank in ranks.items()
        )
        facts.append(("gold sources", _e(listed)))
        at_k = _dict(item.get("retrieval_recall"))
        facts.append(
            (
                "retrieval recall",
                _e(", ".join(f"@{k}: {format_value(_number(at_k.get(k)), 'rate')}" for k in ks)),
            )
        )
    for key, label in (
        ("missing_gold_refs", "gold refs not in the index"),
        ("unlocated_gold_quotes", "gold quotes not found"),
    ):
        if _list(item.get(key)):
            facts.append((label, _e(" | ".join(str(v) for v in _list(item.get(key))))))
    for entry in _list(item.get("not_verbatim")):
        failure = _dict(entry)
        facts.append(
            (
                "NOT VERBATIM",
                f'<span class="fail">{_e(failure.get("quote_id"))}: '
                f"{_e(failure.get('reason'))}</span>",
            )
        )
    rows = "".join(f"<dt>{term}</dt><dd>{value}</dd>" for term, value in facts)
    gold = []
    if item.get("gold_answer"):
        gold.append(
            '<p class="gold-label">Reference answer (from the question set):</p>'
            f'<p class="gold-quote">{_e(item.get("gold_answer"))}</p>'
        )
    for text in _list(item.get("gold_quotes")):
        gold.append(
            '<p class="gold-label">Gold quote (from the question set):</p>'
            f'<p class="gold-quote">{_e(text)}</p>'
        )
    return (
        f'<section class="item" id="item-{n}">'
        f"<h3>{n}. {_e(item.get('id'))}</h3>"
        f'<dl class="item-facts">{rows}</dl>{"".join(gold)}'
        f"{_answer_html(item, n)}"
        '<p><a href="#questions">Back to the questions</a></p></section>'
    )


def _run_meta(report: Mapping[str, Any]) -> str:
    config = _dict(report.get("config"))
    set_info = _dict(report.get("set"))
    metrics = _dict(report.get("metrics"))
    sample = _dict(set_info.get("sample"))
    count = f"{metrics.get('items')} of {set_info.get('items')} questions"
    if sample.get("size") is not None:
        seed = sample.get("seed")
        count += f" (a sample drawn with seed {seed})" if seed is not None else " (the first ones)"
    model = config.get("model")
    backend = f"{config.get('backend')}" + (f" · {model}" if model else "")
    sha = set_info.get("sha256") if isinstance(set_info.get("sha256"), str) else None
    retrievers = ", ".join(str(r) for r in _list(config.get("retrievers_used"))) or "—"
    facts = [
        ("set", f"{set_info.get('path')}" + (f" (sha256 {sha[:12]}…)" if sha else "")),
        ("index", report.get("index")),
        ("questions", f"{count}; {metrics.get('answerable')} answerable, "
         f"{metrics.get('unanswerable')} unanswerable"),
        ("backend", backend),
        ("mode", f"{config.get('mode')} (strictness {config.get('strictness')})"),
        ("retrieval", f"{retrievers}, top_k {config.get('top_k')}"),
        ("started", f"{report.get('started')}, took {report.get('duration_s')} s"),
        ("quoteproof", report.get("quoteproof_version")),
    ]  # fmt: skip
    rows = "".join(f"<dt>{_e(term)}</dt><dd>{_e(value)}</dd>" for term, value in facts)
    return f'<dl class="item-facts meta">{rows}</dl>'


def render_report_html(report: Mapping[str, Any]) -> str:
    """Return a saved run (`run_to_dict`, with `compare` filled in when comparing) as
    one self-contained HTML page: run facts, the metrics table, quotes that failed
    the verbatim check, the drift section, plots, the per-question table and each
    item's answer (anchors `#item-N`). No scripts; every string from the run is
    escaped. O(size of the run) plus the plots."""
    metrics = _dict(report.get("metrics"))
    flat = flat_metrics(metrics)
    specs = metric_specs(metrics)
    items = _items(report)
    css = PAGE_CSS + REPORT_CSS
    policy = f"default-src 'none'; style-src {_style_hash(css)}; img-src data:"
    name = _dict(report.get("set")).get("name")
    ks = [str(k) for k in _recall_keys(metrics)]
    sections = "\n".join(_item_section(item, n, ks) for n, item in enumerate(items, start=1))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>quoteproof eval: {_e(name)}</title>\n"
        f"<style>{css}</style>\n</head>\n<body>\n<main>\n"
        f"<h1>Evaluation: {_e(name)}</h1>\n{_run_meta(report)}\n"
        f'<section id="metrics"><h2>Metrics</h2>{_metrics_table(flat, specs)}</section>\n'
        f"{_failures(report)}\n{_drift(report)}\n"
        f'<section id="plots"><h2>Plots</h2>{_plots(report, flat)}</section>\n'
        f"{_questions_table(items)}\n"
        f'<section id="answers"><h2>Answers</h2>\n{sections}\n</section>\n'
        "</main>\n</body>\n</html>\n"
    )
