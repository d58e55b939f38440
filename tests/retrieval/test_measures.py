"""A question that asks for a sum of money, a distance or a weight is refused when no
retrieved source states one, however many other numbers the sources hold."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from quoteproof.index import Index
from quoteproof.retrieval.measures import asked_measures, missing_measures, states_measure

MONEY = "an amount of money"


@pytest.mark.parametrize(
    ("question", "measures"),
    [
        ("How much does one vial of VEKLURY cost?", (MONEY,)),
        ("What is the price of one vial of remdesivir?", (MONEY,)),
        ("How much money did the schools spend on shade structures?", (MONEY,)),
        ("How much were people paid for taking the survey?", (MONEY,)),
        ("How many dollars did the program save per child?", (MONEY,)),
        ("What was the total cost of the campaign?", (MONEY,)),
        ("How many miles of new sidewalk did the city build?", ("a distance",)),
        ("How many more kilometers did they walk?", ("a distance",)),
        ("How many pounds did participants lose?", ("a weight",)),
        # counts, shares and figures of speech ask for no measure
        ("How many people paid a fee?", ()),
        ("What share of patients could not pay for their medication?", ()),
        ("How much weight did participants lose?", ()),
        ("How far along in pregnancy were the mothers?", ()),
        ("Why did cost deter patients from screening?", ()),
        ("How much did prevalence fall?", ()),
        ("How much time did nurses spend on documentation?", ()),
        ("How much did health care spending rise between 2019 and 2021?", ()),
        ("How much more do patients with diabetes spend each year?", ()),
        ("What is the cost-effectiveness of the screening program?", ()),
    ],
)
def test_the_measures_a_question_asks_for(question: str, measures: tuple[str, ...]) -> None:
    assert asked_measures(question) == measures


@pytest.mark.parametrize(
    ("measure", "text", "states"),
    [
        (MONEY, "Each vial costs $390.", True),
        (MONEY, "a saving of US$ 1,200 per child", True),
        (MONEY, "about 2.5 million dollars in all", True),
        (MONEY, "Screening is offered free of charge.", True),
        (MONEY, "Visits are provided at no cost to families.", True),
        (MONEY, "Costs rose by 12% in 2021 among 4,000 participants.", False),
        (MONEY, "A smoke-free policy was adopted in 2019.", False),
        ("a distance", "The city built 14 miles of sidewalk.", True),
        ("a distance", "a 5-km walking route", True),
        ("a distance", "Sidewalks were built in 12 neighborhoods over 3 years.", False),
        ("a weight", "Participants lost 7.5 lb on average.", True),
        ("a weight", "Participants lost 5% of their body weight.", False),
    ],
)
def test_what_states_a_measure(measure: str, text: str, states: bool) -> None:
    assert states_measure(measure, text) is states


def test_only_the_measures_no_text_states_are_missing() -> None:
    question = "How much did the city spend on the 14 miles of sidewalk?"
    assert missing_measures(question, ["14 miles were built in 2022."]) == (MONEY,)
    assert missing_measures(question, ["It cost", "$2.1 million in all."]) == ()


FEES = (
    "# Wellness program report\n\n## Enrollment\n\n"
    "A total of 203 participants enrolled between February and November 2022, and 71% "
    "completed the follow-up assessments at 12 weeks. Sessions ran twice a week for "
    "16 weeks, with 8 coaches serving 25 participants each.\n"
)


def test_an_index_full_of_other_numbers_refuses_a_question_about_money(tmp_path: Path) -> None:
    # "How much does a participant pay to join?" was answered with the enrollment
    # count: the sources hold numbers, none of them money
    source = tmp_path / "report.md"
    source.write_text(FEES)
    with Index.open(tmp_path / "index", create=True) as index, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BM25 alone: no threshold
        index.ingest([source], embed=False)
        refused = index.ask("How much does a participant pay to join the wellness program?")
        assert (refused.status, refused.refusal_reason) == ("refused", "not_in_sources")
        assert refused.retrieval.missing_terms == (MONEY,)
        assert f"No retrieved source mentions '{MONEY}'." in refused.notices
        source.write_text(FEES + "\nThe program charges each participant $40 to join.\n")
        index.ingest([source], embed=False)
        answered = index.ask("How much does a participant pay to join the wellness program?")
        assert answered.status == "answered"
        assert any("$40" in quote.text for quote in answered.quotes)
