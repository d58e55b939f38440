"""The ages a text speaks of: a question about one age is not answered by a passage
about another."""

from __future__ import annotations

import math

import pytest

from quoteproof.llm.ages import about_other_ages, age_ranges

INF = math.inf


@pytest.mark.parametrize(
    ("text", "ranges"),
    [
        ("What is the dose for children under 6 years?", ((0.0, 6.0),)),
        ("How much suspension can I give my 3 year old?", ((3.0, 4.0),)),
        ("Children aged 6 to 8 years: 5 ml every 4 to 6 hours.", ((6.0, 9.0),)),
        ("Adults and children 12 years and over", ((12.0, INF),)),
        ("pediatric patients 12 years of age and older", ((12.0, INF),)),
        ("Among adults aged 65 or older, 12% had diabetes.", ((65.0, INF),)),
        ("patients aged 18-65", ((18.0, 66.0),)),
        ("infants 6 to 11 months", ((0.5, 1.0),)),
        ("between 2 and 5 years of age", ((2.0, 6.0),)),
        ("not for use under the age of 16", ((0.0, 16.0),)),
        ("children 2 years and under", ((0.0, 3.0),)),
        ("aged 12+", ((12.0, INF),)),
        # no age: durations, intervals, counts, weights, years of a calendar
        ("Do not give more than 4 doses in 24 hours.", ()),
        ("over 5 years of follow-up", ()),
        ("every 4 to 6 hours", ()),
        ("people 2 to 3 times a week", ()),
        ("women less than 2 weeks postpartum", ()),
        ("patients over 40 kg", ()),
        ("between 2019 and 2021", ()),
        ("The 2 to 5 years after diagnosis", ()),
    ],
)
def test_the_ages_a_text_speaks_of(text: str, ranges: tuple[tuple[float, float], ...]) -> None:
    assert age_ranges(text) == ranges


def test_a_passage_about_other_ages_only_is_about_another_age() -> None:
    under_six = age_ranges("What is the dose for children under 6?")
    assert about_other_ages(under_six, "Children aged 6 to 8 years: 5 ml every 4 to 6 hours.")
    assert about_other_ages(under_six, "Adults and children aged 16 years and over: 2 tablets.")
    assert not about_other_ages(under_six, "Do not give to children under 6 years.")
    assert not about_other_ages(under_six, "Shake the bottle well.")  # no age: for anyone
    eight_to_ten = age_ranges("What is the dose for children aged 8 to 10?")
    assert not about_other_ages(eight_to_ten, "Children aged 6 to 8 years: 5 ml.")  # 8 in both
    assert not about_other_ages((), "Children aged 6 to 8 years: 5 ml.")  # no age asked
