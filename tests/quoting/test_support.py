"""Tests of quoting.support (does a generated sentence say only what its passages
say?) and of `citations.screen_prose`, which removes the sentences that do not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quoteproof.model import DataResult, Filter, ProseSegment, QuoteSegment, Rejected
from quoteproof.quoting.citations import UNCITED, screen_prose
from quoteproof.quoting.support import data_passage, support_of, support_problem, unsupported

LABEL = (
    "The recommended dosage of VEKLURY is a single loading dose of 200 mg on Day 1 "
    "followed by once-daily maintenance doses of 100 mg from Day 2, infused over 30 to "
    "120 minutes. Each vial contains 100 mg of remdesivir in 20 mL (5 mg/mL). "
    "VEKLURY was approved on October 22, 2020. Do not use in patients with known "
    "hypersensitivity. Store below 30 °C. A 1,000 mL bag costs $12.50."
)


def missing(sentence: str, passage: str = LABEL) -> list[str]:
    return [claim.shown for claim in unsupported(sentence, support_of([passage]))]


@pytest.mark.parametrize(
    "sentence",
    [
        "A vial holds 100 mg in 20 ml.",  # unit case
        "A vial holds 100 milligrams in 20 mL.",  # unit spelled out
        "The concentration is 5 mg/mL.",
        "Give 200mg on day 1.",  # no blank between number and unit
        "Infuse over 30–120 minutes.",  # a range in other words
        "Infuse over 30 minutes or more.",  # the unit of a range's first number
        "A 1000 mL bag costs $12.50.",  # thousands separator dropped
        "The bag holds 1,000.0 mL.",
        "It costs 12,50 USD.",  # decimal comma, currency written after
        "VEKLURY was approved on 22 October 2020.",
        "It was approved on 2020-10-22.",
        "It was approved on 10/22/2020.",
        "It was approved in Oct. 2020.",
        "It was approved in October.",
        "Veklury is remdesivir.",  # names in any case
        "Remdesivir is contraindicated in hypersensitivity.",
        "It is not for patients with known hypersensitivity.",
        "However, the first dose is 200 mg.",  # a general first word is no name
        "Note: The second dose is 100 mg.",  # a capital after ':' opens a clause
    ],
)
def test_sentences_the_passage_supports(sentence: str) -> None:
    assert missing(sentence) == []


@pytest.mark.parametrize(
    ("sentence", "claims"),
    [
        ("One vial costs $25.25 USD at Amazon.", ["$25.25", "Amazon"]),
        ("Give 200 mcg on day 1.", ["200 mcg"]),  # same number, other unit
        ("A vial holds 2,5 mL.", ["2,5 mL"]),
        ("A vial holds 10,000 mg.", ["10,000 mg"]),
        ("Infuse over 45 minutes.", ["45 minutes"]),
        ("The bag costs €12.50.", ["€12.50"]),  # other currency
        ("VEKLURY was approved on 22 October 2021.", ["22 October 2021"]),
        ("It was approved on 2020-11-22.", ["2020-11-22"]),
        ("Gilead makes it.", ["Gilead"]),  # a first word that is no English word
        ("The EMA approved it.", ["EMA"]),
        ("It is like acyclovir.", ["acyclovir"]),  # a drug name by its stem
        ("It inhibits CYP3A4.", ["CYP3A4"]),  # a code
        ("It treats COVID-19 in the EU.", ["COVID", "EU"]),
    ],
)
def test_claims_the_passage_lacks(sentence: str, claims: list[str]) -> None:
    assert missing(sentence) == claims


def test_a_negated_sentence_needs_passages_that_negate() -> None:
    positive = "Remdesivir is given once daily."
    assert missing("Remdesivir is never given twice.", positive) == ["never"]
    assert missing("It isn't given twice daily.", positive) == ["not"]  # "n't" shown as "not"
    assert missing("It is given without food.", positive) == ["without"]
    # any negation in the passages lets it pass: what the rule does not catch
    assert missing("It isn't given twice daily.", positive + " Do not freeze.") == []
    assert missing("It is not given to children.", "It is contraindicated in children.") == []


def test_the_reason_names_the_claims_and_the_refs() -> None:
    reason = support_problem("One vial costs $25.25 at Amazon.", ["9cxdzv.4"], [LABEL])
    assert reason == '"$25.25", "Amazon" are not in [9cxdzv.4]'
    assert support_problem("It costs $40.", ["a.1", "b.2"], [LABEL]) == (
        '"$40" is not in [a.1][b.2]'
    )
    negated = support_problem("It never helps.", ["a.1"], ["It helps."])
    assert negated == 'it says "never", but [a.1] negates nothing'
    assert support_problem("Give 200 mg on Day 1.", ["a.1"], [LABEL]) is None


def test_a_claim_may_be_in_any_cited_passage() -> None:
    assert support_problem("Give 200 mg, then 5 mL.", ["a.1", "b.2"], ["200 mg", "5 ml"]) is None
    assert support_problem("Give 200 mg, then 5 mL.", ["a.1"], ["200 mg"]) is not None


# --- a sentence copied from its source always passes -------------------------------

TRICKY = [
    "2,5", "1,000", "1,000.5", "$25.25", "US$", "USD", "€3", "12.50", ".5", "5%",
    "mg", "mL", "ml", "mg/mL", "200mg", "5-10", "to", "or", "and", "/", "120/80",
    "mmHg", "days", "Day", "1", "22", "2020", "22nd", "October", "Oct.", "May",
    "2020-10-22", "10/22/2020", "of", "not", "no", "never", "n't", "isn't",
    "without", "Veklury", "VEKLURY", "FDA", "ADRs", "COVID-19", "B12", "CYP3A4",
    "acyclovir", "The", "However,", "Note:", "(see", "5.1)", "—", "“Quoted”",
    "fluid-filled", "µg", "°C", "&amp;", "ﬁve", "１２",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.one_of(st.sampled_from(TRICKY), st.text(min_size=1, max_size=8)), min_size=1),
    data=st.data(),
)
def test_a_stretch_of_a_passage_between_blanks_is_supported(
    words: list[str], data: st.DataObject
) -> None:
    tokens = [w for word in words for w in word.split()]
    if not tokens:
        return
    start = data.draw(st.integers(0, len(tokens) - 1))
    end = data.draw(st.integers(start + 1, len(tokens)))
    passage = " ".join(tokens)
    sentence = " ".join(tokens[start:end])
    assert unsupported(sentence, support_of([passage])) == []


def test_sentences_copied_from_a_label_pass_their_own_source() -> None:
    for sentence in LABEL.split(". "):
        assert missing(sentence) == [], sentence


# --- screening an answer's prose -----------------------------------------------------


def test_screen_removes_uncited_and_unsupported_sentences_and_repeats() -> None:
    segments = [
        ProseSegment("The loading dose is 200 mg [a.1].", ("a.1",)),
        QuoteSegment("q1"),
        ProseSegment("Most patients recover fully."),
        ProseSegment("One vial costs $25.25.", ("a.1",)),
        ProseSegment("The loading dose is 200 mg [a.1].", ("a.1",)),
        ProseSegment("Most patients recover fully."),
        ProseSegment("It cites an unknown source.", ("zz.9",)),
    ]
    shown, removed = screen_prose(segments, {"a.1": LABEL})
    assert shown == [segments[0], segments[1]]
    assert removed == [
        Rejected("Most patients recover fully.", UNCITED),
        Rejected("One vial costs $25.25.", '"$25.25" is not in [a.1]'),
        Rejected("It cites an unknown source.", UNCITED),
    ]


def test_data_results_support_every_sentence_and_may_be_cited() -> None:
    count = DataResult(
        "r2", "events.csv", "d1", 1, "h", "/t/events.csv",
        (Filter("date", ">=", "2024-01-01"),), (), 2, operation="count", value=2,
    )  # fmt: skip
    data = {"r2": data_passage(count)}
    segments = [
        ProseSegment("2 events were reported in 2024.", ("r2",)),
        ProseSegment("The 2 events came after a 200 mg dose.", ("a.1",)),
        ProseSegment("7 events were reported.", ("r2",)),
    ]
    shown, removed = screen_prose(segments, {"a.1": LABEL}, data)
    assert shown == segments[:2]
    assert removed == [Rejected("7 events were reported.", '"7" is not in [r2]')]
