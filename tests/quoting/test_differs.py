"""Tests of quoting.differs: numbers, units and negations that change meaning."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quoteproof.quoting.differs import describe_difference


@pytest.mark.parametrize(
    ("claimed", "source", "expected"),
    [
        (
            "take 25 mg daily",
            "take 2.5 mg daily",
            "number 25 in the model's words, 2.5 in the source",
        ),
        ("a 0.5 mL dose", "a 5 mL dose", "number 0.5 in the model's words, 5 in the source"),
        ("given for 3 days", "given for days", "number 3 in the model's words, not in the source"),
        ("given for days", "given for 3 days", "number 3 in the source, not in the model's words"),
        ("5 mg", "5 mcg", "unit mg in the model's words, mcg in the source"),
        ("for 2 weeks", "for 2 days", "unit weeks in the model's words, days in the source"),
        ("10 IU", "10 units", "unit IU in the model's words, units in the source"),
        ("120 mmHg", "120 %", "unit mmHg in the model's words, % in the source"),
        ("it was not effective", "it was effective", "negation 'not' missing from the source"),
        ("it doesn't work", "it works", "negation 'not' missing from the source"),
        ("we cannot say", "we can say", "negation 'not' missing from the source"),
        (
            "with food",
            "without food",
            "negation 'without' in the source, missing from the model's words",
        ),
        ("never again", "again", "negation 'never' missing from the source"),
        ("neither a nor b", "a and b", "negation 'neither' missing from the source"),
    ],
)
def test_differences(claimed: str, source: str, expected: str) -> None:
    assert describe_difference(claimed, source) == expected


@pytest.mark.parametrize(
    ("claimed", "source"),
    [
        ("take 2.5 mg daily", "Take 2.5 mg  daily."),
        ("2.50 mg", "2.5 mg"),
        ("1,000 units", "1000 unit"),
        ("2,5 ml", "2.5 mL"),  # decimal comma
        ("5 milligrams", "5 mg"),
        ("0.5 ml", ".5 mL"),
        ("5 µg", "5 mcg"),
        ("5 μg", "5 ug"),
        ("5mg", "5 mg"),
        ("10%", "10 percent"),
        ("for 1 day", "for 1 days"),
        ("does not work", "doesn’t work"),
        ("there is no effect", "there is not an effect"),  # same polarity
        ("among them a girl", "them, a girl"),  # "mg"/"g" inside words are not units
        ("the effect was large", "the effect was very large"),  # wording only
        ("don&#39;t use &lt; 5 mg", "don't use < 5 mg"),  # entities are not numbers
        ("", ""),
    ],
)
def test_agreements(claimed: str, source: str) -> None:
    assert describe_difference(claimed, source) is None


def test_several_differences_are_joined() -> None:
    described = describe_difference("not 5 mg", "50 mcg")
    assert described == (
        "number 5 in the model's words, 50 in the source; "
        "unit mg in the model's words, mcg in the source; "
        "negation 'not' missing from the source"
    )


@settings(max_examples=200)
@given(st.text(max_size=60))
def test_text_agrees_with_itself(text: str) -> None:
    assert describe_difference(text, text) is None


@settings(max_examples=200)
@given(st.text(max_size=60), st.text(max_size=60))
def test_never_raises(claimed: str, source: str) -> None:
    result = describe_difference(claimed, source)
    assert result is None or isinstance(result, str)
