"""benchmarks/run.py: runs stand-in scripts (real subprocesses writing real figures
JSON), reads their figures, records failures, prints the combined table; and one real
benchmark end to end. No timing is asserted."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from figures import Figures
from helpers.bench_scripts import BENCH_DIR, REPO
from run import BenchReport, Run, canonical_name, run_bench

WRITES = """\
import sys
from pathlib import Path
from figures import Figures

print("the script's own table")
print("working", file=sys.stderr)
out = Figures({name!r}, data=sys.argv[1:-2])
{body}
out.write(Path(sys.argv[-1]))
"""

SCRIPTS = {
    # writes figures and exits 0
    "tokens.py": WRITES.format(name="tokens", body="""\
out.add('completion tokens/answer, <quote ref="…"/>', 57.5, "tokens",
        "passages copied out in full", 1148.0)
out.note("58 completion tokens per answer instead of 1148")
"""),
    # fails before writing anything
    "ingest.py": "raise SystemExit('no PDFs')\n",
    # writes figures, misses a target, exits 1
    "recovery.py": WRITES.format(name="recovery", body="""\
out.add("quote resolution mean ms/quote", 1.82, "ms", "difflib SequenceMatcher", 110.0)
out.target("accuracy >= 99%", False)
out.note("quoteproof targets: accuracy >= 99%: FAIL")
""") + "raise SystemExit(1)\n",
    # exits 0 without writing
    "serve.py": "print('req/s 116.2')\n",
    # writes something that is not figures JSON
    "quoting_overhead.py": "import sys\nopen(sys.argv[-1], 'w').write('{')\n",
    # writes a note and no figure
    "eval_sets.py": WRITES.format(name="eval", body="out.note('demo: skipped')"),
}  # fmt: skip


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A stand-in benchmarks/ folder: SCRIPTS and the real figures.py."""
    scripts = tmp_path / "repo" / "benchmarks"
    scripts.mkdir(parents=True)
    shutil.copy(BENCH_DIR / "figures.py", scripts)
    for name, text in SCRIPTS.items():
        (scripts / name).write_text(text, encoding="utf-8")
    return scripts


def _runs(report: BenchReport) -> dict[str, Run]:
    return {run.name: run for run in report.runs}


def test_runner_reads_figures_and_records_each_failure(folder: Path) -> None:
    messages: list[str] = []
    echoed = io.StringIO()
    names = ["tokens", "ingest", "recovery", "serve", "quoting_overhead", "eval"]
    report = run_bench(names, folder=folder, progress=messages.append, echo=echoed)
    runs = _runs(report)
    assert list(runs) == ["ingest", "quoting", "tokens", "serve", "recovery", "eval"]

    tokens = runs["tokens"]
    assert tokens.ok and tokens.returncode == 0 and tokens.command[0] == sys.executable
    assert tokens.command[1:] == [str(folder / "tokens.py"), "--json", tokens.command[-1]]
    assert tokens.stdout == "the script's own table\n" and tokens.stderr == "working\n"
    assert "  tokens| working" in echoed.getvalue()
    assert tokens.figures is not None and tokens.figures.data == []
    (figure,) = tokens.figures.figures
    assert (figure.value, figure.reference, figure.unit) == (57.5, 1148.0, "tokens")

    assert runs["ingest"].error == "exit status 1: no PDFs" and runs["ingest"].figures is None
    assert runs["recovery"].error == "exit status 1: missed a target (see the notes)"
    assert runs["serve"].error == "it wrote no figures"
    assert (runs["quoting"].error or "").startswith("could not read its figures: not JSON")
    assert runs["eval"].error == "no figures in what it wrote"
    assert not report.ok

    assert messages[0] == "[1/6] ingest: running"
    assert any(m.startswith("[3/6] tokens: done in") for m in messages)
    assert any(m.startswith("[1/6] ingest: FAILED (exit status 1: no PDFs) in") for m in messages)


def test_quick_and_extra_options_reach_the_script(folder: Path) -> None:
    report = run_bench(["recovery", "tokens"], folder=folder, quick=True,
                       extra={"recovery": ["--sample", "20"]})  # fmt: skip
    runs = _runs(report)
    assert runs["recovery"].figures is not None
    assert runs["recovery"].figures.data == ["--sample", "200", "--sample", "20"]
    assert runs["tokens"].figures is not None and runs["tokens"].figures.data == []


def test_the_combined_table(folder: Path) -> None:
    report = run_bench(["tokens", "recovery", "ingest"], folder=folder, quick=True)
    report.started = "2026-01-01T00:00:00+00:00"
    lines = report.table()
    assert lines[0] == (
        "benchmarks/run.py (2026-01-01T00:00:00+00:00, --quick): "
        "figure / reference measured in the same run"
    )
    assert lines[1].split() == ["benchmark", "figure", "value", "reference", "ref", "value",
                                "ratio"]  # fmt: skip
    tokens, recovery = lines[2:4]
    assert tokens.startswith("tokens     completion tokens/answer")
    assert tokens.split()[-8:] == ["57.5", "passages", "copied", "out", "in", "full", "1,148",
                                   "0.05x"]  # fmt: skip
    assert recovery.split()[-5:] == ["1.82", "difflib", "SequenceMatcher", "110", "0.017x"]
    assert len({len(line) for line in lines[1:4]}) == 1  # aligned columns
    assert lines[4:] == [
        "",
        "tokens: 58 completion tokens per answer instead of 1148",
        "recovery: quoteproof targets: accuracy >= 99%: FAIL",
        "",
        "failed: ingest: exit status 1: no PDFs",
        "failed: recovery: exit status 1: missed a target (see the notes)",
    ]


def test_report_json(folder: Path) -> None:
    report = run_bench(["tokens", "ingest"], folder=folder)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["schema"] == "quoteproof.bench/2" and data["ok"] is False
    (row,) = data["rows"]
    assert row["benchmark"] == "tokens" and row["unit"] == "tokens"
    assert row["ratio"] == pytest.approx(57.5 / 1148)
    ingest, tokens = data["runs"]
    assert ingest["ok"] is False and ingest["figures"] == [] and "no PDFs" in ingest["stderr"]
    assert tokens["notes"] == ["58 completion tokens per answer instead of 1148"]
    assert tokens["stdout"] == "the script's own table\n"


def test_benchmark_names() -> None:
    assert canonical_name("quoting_overhead") == "quoting"
    assert canonical_name("real_model") == "realmodel"
    assert canonical_name("recovery") == "recovery"
    assert canonical_name("context_forms") == "contextforms"
    with pytest.raises(ValueError, match="unknown benchmark 'nope'"):
        canonical_name("nope")


def _runner(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH_DIR / "run.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )


def test_unknown_name_is_a_usage_error() -> None:
    result = _runner("--only", "nope")
    assert result.returncode == 2 and "unknown benchmark 'nope'" in result.stderr


@pytest.mark.skipif(
    not (REPO / "evalsets" / "recovery.jsonl").is_file()
    or not (REPO.parent / "shared" / "data" / "fda-remdesivir-label").is_dir(),
    reason="needs evalsets/recovery.jsonl and its PDFs in ../shared/data",
)
def test_only_recovery_end_to_end(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"
    result = _runner("--only", "recovery", "--sample", "20", "--output", str(output))
    assert result.returncode in (0, 1), result.stderr
    assert "[1/1] recovery: running" in result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split()[:2] == ["benchmark", "figure"]
    assert sum(line.startswith("recovery ") for line in lines) == 8
    assert any(line.startswith("recovery: quoteproof targets:") for line in lines)
    data = json.loads(output.read_text(encoding="utf-8"))
    (run,) = data["runs"]
    assert run["name"] == "recovery" and run["data"]["cases"] == 20
    assert (result.returncode == 0) == run["ok"] == data["ok"]
    assert Figures.from_dict({"schema": "quoteproof.figures/1", "benchmark": "recovery",
                              "figures": run["figures"]}).figures  # fmt: skip
