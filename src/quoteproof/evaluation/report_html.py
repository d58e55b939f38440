"""An evaluation run (its saved JSON, `evaluation.report`) as one self-contained
HTML page.

The page has no scripts: inline CSS allowed by hash in its
Content-Security-Policy, plots as `data:` PNG images, and every string taken from
the run (questions, ids, gold text, errors, paths) escaped (`page_values`). This
module lays out the page and the run's own sections (facts, metrics, faithfulness,
grades, quotes not verbatim, drift, plots); the questions and each item's answer
are `report_items`'.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from quoteproof.evaluation import plots
from quoteproof.evaluation.metrics import recall_at_k
from quoteproof.evaluation.page_values import as_dict, as_list, esc
from quoteproof.evaluation.report import (
    MetricSpec,
    as_number,
    faithfulness_by_mode,
    flat_metrics,
    format_value,
    metric_specs,
    recall_keys,
    worst_graded,
)
from quoteproof.evaluation.report_items import item_section, questions_table
from quoteproof.render.html import PAGE_CSS

__all__ = ["REPORT_CSS", "render_report_html"]


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
.grader-reply{white-space:pre-wrap;font-family:monospace}
"""


def _style_hash(css: str) -> str:
    digest = hashlib.sha256(css.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _png(data: bytes | None, alt: str, caption: str) -> str:
    if data is None:
        return ""
    encoded = base64.b64encode(data).decode("ascii")
    return (
        f'<figure><img alt="{esc(alt)}" src="data:image/png;base64,{encoded}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def _items(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [item for item in as_list(report.get("items")) if isinstance(item, dict)]


def _recall_points(report: Mapping[str, Any]) -> list[tuple[int, float]]:
    """Recall at every k from 1 to the run's depth, from each item's gold ranks."""
    depth = as_number(as_dict(report.get("config")).get("depth")) or 0
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
        float(v) for item in _items(report) if (v := as_number(item.get("latency_ms"))) is not None
    ]
    rates = {
        spec.label: flat.get(spec.key)
        for spec in metric_specs(as_dict(report.get("metrics")))
        if spec.kind == "rate"
    }
    grading = as_dict(as_dict(report.get("metrics")).get("grading"))
    counts = as_dict(grading.get("distribution"))
    distribution = {n: int(as_number(counts.get(str(n))) or 0) for n in range(1, 6)}
    figures = [
        _png(plots.metric_bars(rates), "bar chart of the rate metrics", "Metrics"),
        _png(
            plots.grade_distribution(distribution) if grading else None,
            "bar chart of how many answers got each grade",
            "Grades (grader)",
        ),
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
            f'<tr><th scope="row">{esc(spec.label)}</th>'
            f'<td class="num"><span{css}>{esc(format_value(value, spec.kind))}</span></td></tr>'
        )
    return (
        '<table class="grid metrics"><thead><tr><th>metric</th><th>value</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _failures(report: Mapping[str, Any]) -> str:
    failures = [f for f in as_list(report.get("verbatim_failures")) if isinstance(f, dict)]
    if not failures:
        return ""
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{esc(f.get(key))}</td>"
            for key in ("item_id", "quote_id", "ref", "doc_id", "doc_version", "start", "end")
        )
        + f"<td>{esc(f.get('reason'))}</td></tr>"
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
    for change in as_list(drift.get("metrics")):
        if not isinstance(change, dict):
            continue
        verdict = change.get("verdict")
        css = f' class="{verdict}"' if verdict in ("better", "worse") else ""
        rows.append(
            f'<tr><th scope="row">{esc(change.get("label"))}</th>'
            f'<td class="num">{esc(change.get("old_text"))}</td>'
            f'<td class="num">{esc(change.get("new_text"))}</td>'
            f'<td class="num"><span{css}>{esc(change.get("delta_text"))}</span></td>'
            f"<td>{esc(verdict or '')}</td></tr>"
        )
    changes = [c for c in as_list(drift.get("items")) if isinstance(c, dict)]
    anchors = {item.get("id"): n for n, item in enumerate(_items(report), start=1)}
    item_rows = []
    for change in changes:
        n = anchors.get(change.get("id"))
        name = esc(change.get("id"))
        link = f'<a href="#item-{n}">{name}</a>' if n is not None else name
        item_rows.append(f"<li>{link}: {esc(change.get('change'))}</li>")
    only = []
    for key, text in (("only_old", "only in the earlier run"), ("only_new", "only in this run")):
        ids = [str(i) for i in as_list(drift.get(key))]
        if ids:
            only.append(f"<p>{len(ids)} item(s) {text}: {esc(', '.join(ids))}</p>")
    return (
        '<section id="drift"><h2>Changes since the earlier run</h2>'
        f'<p class="meta">Compared with {esc(drift.get("against"))} '
        f"(started {esc(drift.get('against_started'))}).</p>"
        '<table class="grid"><thead><tr><th>metric</th><th>before</th><th>now</th>'
        f"<th>change</th><th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f"<h3>Items whose outcome changed ({len(changes)})</h3>"
        + (f"<ul>{''.join(item_rows)}</ul>" if item_rows else "<p>None.</p>")
        + "".join(only)
        + "</section>"
    )


def _grading(report: Mapping[str, Any]) -> str:
    """The grader, the count of each grade, the grades that are malformed or missing,
    and the lowest-graded questions; empty for a run that was not graded."""
    grading = as_dict(as_dict(report.get("metrics")).get("grading"))
    if not grading:
        return ""
    grader = as_dict(as_dict(report.get("config")).get("grader"))
    counts = as_dict(grading.get("distribution"))
    anchors = {item.get("id"): n for n, item in enumerate(_items(report), start=1)}

    def link(item: Mapping[str, Any]) -> str:
        return f'<a href="#item-{anchors.get(item.get("id"))}">{esc(item.get("id"))}</a>'

    cells = "".join(f'<td class="num">{esc(counts.get(str(n), 0))}</td>' for n in range(5, 0, -1))
    problems = [
        f"<li>{link(item)}: {esc(grade.get('status'))}: {esc(grade.get('problem'))}</li>"
        for item in _items(report)
        if (grade := as_dict(item.get("grade"))).get("status") in ("malformed", "error")
    ]
    worst = "".join(
        f'<tr><td>{link(item)}</td><td class="num">{esc(item["grade"]["grade"])}</td>'
        f"<td>{esc(item['grade']['verdict'])}</td><td>{esc(item['grade']['justification'])}</td>"
        "</tr>"
        for item in worst_graded(_items(report))
    )
    return (
        '<section id="grading"><h2>Grades</h2>'
        f'<p class="meta">Grader: {esc(grader.get("backend"))} · {esc(grader.get("model"))}; '
        f"{esc(grading.get('graded'))} of {esc(grading.get('gradable'))} answers with a "
        f"reference answer graded, {esc(grading.get('malformed'))} malformed, "
        f"{esc(grading.get('errors'))} not graded. Accuracy and mean grade are over the "
        "graded answers.</p>"
        '<table class="grid"><thead><tr><th>grade</th>'
        + "".join(f"<th>{n}</th>" for n in range(5, 0, -1))
        + f'</tr></thead><tbody><tr><th scope="row">answers</th>{cells}</tr></tbody></table>'
        + (f"<h3>Grades not read</h3><ul>{''.join(problems)}</ul>" if problems else "")
        + (
            "<h3>Lowest grades</h3>"
            '<table class="grid"><thead><tr><th>id</th><th>grade</th><th>verdict</th>'
            f"<th>justification (grader)</th></tr></thead><tbody>{worst}</tbody></table>"
            if worst
            else ""
        )
        + "</section>"
    )


def _faithfulness(report: Mapping[str, Any]) -> str:
    """The run's faithfulness per answer mode (empty for a run saved before it was
    reported)."""
    modes = faithfulness_by_mode(as_dict(report.get("metrics")))
    if not modes:
        return ""
    method = as_dict(report.get("config")).get("faithfulness")
    rows = "".join(
        f'<tr><th scope="row">{esc(mode)}</th><td class="num">{esc(answers)}</td>'
        f'<td class="num">{esc(scored)}</td>'
        f'<td class="num">{esc(format_value(mean, "rate"))}</td></tr>'
        for mode, answers, scored, mean in modes
    )
    return (
        '<section id="faithfulness"><h2>Faithfulness per mode</h2>'
        f'<p class="meta">Check: {esc(method)}. The mean, over the answers that make claims '
        "of their own, of the share of each answer's generated sentences (removed ones "
        "counted unsupported) that the passages they cite support.</p>"
        '<table class="grid"><thead><tr><th>mode</th><th>answers</th>'
        "<th>with claims</th><th>faithfulness (mean)</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _run_meta(report: Mapping[str, Any]) -> str:
    config = as_dict(report.get("config"))
    set_info = as_dict(report.get("set"))
    metrics = as_dict(report.get("metrics"))
    sample = as_dict(set_info.get("sample"))
    count = f"{metrics.get('items')} of {set_info.get('items')} questions"
    if sample.get("size") is not None:
        seed = sample.get("seed")
        count += f" (a sample drawn with seed {seed})" if seed is not None else " (the first ones)"
    model = config.get("model")
    backend = f"{config.get('backend')}" + (f" · {model}" if model else "")
    sha = set_info.get("sha256") if isinstance(set_info.get("sha256"), str) else None
    retrievers = ", ".join(str(r) for r in as_list(config.get("retrievers_used"))) or "—"
    facts = [
        ("set", f"{set_info.get('path')}" + (f" (sha256 {sha[:12]}…)" if sha else "")),
        ("index", report.get("index")),
        ("questions", f"{count}; {metrics.get('answerable')} answerable, "
         f"{metrics.get('unanswerable')} unanswerable"),
        ("backend", backend),
        ("mode", f"{config.get('mode')} (strictness {config.get('strictness')})"),
        ("faithfulness check", config.get("faithfulness") or "—"),
        ("grader", " · ".join(str(v) for v in as_dict(config.get("grader")).values()) or "—"),
        ("retrieval", f"{retrievers}, top_k {config.get('top_k')}"),
        ("started", f"{report.get('started')}, took {report.get('duration_s')} s"),
        ("quoteproof", report.get("quoteproof_version")),
    ]  # fmt: skip
    rows = "".join(f"<dt>{esc(term)}</dt><dd>{esc(value)}</dd>" for term, value in facts)
    return f'<dl class="item-facts meta">{rows}</dl>'


def render_report_html(report: Mapping[str, Any]) -> str:
    """Return a saved run (`run_to_dict`, with `compare` filled in when comparing) as
    one self-contained HTML page: run facts, the metrics table, the faithfulness per
    answer mode, the grades (a graded run), quotes that failed the verbatim check, the
    drift section, plots, the per-question table and each item's answer (anchors
    `#item-N`). No scripts; every string from the run is escaped. O(size of the run)
    plus the plots."""
    metrics = as_dict(report.get("metrics"))
    flat = flat_metrics(metrics)
    specs = metric_specs(metrics)
    items = _items(report)
    css = PAGE_CSS + REPORT_CSS
    policy = f"default-src 'none'; style-src {_style_hash(css)}; img-src data:"
    name = as_dict(report.get("set")).get("name")
    ks = [str(k) for k in recall_keys(metrics)]
    sections = "\n".join(item_section(item, n, ks) for n, item in enumerate(items, start=1))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>quoteproof eval: {esc(name)}</title>\n"
        f"<style>{css}</style>\n</head>\n<body>\n<main>\n"
        f"<h1>Evaluation: {esc(name)}</h1>\n{_run_meta(report)}\n"
        f'<section id="metrics"><h2>Metrics</h2>{_metrics_table(flat, specs)}</section>\n'
        f"{_faithfulness(report)}\n{_grading(report)}\n"
        f"{_failures(report)}\n{_drift(report)}\n"
        f'<section id="plots"><h2>Plots</h2>{_plots(report, flat)}</section>\n'
        f"{questions_table(items)}\n"
        f'<section id="answers"><h2>Answers</h2>\n{sections}\n</section>\n'
        "</main>\n</body>\n</html>\n"
    )
