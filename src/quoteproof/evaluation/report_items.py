"""The questions of an evaluation run on its HTML page (`report_html`): the table of
every question with its outcome, and each item's section (anchor `#item-N`) with its
facts, the reference answer and gold quotes, and the answer as the project's safe
renderer draws it (`quoteproof.render.html.render_answer_html`), its element ids
made unique per item.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from quoteproof.codec import answer_from_dict
from quoteproof.evaluation.page_values import as_dict, as_list, esc
from quoteproof.evaluation.report import as_number, format_value
from quoteproof.receipts import answer_as_recorded
from quoteproof.render.html import render_answer_html

__all__ = ["item_section", "questions_table"]

_ANSWER_IDS = re.compile(r'(id="|href="#)qp-')


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
    return [("faithfulness", f"{esc(score)} ({esc(detail)})")]


def _grade_facts(grade: Mapping[str, Any]) -> list[tuple[str, str]]:
    """An item's grade as facts: grade, verdict and justification, or why there is
    none (and the grader's raw reply when it was malformed)."""
    if not grade:
        return []
    if grade.get("status") == "graded":
        return [
            ("grade (grader)", f"{esc(grade.get('grade'))} of 5, {esc(grade.get('verdict'))}"),
            ("justification (grader)", esc(grade.get("justification"))),
        ]
    facts = [
        (
            f"grade {esc(grade.get('status'))}",
            f'<span class="fail">{esc(grade.get("problem"))}</span>',
        )
    ]
    if grade.get("raw") is not None:
        facts.append(
            ("grader's reply", f'<span class="grader-reply">{esc(grade.get("raw"))}</span>')
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


def questions_table(items: Sequence[Mapping[str, Any]]) -> str:
    """The `#questions` section: one row per item (numbered from 1, linking to its
    section) with its question, status, quotes shown, faithfulness, recall hit and
    latency; rows of a wrong outcome shaded."""
    rows = []
    for n, item in enumerate(items, start=1):
        status = str(item.get("status"))
        css = ' class="wrong"' if _wrong(item) else ""
        latency = as_number(item.get("latency_ms"))
        faithful = as_number(as_dict(item.get("faithfulness")).get("score"))
        rows.append(
            f'<tr{css}><td class="num">{n}</td>'
            f'<td><a href="#item-{n}">{esc(item.get("id"))}</a></td>'
            f"<td>{esc(item.get('question'))}</td>"
            f"<td>{_yes_no(item.get('answerable'))}</td>"
            f'<td><span class="status-{esc(status)}">{esc(status)}</span></td>'
            f'<td class="num">{esc(item.get("quotes_shown"))}</td>'
            f'<td class="num">{esc(format_value(faithful, "rate"))}</td>'
            f"<td>{_yes_no(item.get('recall_hit'))}</td>"
            f'<td class="num">{esc(format_value(latency, "ms"))}</td></tr>'
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
        return f'<p class="status-error">No answer: {esc(item.get("error"))}</p>'
    try:
        answer = answer_as_recorded(answer_from_dict(data))
    except ValueError as exc:
        return f'<p class="status-error">The saved answer cannot be read: {esc(exc)}</p>'
    fragment = render_answer_html(answer, show_cited=True)
    # The renderer's element ids are its own (`qp-q1`); answer text is escaped, so a
    # `"` never appears raw in it and only those ids match. Prefix them per item so
    # that ids stay unique on a page of many answers.
    return _ANSWER_IDS.sub(lambda m: f"{m.group(1)}i{n}-qp-", fragment)


def item_section(item: Mapping[str, Any], n: int, ks: Sequence[str]) -> str:
    """Item `n`'s section (`#item-N`): its facts (retrieval recall at each of `ks`),
    the reference answer and gold quotes, and its answer."""
    facts: list[tuple[str, str]] = [
        ("answerable", _yes_no(item.get("answerable"))),
        ("status", esc(item.get("status"))),
    ]
    if item.get("refusal_reason"):
        facts.append(("refusal reason", esc(item.get("refusal_reason"))))
    if item.get("error"):
        facts.append(("error", esc(item.get("error"))))
    facts.append(("latency", esc(format_value(as_number(item.get("latency_ms")), "ms"))))
    facts.append(
        ("quotes shown", f"{esc(item.get('quotes_shown'))} (cited: {esc(item.get('cited_shown'))})")
    )
    if item.get("gold_quotes"):
        precision = format_value(as_number(item.get("quote_precision")), "rate")
        recall = format_value(as_number(item.get("quote_recall")), "rate")
        facts.append(("quote precision · recall", f"{esc(precision)} · {esc(recall)}"))
        citations = as_dict(item.get("citations"))
        facts.append(
            (
                "citations on gold",
                f"{esc(citations.get('correct'))} of {esc(citations.get('total'))}",
            )
        )
    ranks = as_dict(item.get("gold_ranks"))
    if ranks:
        listed = "; ".join(
            f"{ref} (rank {rank})" if rank is not None else f"{ref} (not retrieved)"
            for ref, rank in ranks.items()
        )
        facts.append(("gold sources", esc(listed)))
        at_k = as_dict(item.get("retrieval_recall"))
        facts.append(
            (
                "retrieval recall",
                esc(", ".join(f"@{k}: {format_value(as_number(at_k.get(k)), 'rate')}" for k in ks)),
            )
        )
    for key, label in (
        ("missing_gold_refs", "gold refs not in the index"),
        ("unlocated_gold_quotes", "gold quotes not found"),
    ):
        if as_list(item.get(key)):
            facts.append((label, esc(" | ".join(str(v) for v in as_list(item.get(key))))))
    facts += _faithfulness_fact(as_dict(item.get("faithfulness")))
    facts += _grade_facts(as_dict(item.get("grade")))
    for entry in as_list(item.get("not_verbatim")):
        failure = as_dict(entry)
        facts.append(
            (
                "NOT VERBATIM",
                f'<span class="fail">{esc(failure.get("quote_id"))}: '
                f"{esc(failure.get('reason'))}</span>",
            )
        )
    rows = "".join(f"<dt>{term}</dt><dd>{value}</dd>" for term, value in facts)
    gold = []
    if item.get("gold_answer"):
        gold.append(
            '<p class="gold-label">Reference answer (from the question set):</p>'
            f'<p class="gold-quote">{esc(item.get("gold_answer"))}</p>'
        )
    for text in as_list(item.get("gold_quotes")):
        gold.append(
            '<p class="gold-label">Gold quote (from the question set):</p>'
            f'<p class="gold-quote">{esc(text)}</p>'
        )
    return (
        f'<section class="item" id="item-{n}">'
        f"<h3>{n}. {esc(item.get('id'))}</h3>"
        f'<dl class="item-facts">{rows}</dl>{"".join(gold)}'
        f"{_answer_html(item, n)}"
        '<p><a href="#questions">Back to the questions</a></p></section>'
    )
