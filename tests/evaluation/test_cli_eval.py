"""`quoteproof eval` as a user runs it: real processes, real exit codes, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from conftest import REPO_ROOT
from helpers.llm_servers import ScriptedOpenAIServer
from quoteproof import Index
from quoteproof.cli import app

DEMO_SET = REPO_ROOT / "evalsets" / "demo.jsonl"

ITEMS = [
    {
        "id": "shingles-sign",
        "question": "What is the first sign of shingles?",
        "answerable": True,
        "gold_refs": ["shingles.md"],
        "gold_quotes": ["The first sign of shingles is often burning or tingling pain."],
    },
    {
        "id": "dose",
        "question": "What is the recommended dose of remdesivir?",
        "answerable": True,
        "gold_refs": ["corpus/dosing.txt"],
        "gold_quotes": [
            "The recommended dose is 200 mg on day 1,\n followed by 100 mg once daily."
        ],
        "gold_answer": "200 mg, then 100 mg",
    },
    {
        "id": "pressure",
        "question": "What is normal blood pressure?",
        "answerable": True,
        "gold_refs": ["nested/pressure.html"],
    },
    {
        "id": "mars",
        "question": "How far away is Mars from Jupiter in kilometres?",
        "answerable": False,
    },
]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "QUOTEPROOF_"))}
    return subprocess.run(
        [sys.executable, "-m", "quoteproof", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "COLUMNS": "120"},
        cwd=cwd,
    )


def write_set(path: Path, items: list[dict[str, Any]] = ITEMS) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def invoke(*args: str) -> Result:
    """Run the command in this process (quicker than a new one for many small runs)."""
    return CliRunner().invoke(app, list(args))


def test_eval_writes_json_and_a_self_contained_html_report(index_dir: Path, tmp_path: Path) -> None:
    evalset = write_set(tmp_path / "tiny.jsonl")
    result = run("eval", str(evalset), "--index", str(index_dir), "--recall-k", "1,2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    run_file, html_file = tmp_path / "eval-tiny.json", tmp_path / "eval-tiny.html"
    assert f"run written to {run_file.name}, report to {html_file.name}" in result.stderr

    report = json.loads(run_file.read_text(encoding="utf-8"))
    assert report["schema"] == "quoteproof.eval/1"
    assert report["set"]["items"] == 4 and report["set"]["name"] == "tiny"
    assert report["config"]["backend"] == "extractive" and report["config"]["recall_k"] == [1, 2, 5]
    metrics = report["metrics"]
    assert {
        "verbatim_rate", "quote_precision", "quote_recall", "citation_accuracy",
        "refusal_correct", "false_refusal_rate", "retrieval_recall", "latency_ms", "tokens",
    } <= set(metrics)  # fmt: skip
    assert metrics["verbatim_rate"] == 1.0 and metrics["not_verbatim"] == 0
    assert metrics["quotes_checked"] > 0 and report["verbatim_failures"] == []
    assert metrics["tokens"] == {"prompt": None, "completion": None}
    assert set(metrics["retrieval_recall"]) == {"1", "2", "5"}
    assert metrics["latency_ms"]["p50"] is not None
    assert [item["id"] for item in report["items"]] == [i["id"] for i in ITEMS]
    for item in report["items"]:
        assert {"status", "latency_ms", "quotes_shown", "recall_hit", "answer"} <= set(item)
        assert item["missing_gold_refs"] == [] and item["unlocated_gold_quotes"] == []
        for quote in item["answer"]["quotes"]:
            assert quote["text"]  # re-checked by the run; 100% above
    assert report["items"][0]["quote_recall"] == 1.0
    assert report["items"][3]["recall_hit"] is None

    page = html_file.read_text(encoding="utf-8")
    assert "<script" not in page.lower()
    assert "data:image/png;base64," in page
    assert '<a href="#item-4">mars</a>' in page and 'id="item-4"' in page
    assert "verbatim rate" in result.stdout and "100.0%" in result.stdout


def test_compare_prints_and_reports_what_changed(index_dir: Path, tmp_path: Path) -> None:
    evalset = write_set(tmp_path / "tiny.jsonl")
    first = invoke(
        "eval", str(evalset), "--index", str(index_dir), "-o", str(tmp_path / "old.json")
    )
    assert first.exit_code == 0, first.stderr
    old = json.loads((tmp_path / "old.json").read_text(encoding="utf-8"))
    old["metrics"]["quote_recall"] = 0.5
    old["items"][0]["status"] = "refused"
    old["items"][1]["recall_hit"] = False
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")

    new_run, html = tmp_path / "out" / "new.json", tmp_path / "report.html"
    second = run(
        "eval", str(evalset), "--index", str(index_dir), "-o", str(new_run),
        "--html", str(html), "--compare", str(tmp_path / "old.json"),
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    lines = second.stdout.splitlines()
    assert f"changes since {tmp_path / 'old.json'}:" in lines
    assert "  quote recall: 50.0% → 100.0% (+50.0 pp, better)" in lines
    assert "  verbatim rate: 100.0% → 100.0% (unchanged)" in lines
    assert "  shingles-sign: refused → answered" in lines
    assert "  dose: recall hit gained" in lines
    report = json.loads(new_run.read_text(encoding="utf-8"))
    assert report["compare"]["items"] == [
        {"id": "shingles-sign", "change": "refused → answered"},
        {"id": "dose", "change": "recall hit gained"},
    ]
    page = html.read_text(encoding="utf-8")
    assert "Changes since the earlier run" in page and "refused → answered" in page


def test_sample_and_usage_errors(index_dir: Path, tmp_path: Path) -> None:
    evalset = write_set(tmp_path / "tiny.jsonl")
    out = tmp_path / "s.json"
    first_two = invoke(
        "eval", str(evalset), "--index", str(index_dir), "--sample", "2", "-o", str(out)
    )
    assert first_two.exit_code == 0, first_two.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [i["id"] for i in report["items"]] == ["shingles-sign", "dose"]
    assert report["set"]["sample"] == {"size": 2, "seed": None}

    ids = []
    for n in range(2):
        seeded = tmp_path / f"seed{n}.json"
        result = invoke(
            "eval", str(evalset), "--index", str(index_dir), "--sample", "2", "--seed", "3",
            "-o", str(seeded),
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        ids.append([i["id"] for i in json.loads(seeded.read_text(encoding="utf-8"))["items"]])
    assert ids[0] == ids[1] and len(ids[0]) == 2

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(ITEMS[0]) + '\n{"id": "x", "question": "Q?"}\n', encoding="utf-8")
    failed = invoke("eval", str(bad), "--index", str(index_dir))
    assert failed.exit_code == 2
    assert f'error: {bad}:2: missing "answerable"' in " ".join(failed.stderr.split())
    no_sample = invoke("eval", str(evalset), "--index", str(index_dir), "--seed", "1")
    assert no_sample.exit_code == 2 and "--sample" in no_sample.stderr
    bad_k = invoke("eval", str(evalset), "--index", str(index_dir), "--recall-k", "1,x")
    assert bad_k.exit_code == 2 and "'x' is not a whole number" in bad_k.stderr
    not_a_run = invoke("eval", str(evalset), "--index", str(index_dir), "--compare", str(evalset))
    assert not_a_run.exit_code == 2 and "not a readable evaluation run" in not_a_run.stderr
    no_index = invoke("eval", str(evalset), "--index", str(tmp_path / "absent"))
    assert no_index.exit_code == 2 and "no index" in no_index.stderr


def test_model_backend_sums_tokens_and_failed_questions_exit_1(
    index_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    evalset = write_set(tmp_path / "tiny.jsonl")
    model = ("--llm", "openai", "--model", "scripted", "--base-url", openai_server.base_url)
    openai_server.script = ["<no-answer/>"]
    out = tmp_path / "llm.json"
    result = run("eval", str(evalset), "--index", str(index_dir), *model, "-o", str(out))
    assert result.returncode == 0, result.stderr
    metrics = json.loads(out.read_text(encoding="utf-8"))["metrics"]
    calls = len(openai_server.requests)  # the question with no sources asks no model
    assert calls == 3
    assert metrics["tokens"] == {"prompt": 10 * calls, "completion": 5 * calls}
    assert metrics["false_refusal_rate"] == 1.0 and metrics["refusal_correct"] == 1.0

    openai_server.script = [(400, {"error": {"message": "bad request", "type": "invalid"}})]
    failing = run("eval", str(evalset), "--index", str(index_dir), *model, "-o", str(out))
    assert failing.returncode == 1
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["metrics"]["errors"] == 3
    assert [i["status"] for i in report["items"]] == ["error", "error", "error", "refused"]
    assert "failed: shingles-sign:" in failing.stderr


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    location = tmp_path_factory.mktemp("demo") / "index"
    with Index.open(location, create=True) as index:
        results = index.ingest([REPO_ROOT / "examples" / "corpus"], embed=False)
    assert all(r.status == "added" for r in results)
    return location


@pytest.mark.skipif(
    not DEMO_SET.exists(), reason="evalsets/demo.jsonl is not generated yet (evalsets/build.py)"
)
def test_eval_on_a_sample_of_the_demo_set(demo_index: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo.json"
    result = invoke(
        "eval", str(DEMO_SET), "--index", str(demo_index), "--sample", "5", "-o", str(out)
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert len(report["items"]) == 5 and report["set"]["items"] > 5
    assert report["metrics"]["not_verbatim"] == 0
    assert report["metrics"]["verbatim_rate"] in (1.0, None)
    for item in report["items"]:
        # the set fits the demo corpus: every gold source is ingested, every gold quote found
        assert item["missing_gold_refs"] == [], item["id"]
        assert item["unlocated_gold_quotes"] == [], item["id"]
    assert (tmp_path / "demo.html").exists()
