"""benchmarks/pubmedqa.py: the faithful column (the answers' faithfulness scores), and
a whole run on a tiny PubMedQA folder with a scripted model (a real HTTP server on
127.0.0.1) answering and grading: the published layout, every setting and mode,
grades read, models named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.answers import make_answer
from helpers.bench_scripts import BENCH_DIR, REPO, load_script
from helpers.llm_servers import ScriptedOpenAIServer
from quoteproof.evaluation.grading import Grade, parse_grade
from quoteproof.model import Faithfulness, ProseSegment

REPLY = "JUSTIFICATION: yes, as the abstract says.\nGRADE: 3\nVERDICT: CORRECT"


def test_faithful_is_the_answers_faithfulness_score() -> None:
    bench = load_script("pubmedqa")
    prose = (ProseSegment("Yes [a.1]."),)
    half = Faithfulness("deterministic", 0.5, removed=1)
    assert bench.faithful(make_answer(prose, (), faithfulness=half)) == 0.5
    assert bench.faithful(make_answer(prose, ())) is None  # no faithfulness assessed
    refused = make_answer((), (), status="refused", faithfulness=half)
    assert bench.faithful(refused) is None
    row = bench.Row(faithfulness=[1.0, 0.5])
    assert bench.mean_faithfulness(row) == 0.75
    assert bench.mean_faithfulness(bench.Row()) is None


def test_a_grade_that_is_none_is_listed_with_the_graders_reply() -> None:
    bench = load_script("pubmedqa")
    malformed = parse_grade("JUSTIFICATION: fine\nGRADE: 9\nVERDICT: CORRECT", "g")
    [line] = bench.grade_problem(malformed, "question 1 (101), own cite")
    assert line == (
        "malformed grade, question 1 (101), own cite: grade 9 is outside 1 to 5; reply "
        "(45 characters): 'JUSTIFICATION: fine\\nGRADE: 9\\nVERDICT: CORRECT'"
    )
    assert bench.grade_problem(parse_grade(REPLY), "x") == []
    row = bench.Row(grades=[malformed, Grade("error", problem="down"), parse_grade(REPLY)])
    assert (row.malformed, row.failed, row.graded) == (1, 1, [3])


def pubmedqa_folder(folder: Path) -> Path:
    topics = {"101": "aspirin", "102": "statins", "103": "exercise", "104": "coffee"}
    items = {
        pmid: {
            "QUESTION": f"Does {topic} lower the risk of stroke?",
            "CONTEXTS": [f"We studied {topic} in 400 adults.", f"{topic} lowered the risk."],
            "LONG_ANSWER": f"{topic} lowered the risk of stroke.",
        }
        for pmid, topic in topics.items()
    }
    (folder / "ori_pqal.json").write_text(json.dumps(items), "utf-8")
    gold = {"101": "yes", "102": "no"}
    (folder / "test_ground_truth.json").write_text(json.dumps(gold), "utf-8")
    return folder


def test_a_run_in_the_published_layout(tmp_path: Path, openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script = [REPLY]
    figures = tmp_path / "figures.json"
    folder = pubmedqa_folder(tmp_path)
    command = [
        sys.executable, str(BENCH_DIR / "pubmedqa.py"), "--pubmedqa", str(folder),
        "--sample", "all", "--llm", "openai", "--model", "answerer",
        "--base-url", openai_server.base_url, "--json", str(figures),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["setting", "mode", "answered", "faithful", "grade", "accuracy",
                                "graded", "malformed", "failed", "answer_s", "grade_s"]  # fmt: skip
    rows = [line.split() for line in lines[1:9]]
    assert [row[:2] for row in rows] == [
        [setting, mode] for setting in ("own", "all") for mode in ("none", "quote", "cite",
                                                                   "rationale")
    ]  # fmt: skip
    # the question alone: the reply's "yes" is the decision, right for 1 of the 2
    assert rows[0][2:9] == ["2/2", "—", "3.00", "50.0%", "2", "0", "0"]
    assert all(row[4] == "3.00" and row[6:9] == ["2", "0", "0"] for row in rows)
    assert all(float(row[9]) >= 0 and float(row[10]) >= 0 for row in rows)
    assert any(line.startswith("seconds per question, all rows answered and graded: ")
               and "projected for all 500: " in line for line in lines)  # fmt: skip
    assert "answering model: answerer (openai); grading model: answerer (openai)" in lines
    assert any(line.startswith("published (PubMedQA): RAG+FE faithful 86.5%") for line in lines)
    written = json.loads(figures.read_text("utf-8"))
    names = {figure["name"] for figure in written["figures"]}
    assert "all cite: accuracy (yes/no/maybe)" in names
    graders = [r for r in openai_server.requests if "strict teacher" in json.dumps(r)]
    assert len(graders) == 2 * (1 + 2 * 3)  # per question: the question alone, 2 x 3 modes
