"""The answers' faithfulness in `quoteproof eval`'s report: each item's score (in the
JSON, the HTML and beside its answer), the mean over the run and per answer mode
(terminal, JSON, HTML) and its drift against an earlier run. Answers come from a
scripted model on 127.0.0.1 whose claims are known: all supported, half, none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluation.test_cli_eval import ITEMS, invoke, write_set
from helpers.llm_servers import ScriptedOpenAIServer
from quoteproof import Index
from quoteproof.evaluation.metrics import ItemScores, ModeFaithfulness, summarize
from quoteproof.evaluation.report import flat_metrics
from quoteproof.render.evaluation import faithfulness_lines


def refs(index_dir: Path) -> list[str]:
    """The first hit's ref for each of the first three items."""
    with Index.open(index_dir) as index:
        return [index.search(str(item["question"]), top_k=1)[0].chunk.ref for item in ITEMS[:3]]


def replies(index_dir: Path) -> list[str]:
    """Cite-mode replies to the first three items, each claim's words in its passage:
    one claim, then two, then one."""
    r = refs(index_dir)
    return [
        f"The first sign of shingles is often burning or tingling pain [{r[0]}].",
        f"The recommended dose is 200 mg on day 1 [{r[1]}]. Then 100 mg once daily [{r[1]}].",
        f"Normal blood pressure is lower than 120/80 mmHg [{r[2]}].",
    ]


def run_eval(
    index_dir: Path, tmp_path: Path, server: ScriptedOpenAIServer, out: Path, *more: str
) -> tuple[str, dict[str, Any]]:
    evalset = write_set(tmp_path / "faithful.jsonl", ITEMS)
    result = invoke(
        "eval", str(evalset), "--index", str(index_dir), "-o", str(out),
        "--llm", "openai", "--model", "m", "--base-url", server.base_url,
        "--mode", "cite", "--strictness", "lenient", *more,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output, json.loads(out.read_text("utf-8"))


def test_eval_reports_each_answers_faithfulness_and_the_mean_per_mode(
    index_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    # the model judges the claims (eval's default): all supported, half, none
    answers = replies(index_dir)
    openai_server.script = [
        answers[0], "C1: SUPPORTED — the passage says so",
        answers[1], "C1: SUPPORTED — as stated\nC2: UNSUPPORTED — the passage gives no time",
        answers[2], "C1: UNSUPPORTED — no value is given",
    ]  # fmt: skip
    out = tmp_path / "run.json"
    output, report = run_eval(index_dir, tmp_path, openai_server, out)

    found = {item["id"]: item["faithfulness"] for item in report["items"]}
    assert found["shingles-sign"] == {
        "score": 1.0, "method": "model", "claims": 1, "supported": 1, "removed": 0
    }  # fmt: skip
    assert found["dose"] == {
        "score": 0.5, "method": "model", "claims": 2, "supported": 1, "removed": 0
    }  # fmt: skip
    assert found["pressure"] == {
        "score": 0.0, "method": "model", "claims": 1, "supported": 0, "removed": 0
    }  # fmt: skip
    # refused before any model call: no claim, no score
    assert found["mars"] is not None and found["mars"]["score"] is None
    for item in report["items"]:  # the brief agrees with the answer it sums up
        assert item["faithfulness"]["score"] == item["answer"]["faithfulness"]["score"]
    assert report["config"]["faithfulness"] == "model"
    assert report["metrics"]["faithfulness"] == {
        "mean": 0.5,
        "scored": 3,
        "by_mode": {"cite": {"answers": 4, "scored": 3, "mean": 0.5}},
    }

    assert "faithfulness (mean)" in output
    assert "faithfulness per mode (model check):" in output
    assert "cite: 50.0% (3 of 4 answers make claims of their own)" in output

    html = out.with_suffix(".html").read_text("utf-8")
    section = html.split('<section id="faithfulness">')[1].split("</section>")[0]
    assert '<th scope="row">cite</th><td class="num">4</td><td class="num">3</td>' in section
    assert '<td class="num">50.0%</td>' in section
    metrics = html.split('<section id="metrics">')[1].split("</section>")[0]
    assert "faithfulness (mean)" in metrics and "50.0%" in metrics
    dose = html.split("<h3>2. dose</h3>")[1].split("</section>")[0]
    assert "<dt>faithfulness</dt><dd>50.0% (1 of 2 claims shown supported, 0 removed; " in dose
    # the figure is a fact of the item, never inside a verbatim box
    for box in html.split("<blockquote")[1:]:
        assert "claims shown supported" not in box.split("</blockquote>")[0]


def test_faithfulness_drift_is_compared_and_an_older_run_still_reads(
    index_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    r = refs(index_dir)
    # checked deterministically: the invented price is removed, counted unsupported
    priced = f"The recommended dose is 200 mg on day 1 [{r[1]}]. It costs $40 [{r[1]}]."
    first = [replies(index_dir)[0], priced]
    openai_server.script = [*first, "No."]
    old = tmp_path / "old.json"
    _, report = run_eval(index_dir, tmp_path, openai_server, old, "--faithfulness", "deterministic")
    dose = {item["id"]: item for item in report["items"]}["dose"]["faithfulness"]
    assert dose == {
        "score": 0.5, "method": "deterministic", "claims": 1, "supported": 1, "removed": 1
    }  # fmt: skip
    assert report["metrics"]["faithfulness"]["mean"] == 0.75
    # the next run's dose answer drops its price: 1.0 instead of 0.5
    openai_server.script = [first[0], priced.split(" It costs")[0], "No."]
    _, report = run_eval(
        index_dir, tmp_path, openai_server, tmp_path / "new.json",
        "--compare", str(old), "--faithfulness", "deterministic",
    )  # fmt: skip
    assert report["metrics"]["faithfulness"]["mean"] == 1.0
    change = next(c for c in report["compare"]["metrics"] if c["key"] == "faithfulness")
    assert (change["old"], change["verdict"], change["delta_text"]) == (0.75, "better", "+25.0 pp")

    # a run saved before faithfulness was reported has none, and says nothing of it
    saved = json.loads(old.read_text("utf-8"))
    del saved["metrics"]["faithfulness"]
    assert flat_metrics(saved["metrics"])["faithfulness"] is None
    assert faithfulness_lines(saved) == []


def test_the_mean_is_over_answers_with_a_score_per_mode() -> None:
    scores = [
        ItemScores(answerable=True, mode="cite", faithfulness=1.0),
        ItemScores(answerable=True, mode="cite", faithfulness=0.0),
        ItemScores(answerable=True, mode="cite", faithfulness=None),
        ItemScores(answerable=True, mode="quote", faithfulness=None),
        ItemScores(answerable=True, mode="rationale", faithfulness=0.25),
        ItemScores(answerable=True, error=True),
    ]
    metrics = summarize(scores, [])
    assert metrics.faithfulness == 1.25 / 3
    assert metrics.faithfulness_by_mode == {
        "cite": ModeFaithfulness(3, 2, 0.5),
        "quote": ModeFaithfulness(1, 0, None),
        "rationale": ModeFaithfulness(1, 1, 0.25),
    }
