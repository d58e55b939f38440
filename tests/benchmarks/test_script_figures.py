"""The figures some benchmark scripts build from what they measured: serve (a load
report), retrieval (scored rows) and eval_sets (a `quoteproof eval` JSON report)."""

from __future__ import annotations

from typing import Any

import pytest

from figures import Figures
from helpers.bench_scripts import load_script
from helpers.load import LoadReport
from quoteproof.audit import LogCheck


def test_serve_figures_per_endpoint_and_its_targets() -> None:
    serve = load_script("serve")
    report = LoadReport(seconds=2.0, latencies={"search": [10.0, 30.0], "ask": [50.0]})
    report.uploaded, report.job_state = 3, "done"
    report.listed_before, report.listed_after, report.distinct_paths_after = 5, 8, 8
    out = serve.figures(report)
    by = {f.name: f for f in out.figures}
    assert list(by)[:3] == ["req/s, ask", "p50 ms, ask", "p95 ms, ask"]
    assert by["req/s, search"].value == 1.0 and by["req/s, all"].value == 1.5
    assert by["p50 ms, search"].value == 20.0 and by["p50 ms, all"].unit == "ms"
    assert all(f.reference is None and f.ratio is None for f in out.figures)
    assert out.notes == ["errors: 0 · ingest job: done · documents 5 -> 8 (lost 0, duplicated 0)"]
    assert all(out.targets.values())
    report.errors.append("ask: HTTP 500")
    report.listed_after = 7
    assert serve.figures(report).targets == {
        "no request failed": False,
        "no uploaded document lost or duplicated": False,
    }


def test_soak_counts_lost_and_duplicated_uploads() -> None:
    soak = load_script("soak")
    run = soak.Soak(report=LoadReport(seconds=2.0, latencies={"ask": [10.0, 30.0]}))
    run.attempted = {"a.md", "b.md", "c.md", "d.md", "e.md"}
    run.accepted = {"a.md": "j1", "b.md": "j2", "c.md": "j3"}  # d.md's 202 was cut off
    run.accepted["e.md"] = "j5"  # still queued on the last server
    run.errors.update({"refused during kills": 7, "cut off by a kill": 1})
    run.peak_rss = 300 * 2**20
    run.audit = LogCheck(entries=3, head="3:ab", problems=("entry 2: hash does not match",))
    stored = ["/up/1/a.md", "/up/2/b.md", "/up/3/b.md", "/up/4/d.md", "/corpus/x.txt"]
    jobs = {"j1": "done", "j2": "done", "j3": "unknown", "j5": "queued"}
    uploads = soak.Uploads.count(run, stored, jobs)
    assert uploads == soak.Uploads(
        attempted=5,
        accepted=4,
        ingested=2,
        lost=1,
        lost_to_kills=1,
        pending=1,
        duplicated=1,
        unacknowledged=1,
    )
    out = soak.figures(run, uploads)
    by = {f.name: f.value for f in out.figures}
    assert by["uploads lost"] == 1 and by["uploads duplicated"] == 1 and by["requests"] == 2
    assert by["errors, refused during kills"] == 7 and by["peak RSS"] == 300
    assert by["audit entries"] == 3 and by["audit problems"] == 1
    assert out.notes[1] == (
        "errors: 5xx 0 · refused during kills 7 · cut off by a kill 1 · other 0"
    )
    assert out.targets == {
        "no 5xx": True,
        "no errors but those of the kills": True,
        "no accepted upload lost": False,
        "no upload duplicated": False,
        "audit chain unbroken": False,
    }


def test_retrieval_figures_next_to_bm25s() -> None:
    retrieval = load_script("retrieval")
    row = retrieval.Row
    rows = [
        row("bm25s (reference)", "memory", 0.686, 0.913, 0.2, 0.7),
        row("quoteproof bm25", "sqlite", 0.687, 0.932, 12.7, 17.7),
        row("quoteproof dense", "sqlite", 0.649, 0.925, 28.8, 112.2),
        row("quoteproof hybrid", "sqlite", 0.716, 0.955, 47.9, 119.6),
    ]
    out = Figures("retrieval")
    retrieval.add_rows(out, rows)
    retrieval.verdict(rows, out)
    by = {f.name: f for f in out.figures}
    assert len(out.figures) == 3 * 4
    assert (by["query p50 ms, bm25 (sqlite)"].value, by["query p50 ms, bm25 (sqlite)"].reference) \
        == (12.7, 0.2)  # fmt: skip
    ndcg = by["nDCG@10, hybrid (sqlite)"]
    assert (ndcg.value, ndcg.reference, ndcg.reference_name) == (0.716, 0.686, "bm25s nDCG@10")
    assert by["recall@100, dense (sqlite)"].reference_name == "bm25s recall@100"
    assert out.notes == ["sqlite: hybrid nDCG@10 0.716 vs best part 0.687: PASS "
                         "(target >= 0.70 and above both parts)"]  # fmt: skip
    assert out.targets == {"sqlite: hybrid nDCG@10 >= 0.70 and above both parts": True}


def test_eval_figures_from_a_json_report() -> None:
    eval_sets = load_script("eval_sets")
    report: dict[str, Any] = {
        "schema": "quoteproof.eval/1",
        "config": {"top_k": 5},
        "metrics": {
            "items": 40,
            "verbatim_rate": 1.0,
            "quote_precision": 0.5,
            "citation_accuracy": None,
            "retrieval_recall": {"5": 0.75, "20": 0.9},
            "latency_ms": {"p50": 12.5, "p95": 30.0},
        },
        "items": [{"metrics": {"verbatim_rate": 0.0}}],
    }
    out = Figures("eval")
    assert eval_sets.add_report(out, "demo", report) == 6
    assert [(f.name, f.value, f.unit) for f in out.figures] == [
        ("demo: verbatim rate %", 100.0, "%"),
        ("demo: quote precision %", 50.0, "%"),
        ("demo: retrieval recall@5 %", 75.0, "%"),
        ("demo: retrieval recall@20 %", pytest.approx(90.0), "%"),
        ("demo: latency p50 ms", 12.5, "ms"),
        ("demo: latency p95 ms", 30.0, "ms"),
    ]
    assert all(f.reference is None for f in out.figures)
    assert eval_sets.add_report(out, "demo", None) == 0
    assert eval_sets.add_report(out, "demo", [1, 2]) == 0


def test_startup_figures_ratios_and_targets() -> None:
    startup = load_script("startup")
    medians = {
        "python -c pass": 0.02,
        "quoteproof --help": 0.25,
        "ask, --retriever bm25": 0.7,
        "ask, hybrid (default)": 1.4,
    }
    out = startup.figures(medians)
    by = {f.name: f for f in out.figures}
    assert len(out.figures) == 1 + 3
    help_s = by["quoteproof --help, s"]
    assert (help_s.reference_name, help_s.ratio) == ("python -c pass", pytest.approx(12.5))
    # every reference is a figure of this run; issue 17's "before" only a note
    assert {f.reference_name for f in out.figures} == {"", "python -c pass"}
    assert out.notes == [
        "issue 17, before the work (another run): quoteproof --help 2.7 s; "
        "ask, --retriever bm25 2.8 s; ask, hybrid (default) 10 s"
    ]
    assert out.targets == {
        "quoteproof --help <= 0.3 s": True,
        "ask, --retriever bm25 <= 0.6 s": False,
        "ask, hybrid (default) <= 1.5 s": True,
    }
    rows = startup.table(medians, vectors=False)
    assert [row.split()[-1] for row in rows[2:5]] == ["PASS", "FAIL", "PASS"]
    assert rows[-1].startswith("(the index has no vectors")
