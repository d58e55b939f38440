"""Tests for quoteproof.evaluation.report and .compare: the run's JSON, the HTML page
(self-contained, everything escaped) and drift between two runs."""

from __future__ import annotations

import copy
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from helpers.answers import make_answer, make_quote
from quoteproof.evaluation.compare import compare_reports, drift_lines, drift_to_dict
from quoteproof.evaluation.evalset import EvalItem
from quoteproof.evaluation.metrics import Span, summarize
from quoteproof.evaluation.report import (
    REPORT_SCHEMA,
    ReportError,
    load_report,
    run_to_dict,
    write_json,
)
from quoteproof.evaluation.report_html import render_report_html
from quoteproof.evaluation.runner import AskOptions, EvalRun, ItemResult, score_answer
from quoteproof.model import Document, ProseSegment, QuoteSegment, sha256_text

ATTACK = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
SOURCE = f"Safe words first. {ATTACK} and more."


class Documents:
    def __init__(self) -> None:
        self.doc = Document("doc", 1, "/c/doc.txt", "Doc", "text", SOURCE, sha256_text(SOURCE))

    def get(self, doc_id: str, version: int) -> Document | None:
        return self.doc if (doc_id, version) == ("doc", 1) else None

    def matching(self, gold_ref: str) -> list[tuple[str, int]]:
        return [("doc", 1)] if self.doc.source_path.endswith(gold_ref) else []

    def chunk_span(self, ref: str) -> Span | None:
        return Span(("doc", 1), 0, len(SOURCE)) if ref == "doc-1" else None


def hostile_run() -> EvalRun:
    """Two items whose every string is an attack: ids, questions, gold, quotes, prose."""
    results: list[ItemResult] = []
    for n in range(2):
        item = EvalItem(
            f"{ATTACK}{n}",
            f"Question {ATTACK}?",
            True,
            gold_refs=(f"doc.txt{ATTACK}", "doc.txt"),
            gold_quotes=(ATTACK, f"missing {ATTACK}"),
            gold_answer=ATTACK,
            line=n + 1,
        )
        quote = make_quote(SOURCE, 18, 18 + len(ATTACK), ref="doc-1", label=ATTACK)
        answer = make_answer(
            (ProseSegment(ATTACK, ("doc-1", ATTACK)), QuoteSegment("q1")),
            (quote,),
            question=item.question,
        )
        results.append(
            score_answer(item, answer, Documents(), ranks={"doc.txt": 1}, latency_ms=12.5 * (n + 1))
        )
    return EvalRun(
        items=tuple(results),
        metrics=summarize([r.scores for r in results], [1, 5]),
        options=AskOptions(),
        ks=(1, 5),
        started="2025-01-01T00:00:00+00:00",
        duration_s=0.1,
        depth=5,
    )


class Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def report_of(run: EvalRun) -> dict[str, Any]:
    return run_to_dict(run, set_path="sets/x.jsonl", set_items=9, index="idx", retriever=None)


def test_json_shape_round_trips(tmp_path: Path) -> None:
    report = report_of(hostile_run())
    path = tmp_path / "deep" / "run.json"
    write_json(path, report)
    loaded = load_report(path)
    assert loaded == json.loads(json.dumps(report))
    assert loaded["schema"] == REPORT_SCHEMA
    assert set(loaded) >= {"set", "index", "config", "metrics", "items", "verbatim_failures"}
    item = loaded["items"][0]
    # the second gold quote is found nowhere: its whole length counts, uncovered
    assert item["overlap"] == {
        "shown_chars": len(ATTACK),
        "overlap_chars": len(ATTACK),
        "gold_chars": 2 * len(ATTACK) + len("missing "),
        "covered_chars": len(ATTACK),
    }
    assert item["quote_precision"] == 1.0
    assert item["quote_recall"] == round(len(ATTACK) / (2 * len(ATTACK) + 8), 6)
    assert item["unlocated_gold_quotes"] == [f"missing {ATTACK}"]
    assert item["missing_gold_refs"] == [f"doc.txt{ATTACK}"]
    assert item["citations"] == {"correct": 1, "total": 2}
    assert item["retrieval_recall"] == {"1": 1.0, "5": 1.0} and item["recall_hit"] is True
    assert item["answer"]["quotes"][0]["text"] == ATTACK
    assert loaded["metrics"]["latency_ms"] == {"p50": 18.75, "p95": 24.375}
    assert loaded["metrics"]["retrieval_recall"] == {"1": 1.0, "5": 1.0}


def test_load_report_rejects_other_files(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    for text, message in (
        ("{", "not a readable evaluation run"),
        ('{"schema": "quoteproof.answer/1"}', "not an evaluation run"),
        (f'{{"schema": "{REPORT_SCHEMA}", "metrics": {{}}}}', 'needs "metrics" and "items"'),
    ):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ReportError, match=message):
            load_report(path)


def test_html_is_self_contained_and_escapes_everything() -> None:
    report = report_of(hostile_run())
    page = render_report_html(report)
    assert "<script" not in page.lower()
    assert "data:image/png;base64," in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    parser = Tags()
    parser.feed(page)
    ids = [attrs["id"] for _, attrs in parser.tags if "id" in attrs]
    assert len(ids) == len(set(ids)), "element ids must be unique on the page"
    for tag, attrs in parser.tags:
        assert tag not in ("script", "iframe", "object", "embed", "link", "base")
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        if tag == "img":
            assert (attrs["src"] or "").startswith("data:image/png;base64,")
        href = attrs.get("href")
        if href is not None:
            assert href.startswith(("#item-", "#i1-qp-", "#i2-qp-", "#questions", "file://"))
    # each row links to its item, and each item's answer is drawn by the safe renderer
    assert '<a href="#item-1">' in page and 'id="item-2"' in page
    assert page.count('<figure class="verbatim"') == 2
    assert 'id="i1-qp-q1"' in page and 'id="i2-qp-q1"' in page


def test_html_without_plots_data_and_with_failures() -> None:
    report = report_of(hostile_run())
    report["items"][0]["answer"] = None
    report["items"][0]["status"] = "error"
    report["items"][0]["error"] = ATTACK
    report["verbatim_failures"] = [{"item_id": ATTACK, "quote_id": "q1", "reason": ATTACK}]
    page = render_report_html(report)
    assert "<script" not in page.lower()
    assert "Quotes that are not verbatim" in page
    assert "No answer: &quot;&gt;&lt;script&gt;" in page


def test_compare_metrics_and_item_outcomes() -> None:
    new = report_of(hostile_run())
    new["metrics"]["quote_recall"] = 0.5
    old = copy.deepcopy(new)
    old["metrics"]["quote_recall"] = 0.25
    old["metrics"]["latency_ms"]["p50"] = 10.0
    old["metrics"]["retrieval_recall"] = {"5": 0.5, "20": 0.75}
    old["items"][0]["status"] = "refused"
    old["items"][1]["recall_hit"] = False
    old["items"].append({"id": "gone", "status": "answered"})
    old["started"] = "2024-12-31T00:00:00+00:00"
    drift = compare_reports(old, new, "old.json")
    lines = drift_lines(drift)
    assert lines[0] == "changes since old.json:"
    assert "  quote recall: 25.0% → 50.0% (+25.0 pp, better)" in lines
    assert "  latency p50: 10.0 ms → 18.8 ms (+8.8 ms, worse)" in lines
    assert "  quote precision: 100.0% → 100.0% (unchanged)" in lines
    assert "  retrieval recall@1: — → 100.0% (no comparison)" in lines
    assert "  retrieval recall@20: 75.0% → — (no comparison)" in lines
    assert "  retrieval recall@5: 50.0% → 100.0% (+50.0 pp, better)" in lines
    assert "  prompt tokens: — → — (n/a)" in lines
    assert "items whose outcome changed: 2" in lines
    assert f"  {ATTACK}0: refused → answered" in lines
    assert f"  {ATTACK}1: recall hit gained" in lines
    assert "items only in old.json: gone" in lines

    new["compare"] = drift_to_dict(drift)
    assert new["compare"]["against_started"] == "2024-12-31T00:00:00+00:00"
    page = render_report_html(new)
    assert "Changes since the earlier run" in page and "<script" not in page.lower()
    assert "refused → answered" in page and '<span class="better">+25.0 pp</span>' in page
