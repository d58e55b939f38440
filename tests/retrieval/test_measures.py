"""A question that asks for a sum of money, a distance or a weight is refused when no
retrieved source states one, however many other numbers the sources hold."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from quoteproof.index import Index
from quoteproof.retrieval.measures import (
    DISTANCE,
    MONEY,
    asked_measures,
    missing_measures,
    states_measure,
)


@pytest.mark.parametrize(
    ("question", "measures"),
    [
        ("How much does one vial of VEKLURY cost?", (MONEY,)),
        ("What is the price of one vial of remdesivir?", (MONEY,)),
        ("How much money did the schools spend on shade structures?", (MONEY,)),
        ("How much were people paid for taking the survey?", (MONEY,)),
        ("How much does a full-time nurse get paid?", (MONEY,)),
        ("How many dollars did the program save per child?", (MONEY,)),
        ("What was the total cost of the campaign?", (MONEY,)),
        ("What is the fine for putting the wrong items in the blue bin?", (MONEY,)),
        ("What is the fine print on the label?", ()),
        ("How many miles of new sidewalk did the city build?", (DISTANCE,)),
        # counts, shares, changes, time and figures of speech ask for no sum
        ("How many people paid a fee?", ()),
        ("What share of patients could not pay for their medication?", ()),
        ("How much time did nurses spend on documentation?", ()),
        ("How much attention do parents pay to sunscreen labels?", ()),
        ("How much effort did teachers spend on the program?", ()),
        ("How much longer did patients spend in hospital?", ()),
        ("How much of their day did children spend on screens?", ()),
        ("How much of the budget went to salaries?", ()),
        ("How much weight did participants who paid for coaching lose?", ()),
        ("How much does the cost of insulin affect adherence?", ()),
        ("How much did health care spending rise between 2019 and 2021?", ()),
        ("How much more do patients with diabetes spend each year?", ()),
        ("What is the main cost driver of the program?", ()),
        ("What is the fee structure of the clinic?", ()),
        ("What were the charges against the defendant?", ()),
        ("What is the cost-effectiveness of the screening program?", ()),
        ("How many square feet is the clinic?", ()),
        ("How many kidney stones did patients pass?", ()),
        ("How far along in pregnancy were the mothers?", ()),
        # a question that asks something more: the sources may answer the rest
        ("What is the remdesivir dose, and what is the price of one vial?", ()),
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
        (MONEY, "| Item | Cost ($) |\n| Vial | 390 |", True),  # the currency in the header
        (MONEY, "Rs. 500 per visit", True),
        (MONEY, "a fee of 40 \u20ac", True),
        (MONEY, "Screening is free for all residents.", True),
        (MONEY, "Visits have no copay.", True),
        (MONEY, "The fixed penalty is 100 pounds, reduced to 60 pounds if paid early.", True),
        (MONEY, "The patient weighs 140 pounds.", False),
        (MONEY, "She weighed about 140 pounds; do not lift more than 10 pounds.", False),
        (MONEY, "He lost 10 pounds. The tyre takes 32 pounds per square inch.", False),
        (MONEY, "Costs rose by 12% in 2021 among 4,000 participants.", False),
        (MONEY, "A smoke-free policy was adopted in 2019.", False),
        (MONEY, "The solution is free of particles; the closure is free from defects.", False),
        (DISTANCE, "The city built 14 miles of sidewalk.", True),
        (DISTANCE, "a 5-km walking route", True),
        (DISTANCE, "the 400 m track", True),
        (DISTANCE, "Sidewalks were built in 12 neighborhoods over 3 years.", False),
    ],
)
def test_what_states_a_measure(measure: str, text: str, states: bool) -> None:
    assert states_measure(measure, text) is states


def test_a_long_run_of_digits_is_read_in_linear_time() -> None:
    # each digit of a 20,000-digit run was the start of a new try: 52 s a question
    text = "1" * 200_000
    assert not states_measure(DISTANCE, text) and not states_measure(MONEY, text)


def test_only_the_measures_no_text_states_are_missing() -> None:
    question = "How much did the city spend on the sidewalk?"
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
