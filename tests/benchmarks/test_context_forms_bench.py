"""benchmarks/context_forms.py: the decision read from an answer, the tokens counted
from its calls, and the figures and token ratio it reports."""

from __future__ import annotations

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
    bench.report(figures, "pubmedqa", runs)
    by = {f.name: f for f in figures.figures}
    assert by["pubmedqa paragraphs: accuracy (yes/no/maybe)"].value == 1.0
    assert by["pubmedqa triplets: accuracy (yes/no/maybe)"].value == 0.0
    answer_call = by["pubmedqa triplets: prompt tokens of the answer call (mean)"]
    assert answer_call.value == 100 and answer_call.ratio == 100 / 650
    assert by["pubmedqa triplets: prompt tokens, all calls (mean)"].value == 700
    assert figures.notes == [
        "pubmedqa: paragraphs / triplets prompt tokens of the answer call = 6.5x "
        "(published: 6.5x, 1,846 / 285)"
    ]
