"""`quoteproof bench` and the quote-recovery benchmark: the recovery metrics on a real
(small) index, the difflib and rapidfuzz matchers, the table built from captured
script outputs (no slow script runs), and `bench --only recovery` end to end."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from quoteproof import Index
from quoteproof.bench import (
    BenchReport,
    Row,
    Run,
    canonical_name,
    eval_rows,
    format_table,
    load_recovery,
    parse_output,
    recovery_rows,
    run_bench,
)
from quoteproof.model import Chunk

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def recovery() -> ModuleType:
    """benchmarks/recovery.py, imported by path as `quoteproof bench` imports it."""
    module: ModuleType = load_recovery(REPO)
    return module


# --- recovery metrics ------------------------------------------------------------------


def test_iou(recovery: ModuleType) -> None:
    assert recovery.iou((0, 10), (0, 10)) == 1.0
    assert recovery.iou((0, 10), (5, 15)) == pytest.approx(5 / 15)
    assert recovery.iou((0, 10), (10, 20)) == 0.0
    assert recovery.iou((0, 10), (2, 8)) == pytest.approx(0.6)
    assert recovery.iou((3, 3), (3, 3)) == 0.0


def _text_of(index_dir: Path, name: str) -> str:
    with Index.open(index_dir) as index:
        summary = next(d for d in index.store.list_documents() if d.source_path.endswith(name))
        document = index.store.get_document(summary.doc_id, summary.version)
    assert document is not None
    return document.text


def _case(
    recovery: ModuleType,
    case_id: str,
    text: str,
    passage: str,
    edited: str,
    edits: list[str],
    expect: str = "span",
) -> Any:
    start = text.index(passage)
    return recovery.Case.from_dict(
        {
            "id": case_id,
            "source": "shingles.md",
            "start": start,
            "end": start + len(passage),
            "gold": passage,
            "edited": edited,
            "edits": edits,
            "expect": expect,
        }
    )


RASH = "A rash of fluid-filled blisters appears one to five days later."
ONCE = "Most people do not get shingles more than once."


def test_recovery_metrics_on_a_small_index(
    recovery: ModuleType, corpus: Path, index_dir: Path
) -> None:
    text = _text_of(index_dir, "shingles.md")
    cases = [
        _case(recovery, "exact", text, RASH, RASH, []),
        _case(recovery, "typo", text, RASH, RASH.replace("filled", "filed"), ["typo"]),
        _case(recovery, "drop", text, ONCE, ONCE.replace(" not", ""), ["dropped_word"]),
        # the edited words are another passage: whatever is shown, it is not [start, end)
        _case(recovery, "elsewhere", text, ONCE, RASH, ["swapped_words"]),
        _case(
            recovery,
            "absent",
            text,
            ONCE,
            "The shingles vaccine must be stored frozen at minus fifty degrees.",
            ["changed_number"],
            "none",
        ),
        # words that are in the source, although the case says they are not
        _case(recovery, "present", text, ONCE, ONCE, ["changed_number"], "none"),
    ]
    report = recovery.run_recovery(cases, corpus)
    assert (report.cases, report.span_cases, report.none_cases) == (6, 4, 2)
    ours = report.matcher(recovery.QUOTEPROOF)
    assert (ours.recovered, ours.span_cases) == (3, 4)
    assert ours.accuracy == pytest.approx(0.75)
    assert (ours.false_quotes, ours.none_cases) == (1, 2)
    assert ours.false_quote_rate == pytest.approx(0.5)
    assert ours.mean_ms > 0 and ours.p95_ms >= 0
    difflib_result = report.matcher(recovery.DIFFLIB)
    assert difflib_result.speedup_vs_difflib == pytest.approx(1.0)
    assert ours.speedup_vs_difflib == pytest.approx(difflib_result.mean_ms / ours.mean_ms)
    assert {m.name for m in report.matchers} == {
        recovery.QUOTEPROOF,
        recovery.DIFFLIB,
        recovery.RAPIDFUZZ,
    }

    misses = {miss.case_id: miss for miss in report.misses}
    assert set(misses) == {"elsewhere", "present"}
    assert misses["elsewhere"].iou == 0.0 and misses["elsewhere"].shown == RASH
    assert misses["present"].shown == ONCE

    kinds = {k.kind: k for k in report.by_kind}
    assert set(kinds) == {"typo", "dropped_word", "swapped_words", "changed_number"}
    assert kinds["typo"].span_cases == 1 and kinds["typo"].recovered[recovery.QUOTEPROOF] == 1
    assert kinds["swapped_words"].recovered[recovery.QUOTEPROOF] == 0
    assert kinds["changed_number"].none_cases == 2
    assert kinds["changed_number"].false_quotes[recovery.QUOTEPROOF] == 1

    assert report.targets() == {
        "accuracy >= 99%": False,
        "no false quotes": False,
        ">= 10x faster than difflib": ours.speedup_vs_difflib >= 10,
    }
    printed = "\n".join(report.lines())
    assert "quoteproof misses (2" in printed and "elsewhere" in printed
    data = report.to_dict()
    assert json.loads(json.dumps(data))["matchers"][0]["accuracy"] == pytest.approx(0.75)


def test_recovery_refuses_cases_built_from_another_text(
    recovery: ModuleType, corpus: Path, index_dir: Path
) -> None:
    text = _text_of(index_dir, "shingles.md")
    case = _case(recovery, "bad", text, RASH, RASH, [])
    wrong = recovery.Case.from_dict({**case.__dict__, "edits": [], "gold": "something else"})
    with pytest.raises(ValueError, match="gold is not the canonical text"):
        recovery.run_recovery([wrong], corpus)


def test_load_cases_sample_is_stable(recovery: ModuleType, tmp_path: Path) -> None:
    lines = [
        {
            "id": f"c{i}",
            "source": "a.pdf",
            "start": i,
            "end": i + 5,
            "gold": "xxxxx",
            "edited": "yyyyy",
            "edits": ["typo"],
            "expect": "span",
        }
        for i in range(50)
    ]
    path = tmp_path / "recovery.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert len(recovery.load_cases(path)) == 50
    sample = recovery.load_cases(path, 10)
    assert [c.id for c in sample] == [c.id for c in recovery.load_cases(path, 10)]
    assert len(sample) == 10 and sample == sorted(sample, key=lambda c: int(c.id[1:]))


def _chunk(text: str, start: int, ordinal: int = 0) -> Chunk:
    return Chunk(
        ref=f"r{ordinal}",
        doc_id="d",
        doc_version=1,
        ordinal=ordinal,
        start=start,
        end=start + len(text),
        text=text,
        section=(),
        label="d",
        source_path="/d.txt",
    )


DOSE = "Remdesivir dosing. The recommended dose is 200 mg on day 1, followed by 100 mg once daily."
OTHER = "Do not use remdesivir in patients with known hypersensitivity to it."


def test_difflib_matcher_finds_the_window(recovery: ModuleType) -> None:
    chunks = [_chunk(OTHER, 0, 0), _chunk(DOSE, 500, 1)]
    window = "The recommended dose is 200 mg on day 1,"
    expected = (500 + DOSE.index(window), 500 + DOSE.index(window) + len(window))
    assert recovery.difflib_match("The recomended dose is 200 mg on day 1,", chunks) == expected
    assert recovery.difflib_match(window, chunks) == expected
    assert (
        recovery.difflib_match("Bananas grow in tropical climates all year round", chunks) is None
    )
    # a quote as long as the whole chunk: one window, the chunk itself
    assert recovery.difflib_match(OTHER, chunks) == (0, len(OTHER))


def test_rapidfuzz_matcher(recovery: ModuleType) -> None:
    chunks = [_chunk(OTHER, 0, 0), _chunk(DOSE, 500, 1)]
    quote = "followed by 100 mg once daily"
    start = 500 + DOSE.index(quote)
    assert recovery.rapidfuzz_match(quote, chunks) == (start, start + len(quote))
    assert recovery.rapidfuzz_match("Bananas grow in tropical climates all year", chunks) is None


# --- the table, from captured outputs of each script ---------------------------------

INGEST_OUT = """\
11 PDFs, 251 pages, best of 1 rounds, 1 process
                                      pages  seconds  pages/s  share of raw
raw pypdfium2 get_text_range            251    0.437      574         100%
quoteproof parse                        251    0.749      335          58%
quoteproof parse + chunk + index        251    0.818      307          53%
  same, --jobs 2 (2 parse workers)      251    0.633      397          69%
"""

RETRIEVAL_OUT = """\
  model load and warm-up: 4.1 s (not counted)
SciFact ingest: 5,183 files, 5,323 chunks in 2.9 s, then 5,323 vectors
  embeddings/s: quoteproof ingest 23.6 · raw encode 24.4 · ratio 0.97 (target >= 0.90)

30 test queries; latency in ms
  retriever          store       nDCG@10 recall@100      p50      p95
  bm25s (reference)  memory        0.686      0.913      0.2      0.7
  quoteproof bm25    sqlite        0.687      0.932     12.7     17.7
  quoteproof dense   sqlite        0.649      0.925     28.8    112.2
  quoteproof hybrid  sqlite        0.716      0.955     47.9    119.6
sqlite: hybrid nDCG@10 0.716 vs best part 0.687: PASS (target >= 0.70 and above both parts)
"""

QUOTING_OUT = """\

demo corpus (questions x10): 90 questions, 80 answered, 400 quotes (160 fuzzy)
                                                   mean      p50      p95  (ms)
  retrieval alone (BM25 top 5)                     0.84     0.92     1.26
  prompt + parse + resolve                         2.57     1.52     7.81
  render JSON                                      0.31     0.27     0.54
  render terminal (rich)                           3.00     3.05     3.99
  quoting layer, JSON output                       2.88     1.79     8.34
  quoting layer, terminal output                   5.57     4.62    10.50
  non-LLM ask, JSON (retrieval + quoting)          3.73     2.75     9.30
  quoting layer adds at most 5.57 ms per answer (mean): FAIL (target < 5 ms)

SciFact ingest: 5183 files -> 5183 documents, 5323 chunks in 3.0 s

SciFact (30 queries): 30 questions, 30 answered, 150 quotes (60 fuzzy)
                                                   mean      p50      p95  (ms)
  retrieval alone (BM25 top 5)                     9.04     8.73    12.47
  prompt + parse + resolve                         1.70     1.70     2.20
  quoting layer, JSON output                       2.00     2.00     2.49
  quoting layer, terminal output                   4.72     4.79     5.39
  quoting layer adds at most 4.72 ms per answer (mean): PASS (target < 5 ms)
"""

TOKENS_OUT = """\
Completion tokens for the same answers (tokenizer: all-MiniLM-L6-v2 WordPiece)
question                                                   quotes  chars <quote ref/>  full text
What are the early signs of shingles?                           3   3484           59        868
What is normal blood pressure for adults?                       3   6753           56       1340
total (22 answers)                                             66 114052         1266      25267
deterministic quoting writes 58 completion tokens per answer instead of 1148: 95% fewer (20.0x)
"""

SERVE_OUT = """\
20 clients for 10.4 s against quoteproof serve (extractive backend, BM25), while 200 uploaded \
documents were ingested
endpoint     requests   req/s   p50 ms   p95 ms
ask               610    58.6     65.7   1348.6
search            600    57.6     31.5     70.3
all              1210   116.2     43.5   1071.0
errors: 0 · ingest job: done · documents 19 -> 219 (lost 0, duplicated 0)
"""


def _by_figure(rows: list[Row]) -> dict[str, Row]:
    return {row.figure: row for row in rows}


def test_parse_ingest() -> None:
    rows, notes = parse_output("ingest", INGEST_OUT)
    by = _by_figure(rows)
    assert len(rows) == 3 and notes == []
    main = by["pages/s, parse + chunk + index (1 process)"]
    assert (main.value, main.reference) == (307, 574)
    assert main.reference_name == "raw pypdfium2 get_text_range"
    assert main.ratio == pytest.approx(307 / 574)
    assert by["pages/s, parse + chunk + index (--jobs 2)"].value == 397
    assert by["pages/s, parse only"].value == 335


def test_parse_retrieval() -> None:
    rows, notes = parse_output("retrieval", RETRIEVAL_OUT)
    by = _by_figure(rows)
    embeddings = by["embeddings/s, quoteproof ingest"]
    assert (embeddings.value, embeddings.reference) == (23.6, 24.4)
    assert by["query p50 ms, bm25 (sqlite)"].value == 12.7
    assert by["query p50 ms, bm25 (sqlite)"].reference == 0.2
    assert by["query p95 ms, hybrid (sqlite)"].value == 119.6
    assert by["query p95 ms, hybrid (sqlite)"].reference == 0.7
    ndcg = by["nDCG@10, hybrid (sqlite)"]
    assert (ndcg.value, ndcg.reference, ndcg.reference_name) == (0.716, 0.686, "bm25s nDCG@10")
    assert by["recall@100, dense (sqlite)"].value == 0.925
    assert len(rows) == 1 + 3 * 4
    assert notes == ["retrieval: sqlite: hybrid nDCG@10 0.716 vs best part 0.687: PASS "
                     "(target >= 0.70 and above both parts)"]  # fmt: skip


def test_parse_quoting() -> None:
    rows, notes = parse_output("quoting", QUOTING_OUT)
    by = _by_figure(rows)
    demo = by["quoting layer ms/answer (JSON), demo corpus (questions x10)"]
    assert (demo.value, demo.reference) == (2.88, 0.84)
    scifact = by["quoting layer ms/answer (terminal), SciFact (30 queries)"]
    assert (scifact.value, scifact.reference) == (4.72, 9.04)
    assert len(rows) == 4
    assert len(notes) == 2 and "FAIL" in notes[0] and "PASS" in notes[1]


def test_parse_tokens() -> None:
    rows, _ = parse_output("tokens", TOKENS_OUT)
    (row,) = rows
    assert row.value == pytest.approx(1266 / 22) and row.reference == pytest.approx(25267 / 22)
    assert row.ratio == pytest.approx(1266 / 25267)


def test_parse_serve() -> None:
    rows, notes = parse_output("serve", SERVE_OUT)
    by = _by_figure(rows)
    assert by["req/s, all"].value == 116.2 and by["req/s, all"].reference is None
    assert by["p50 ms, ask"].value == 65.7 and by["p95 ms, search"].value == 70.3
    assert by["p95 ms, all"].ratio is None
    assert len(rows) == 9
    assert notes and "lost 0, duplicated 0" in notes[0]


def test_parse_garbage_gives_no_rows() -> None:
    for name in ("ingest", "retrieval", "quoting", "tokens", "serve"):
        assert parse_output(name, "Traceback (most recent call last):\n  boom\n")[0] == []


RECOVERY_DICT: dict[str, Any] = {
    "matchers": [
        {"name": "quoteproof resolve_quote", "span_cases": 90, "none_cases": 10,
         "accuracy": 0.99, "false_quote_rate": 0.0, "mean_ms": 1.5, "p95_ms": 4.0},
        {"name": "difflib SequenceMatcher", "span_cases": 90, "none_cases": 10,
         "accuracy": 0.7, "false_quote_rate": 0.1, "mean_ms": 60.0, "p95_ms": 150.0},
        {"name": "rapidfuzz partial_ratio_alignment", "span_cases": 90, "none_cases": 10,
         "accuracy": 0.8, "false_quote_rate": 0.0, "mean_ms": 0.1, "p95_ms": 0.2},
    ],
    "targets": {"accuracy >= 99%": True, "no false quotes": True},
}  # fmt: skip


def test_recovery_rows() -> None:
    rows, notes = recovery_rows(RECOVERY_DICT)
    mean = [r for r in rows if r.figure == "quote resolution mean ms/quote"]
    assert [(r.reference_name, r.reference) for r in mean] == [
        ("difflib SequenceMatcher", 60.0),
        ("rapidfuzz partial_ratio_alignment", 0.1),
    ]
    assert mean[0].value == 1.5 and mean[0].ratio == pytest.approx(1.5 / 60)
    accuracy = [r for r in rows if r.figure.startswith("quote recovery accuracy")]
    assert [r.value for r in accuracy] == [99.0, 99.0]
    assert [r.reference for r in accuracy] == [70.0, 80.0]
    false = [r for r in rows if r.figure.startswith("false quotes")]
    assert false[0].value == 0 and false[0].reference == pytest.approx(10.0)
    assert false[1].ratio is None  # 0 / 0
    assert notes == ["recovery: quoteproof targets: accuracy >= 99%: PASS; no false quotes: PASS"]


def test_format_table_has_every_row_notes_and_failures() -> None:
    runs = []
    for name, out in (
        ("ingest", INGEST_OUT),
        ("retrieval", RETRIEVAL_OUT),
        ("quoting", QUOTING_OUT),
        ("tokens", TOKENS_OUT),
        ("serve", SERVE_OUT),
    ):
        rows, notes = parse_output(name, out)
        runs.append(Run(name, ["python", f"{name}.py"], stdout=out, rows=rows, notes=notes))
    rows, notes = recovery_rows(RECOVERY_DICT)
    runs.append(Run("recovery", ["run_recovery"], rows=rows, notes=notes))
    runs.append(Run("eval", ["eval"], returncode=1, error="exit status 1"))
    report = BenchReport(runs, quick=True, started="2025-01-01T00:00:00+00:00")
    lines = format_table(report)
    assert "--quick" in lines[0]
    assert lines[1].split()[:3] == ["benchmark", "figure", "value"]
    body = lines[2 : 2 + len(report.rows)]
    assert len(body) == len(report.rows) == 3 + 13 + 4 + 1 + 9 + 8
    ingest = next(line for line in body if "(1 process)" in line)
    assert ingest.split()[-3:] == ["get_text_range", "574", "0.53x"]
    resolution = next(line for line in body if "mean ms/quote" in line)
    assert resolution.endswith("0.025x")
    assert "failed: eval: exit status 1" in lines
    assert any(line.startswith("serve: errors: 0") for line in lines)
    assert not report.ok
    data = json.loads(json.dumps(report.to_dict()))
    assert data["schema"] == "quoteproof.bench/1" and len(data["rows"]) == len(report.rows)
    assert data["rows"][0]["ratio"] == pytest.approx(307 / 574)


def test_benchmark_names() -> None:
    assert canonical_name("quoting_overhead") == "quoting"
    assert canonical_name("recovery") == "recovery"
    with pytest.raises(ValueError, match="unknown benchmark"):
        canonical_name("nope")


def test_eval_rows_read_the_metrics_of_a_json_report() -> None:
    report = {
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
    rows = eval_rows("demo", json.dumps(report))
    assert [(r.figure, r.value) for r in rows] == [
        ("demo: verbatim rate %", 100.0),
        ("demo: quote precision %", 50.0),
        ("demo: retrieval recall@5 %", 75.0),
        ("demo: retrieval recall@20 %", 90.0),
        ("demo: latency p50 ms", 12.5),
        ("demo: latency p95 ms", 30.0),
    ]
    assert all(r.reference is None and r.ratio is None for r in rows)
    assert eval_rows("demo", "not json") == []
    assert eval_rows("demo", "[1, 2]") == []


# --- orchestration, on a stand-in checkout ---------------------------------------------


def _fake_repo(root: Path) -> Path:
    """A checkout whose tokens script prints a captured table (and progress on stderr),
    whose ingest script fails, and whose recovery cases name a missing PDF."""
    (root / "benchmarks").mkdir(parents=True)
    (root / "evalsets").mkdir()
    (root / "benchmarks" / "recovery.py").write_text(
        (REPO / "benchmarks" / "recovery.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (root / "benchmarks" / "tokens.py").write_text(
        f"import sys\nprint('working', file=sys.stderr)\nprint({TOKENS_OUT!r})\n",
        encoding="utf-8",
    )
    (root / "benchmarks" / "ingest.py").write_text("raise SystemExit('no PDFs')\n")
    case = {"id": "c1", "source": "missing.pdf", "start": 0, "end": 4, "gold": "text",
            "edited": "text", "edits": [], "expect": "span"}  # fmt: skip
    (root / "evalsets" / "recovery.jsonl").write_text(json.dumps(case) + "\n")
    return root


def test_run_bench_runs_parses_and_records_failures(tmp_path: Path) -> None:
    repo = _fake_repo(tmp_path / "repo")
    messages: list[str] = []
    echoed = io.StringIO()
    report = run_bench(
        ["tokens", "ingest", "recovery"],
        repo=repo,
        data_dir=tmp_path,
        progress=messages.append,
        echo=echoed,
    )
    assert [run.name for run in report.runs] == ["ingest", "tokens", "recovery"]
    ingest, tokens, recovery_run = report.runs
    assert tokens.ok and tokens.command[0] == sys.executable
    assert [row.figure for row in tokens.rows] == ['completion tokens/answer, <quote ref="…"/>']
    assert "  tokens| working" in echoed.getvalue() and tokens.stderr == "working\n"
    assert not ingest.ok and ingest.returncode == 1 and "no PDFs" in ingest.stderr
    assert ingest.error == "no figures found in its output"
    assert not recovery_run.ok and "FileNotFoundError" in (recovery_run.error or "")
    assert "missing.pdf" in (recovery_run.error or "")
    assert not report.ok
    assert messages[0] == "[1/3] ingest: running"
    assert any(m.startswith("[2/3] tokens: done in") for m in messages)
    lines = format_table(report)
    assert "failed: ingest: no figures found in its output" in lines
    assert sum(line.startswith("tokens ") for line in lines) == 1


def test_run_bench_without_recovery_cases(tmp_path: Path) -> None:
    repo = _fake_repo(tmp_path / "repo")
    (repo / "evalsets" / "recovery.jsonl").unlink()
    (run,) = run_bench(["recovery"], repo=repo).runs
    assert not run.ok and "build it with evalsets/build.py" in (run.error or "")


# --- end to end ------------------------------------------------------------------------


def _quoteproof(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quoteproof", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_bench_unknown_name_is_a_usage_error() -> None:
    result = _quoteproof("bench", "--only", "nope", cwd=REPO)
    assert result.returncode == 2 and "unknown benchmark 'nope'" in result.stderr


@pytest.mark.skipif(
    not (REPO / "evalsets" / "recovery.jsonl").is_file(),
    reason="evalsets/recovery.jsonl not built yet (evalsets/build.py)",
)
def test_bench_only_recovery_end_to_end(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"
    result = _quoteproof(
        "bench", "--only", "recovery", "--sample", "20", "--output", str(output), cwd=REPO
    )
    assert result.returncode in (0, 1), result.stderr
    assert "[1/1] recovery: running" in result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split()[:2] == ["benchmark", "figure"]
    assert sum(line.startswith("recovery ") for line in lines) == 8
    data = json.loads(output.read_text(encoding="utf-8"))
    (run,) = data["runs"]
    assert run["name"] == "recovery" and run["data"]["cases"] == 20
    assert (result.returncode == 0) == run["ok"] == data["ok"]
    assert "quoteproof targets:" in result.stdout
