"""An evaluation run (its saved JSON, `evaluation.report`) as one self-contained
HTML page.

The page has no scripts: inline CSS allowed by hash in its
Content-Security-Policy, plots as `data:` PNG images, and every string taken from
the run (questions, ids, gold text, errors, paths) escaped; answers are drawn by the
project's safe renderer, `quoteproof.render.html.render_answer_html`.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from quoteproof.codec import answer_from_dict
from quoteproof.evaluation import plots
from quoteproof.evaluation.metrics import recall_at_k
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
from quoteproof.receipts import answer_as_recorded
from quoteproof.render.html import PAGE_CSS, escape, render_answer_html

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
    depth = as_number(_dict(report.get("config")).get("depth")) or 0
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
        for spec in metric_specs(_dict(report.get("metrics")))
        if spec.kind == "rate"
    }
    grading = _dict(_dict(report.get("metrics")).get("grading"))
    counts = _dict(grading.get("distribution"))
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


def _grading(report: Mapping[str, Any]) -> str:
    """The grader, the count of each grade, the grades that are malformed or missing,
    and the lowest-graded questions; empty for a run that was not graded."""
    grading = _dict(_dict(report.get("metrics")).get("grading"))
    if not grading:
        return ""
    grader = _dict(_dict(report.get("config")).get("grader"))
    counts = _dict(grading.get("distribution"))
    anchors = {item.get("id"): n for n, item in enumerate(_items(report), start=1)}

    def link(item: Mapping[str, Any]) -> str:
        return f'<a href="#item-{anchors.get(item.get("id"))}">{_e(item.get("id"))}</a>'

    cells = "".join(f'<td class="num">{_e(counts.get(str(n), 0))}</td>' for n in range(5, 0, -1))
    problems = [
        f"<li>{link(item)}: {_e(grade.get('status'))}: {_e(grade.get('problem'))}</li>"
        for item in _items(report)
        if (grade := _dict(item.get("grade"))).get("status") in ("malformed", "error")
    ]
    worst = "".join(
        f'<tr><td>{link(item)}</td><td class="num">{_e(item["grade"]["grade"])}</td>'
        f"<td>{_e(item['grade']['verdict'])}</td><td>{_e(item['grade']['justification'])}</td>"
        "</tr>"
        for item in worst_graded(_items(report))
    )
    return (
        '<section id="grading"><h2>Grades</h2>'
        f'<p class="meta">Grader: {_e(grader.get("backend"))} · {_e(grader.get("model"))}; '
        f"{_e(grading.get('graded'))} of {_e(grading.get('gradable'))} answers with a "
        f"reference answer graded, {_e(grading.get('malformed'))} malformed, "
        f"{_e(grading.get('errors'))} not graded. Accuracy and mean grade are over the "
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
    modes = faithfulness_by_mode(_dict(report.get("metrics")))
    if not modes:
        return ""
    method = _dict(report.get("config")).get("faithfulness")
    rows = "".join(
        f'<tr><th scope="row">{_e(mode)}</th><td class="num">{_e(answers)}</td>'
        f'<td class="num">{_e(scored)}</td>'
        f'<td class="num">{_e(format_value(mean, "rate"))}</td></tr>'
        for mode, answers, scored, mean in modes
    )
    return (
        '<section id="faithfulness"><h2>Faithfulness per mode</h2>'
        f'<p class="meta">Check: {_e(method)}. The mean, over the answers that make claims '
        "of their own, of the share of each answer's generated sentences (removed ones "
        "counted unsupported) that the passages they cite support.</p>"
        '<table class="grid"><thead><tr><th>mode</th><th>answers</th>'
        "<th>with claims</th><th>faithfulness (mean)</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _faithfulness_fact(found: Mapping[str, Any]) -> list[tuple[str, str]]:
    """An item's faithfulness as a fact: the score, supported claims of those shown,
    removed sentences and method (nothing when the answer was not assessed)."""
    if not found:
        return []
    score = format_value(as_number(found.get("score")), "rate")
    detail = (
        f"{found.get('supported')} of {found.get('claims')} claims shown supported, "
        f"{found.get('removed')} removed; {found.get('method')}"
    )
    return [("faithfulness", f"{_e(score)} ({_e(detail)})")]


def _grade_facts(grade: Mapping[str, Any]) -> list[tuple[str, str]]:
    """An item's grade as facts: grade, verdict and justification, or why there is
    none (and the grader's raw reply when it was malformed)."""
    if not grade:
        return []
    if grade.get("status") == "graded":
        return [
            ("grade (grader)", f"{_e(grade.get('grade'))} of 5, {_e(grade.get('verdict'))}"),
            ("justification (grader)", _e(grade.get("justification"))),
        ]
    facts = [
        (
            f"grade {_e(grade.get('status'))}",
            f'<span class="fail">{_e(grade.get("problem"))}</span>',
        )
    ]
    if grade.get("raw") is not None:
        facts.append(
            ("grader's reply", f'<span class="grader-reply">{_e(grade.get("raw"))}</span>')
        )
    return facts


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
        latency = as_number(item.get("latency_ms"))
        faithful = as_number(_dict(item.get("faithfulness")).get("score"))
        rows.append(
            f'<tr{css}><td class="num">{n}</td>'
            f'<td><a href="#item-{n}">{_e(item.get("id"))}</a></td>'
            f"<td>{_e(item.get('question'))}</td>"
            f"<td>{_yes_no(item.get('answerable'))}</td>"
            f'<td><span class="status-{_e(status)}">{_e(status)}</span></td>'
            f'<td class="num">{_e(item.get("quotes_shown"))}</td>'
            f'<td class="num">{_e(format_value(faithful, "rate"))}</td>'
            f"<td>{_yes_no(item.get('recall_hit'))}</td>"
            f'<td class="num">{_e(format_value(latency, "ms"))}</td></tr>'
        )
    return (
        '<section id="questions"><h2>Questions</h2>'
        '<p class="meta">Rows shaded: an answerable question refused, an unanswerable one '
        "answered, or an error.</p>"
        '<table class="grid"><thead><tr><th>#</th><th>id</th><th>question</th>'
        "<th>answerable</th><th>status</th><th>quotes shown</th><th>faithfulness</th>"
        "<th>recall hit</th>"
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
    facts.append(("latency", _e(format_value(as_number(item.get("latency_ms")), "ms"))))
    facts.append(
        ("quotes shown", f"{_e(item.get('quotes_shown'))} (cited: {_e(item.get('cited_shown'))})")
    )
    if item.get("gold_quotes"):
        precision = format_value(as_number(item.get("quote_precision")), "rate")
        recall = format_value(as_number(item.get("quote_recall")), "rate")
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
                _e(", ".join(f"@{k}: {format_value(as_number(at_k.get(k)), 'rate')}" for k in ks)),
            )
        )
    for key, label in (
        ("missing_gold_refs", "gold refs not in the index"),
        ("unlocated_gold_quotes", "gold quotes not found"),
    ):
        if _list(item.get(key)):
            facts.append((label, _e(" | ".join(str(v) for v in _list(item.get(key))))))
    facts += _faithfulness_fact(_dict(item.get("faithfulness")))
    facts += _grade_facts(_dict(item.get("grade")))
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
        ("faithfulness check", config.get("faithfulness") or "—"),
        ("grader", " · ".join(str(v) for v in _dict(config.get("grader")).values()) or "—"),
        ("retrieval", f"{retrievers}, top_k {config.get('top_k')}"),
        ("started", f"{report.get('started')}, took {report.get('duration_s')} s"),
        ("quoteproof", report.get("quoteproof_version")),
    ]  # fmt: skip
    rows = "".join(f"<dt>{_e(term)}</dt><dd>{_e(value)}</dd>" for term, value in facts)
    return f'<dl class="item-facts meta">{rows}</dl>'


def render_report_html(report: Mapping[str, Any]) -> str:
    """Return a saved run (`run_to_dict`, with `compare` filled in when comparing) as
    one self-contained HTML page: run facts, the metrics table, the faithfulness per
    answer mode, the grades (a graded run), quotes that failed the verbatim check, the
    drift section, plots, the per-question table and each item's answer (anchors
    `#item-N`). No scripts; every string from the run is escaped. O(size of the run)
    plus the plots."""
    metrics = _dict(report.get("metrics"))
    flat = flat_metrics(metrics)
    specs = metric_specs(metrics)
    items = _items(report)
    css = PAGE_CSS + REPORT_CSS
    policy = f"default-src 'none'; style-src {_style_hash(css)}; img-src data:"
    name = _dict(report.get("set")).get("name")
    ks = [str(k) for k in recall_keys(metrics)]
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
        f"{_faithfulness(report)}\n{_grading(report)}\n"
        f"{_failures(report)}\n{_drift(report)}\n"
        f'<section id="plots"><h2>Plots</h2>{_plots(report, flat)}</section>\n'
        f"{_questions_table(items)}\n"
        f'<section id="answers"><h2>Answers</h2>\n{sections}\n</section>\n'
        "</main>\n</body>\n</html>\n"
    )
