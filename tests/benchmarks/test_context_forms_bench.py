"""benchmarks/context_forms.py: the decision read from an answer, the tokens counted
from its calls, the figures and token ratio it reports, and the PubMedQA sample it
asks."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from figures import Figures
from helpers.answers import make_answer
from helpers.bench_scripts import load_script
from quoteproof.model import Message, ModelCall, ProseSegment, Usage


def call(stage: str, prompt: int) -> ModelCall:
    return ModelCall(stage, (Message("user", "q"),), "out", usage=Usage(prompt, 5))


def test_decision_is_the_first_yes_no_or_maybe_of_the_prose() -> None:
    bench = load_script("context_forms")
    said = make_answer((ProseSegment("Maybe not, but no [a.1]."),), ())
    assert bench.decision(said) == "maybe"
    assert bench.decision(make_answer((ProseSegment("Nobody knows [a.1]."),), ())) is None
    refused = make_answer((ProseSegment("No."),), (), status="refused")
    assert bench.decision(refused) is None


def test_tokens_of_the_answer_call_and_of_every_call_and_the_ratio() -> None:
    bench = load_script("context_forms")
    runs = {form: bench.Run() for form in ("paragraphs", "triplets")}
    prose = (ProseSegment("Yes [TID-1]."),)
    bench.record(
        runs["paragraphs"], make_answer(prose, (), calls=(call("answer", 650),)), 2.0, "yes"
    )
    extracted = make_answer(prose, (), calls=(call("extract", 600), call("answer", 100)))
    bench.record(runs["triplets"], extracted, 1.0, "no")
    figures = Figures("context_forms")
    bench.report(figures, "pubmedqa", runs, majority=0.5)
    by = {f.name: f for f in figures.figures}
    accuracy = by["pubmedqa paragraphs: accuracy (yes/no/maybe)"]
    assert (accuracy.value, accuracy.reference_name, accuracy.ratio) == (
        1.0,
        "majority class (yes)",
        2.0,
    )
    assert by["pubmedqa triplets: accuracy (yes/no/maybe)"].value == 0.0
    answer_call = by["pubmedqa triplets: prompt tokens of the answer call (mean)"]
    assert answer_call.value == 100 and answer_call.ratio == 100 / 650
    assert by["pubmedqa triplets: prompt tokens, all calls (mean)"].value == 700
    ratio = by["pubmedqa: paragraphs / triplets, prompt tokens of the answer call"]
    assert ratio.value == 6.5 and ratio.ratio == pytest.approx(6.5 / (1846 / 285))
    assert figures.notes == [
        "pubmedqa: paragraphs / triplets prompt tokens of the answer call = 6.5x "
        "(published: 6.5x, 1,846 / 285)"
    ]


def test_a_seeded_sample_of_the_test_questions_in_file_order(tmp_path: Path) -> None:
    bench = load_script("context_forms")
    pmids = [str(n) for n in range(100, 120)]
    items = {p: {"QUESTION": f"q{p}?", "CONTEXTS": [f"c{p}"]} for p in pmids}
    (tmp_path / "ori_pqal.json").write_text(json.dumps(items), "utf-8")
    gold = {p: "yes" if int(p) % 2 else "no" for p in pmids}
    (tmp_path / "test_ground_truth.json").write_text(json.dumps(gold), "utf-8")
    drawn = bench.pubmedqa_items(tmp_path, 5, seed=7)
    assert len(drawn) == 5 and [d[0] for d in drawn] == sorted(d[0] for d in drawn)
    assert drawn == bench.pubmedqa_items(tmp_path, 5, seed=7)
    assert drawn[0][1:] == (f"q{drawn[0][0]}?", [f"c{drawn[0][0]}"], gold[drawn[0][0]])
    assert [d[0] for d in bench.pubmedqa_items(tmp_path, None)] == pmids
    assert len(bench.pubmedqa_items(tmp_path, 50)) == 20
    assert (bench.sample_size("all"), bench.sample_size("20")) == (None, 20)
    with pytest.raises(argparse.ArgumentTypeError):
        bench.sample_size("0")
