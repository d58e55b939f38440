"""The bounds a text puts on a measured value: a question about values on one side of
a bound is not answered by a passage about the other side."""

from __future__ import annotations

import math

import pytest

from quoteproof.llm.bounds import about_other_values, value_bounds

from .test_extractive import chunk, extract_answer, quoted

INF = math.inf


@pytest.mark.parametrize(
    ("text", "bounds"),
    [
        ("creatinine clearance below 30 mL/min", (("ml/min", -INF, False, 30.0, False),)),
        ("CrCl < 30 mL/min", (("ml/min", -INF, False, 30.0, False),)),
        ("Apixaban | 30 mL/min or more | 24 hours", (("ml/min", 30.0, True, INF, False),)),
        ("Creatinine clearance: ≥30 mL/min", (("ml/min", 30.0, True, INF, False),)),
        ("CrCl 15-29 mL/min: 48 hours", (("ml/min", 15.0, True, 29.0, True),)),
        ("between 30 and 50 mL/min", (("ml/min", 30.0, True, 50.0, True),)),
        ("patients weighing at least 40 kg", (("kg", 40.0, True, INF, False),)),
        ("up to 2 g", ()),  # grams: no unit of this reading
        ("no more than 4 mg", (("mg", -INF, False, 4.0, True),)),
        ("not less than 50 kg", (("kg", 50.0, True, INF, False),)),
        ("eGFR over 60 mL/min/1.73 m²", (("ml/min/1.73m2", 60.0, False, INF, False),)),
        # no bound: bare amounts, counts, durations, ages
        ("Give 200 mg once daily.", ()),
        ("more than 30 patients", ()),
        ("within 24 hours or more", ()),
        ("children under 6 years", ()),
    ],
)
def test_bounds_are_read_with_a_comparison_and_a_unit(
    text: str, bounds: tuple[tuple[str, float, bool, float, bool], ...]
) -> None:
    assert value_bounds(text) == bounds


def test_a_passage_about_values_on_the_other_side_of_a_bound_is_about_other_values() -> None:
    below = value_bounds("When is apixaban stopped if creatinine clearance is below 30 mL/min?")
    assert about_other_values(below, "Apixaban | 30 mL/min or more | 24 hours")
    assert about_other_values(below, "Creatinine clearance ≥ 30 mL/min")
    assert not about_other_values(below, "If creatinine clearance is below 30 mL/min, reduce it")
    assert not about_other_values(below, "CrCl 15-29 mL/min: 48 hours")
    assert not about_other_values(below, "CrCl 15-30 mL/min: 48 hours")  # 15 to 30 holds 29
    assert not about_other_values(below, "Apixaban: stop 48 hours before.")  # bounds nothing
    assert not about_other_values(below, "Adults over 40 kg: 24 hours")  # another unit
    at_least = value_bounds("What is the dose for creatinine clearance of at least 30 mL/min?")
    assert not about_other_values(at_least, "Apixaban | 30 mL/min or more | 24 hours")
    assert about_other_values(at_least, "CrCl below 30 mL/min: 48 hours")
    assert not about_other_values((), "CrCl below 30 mL/min: 48 hours")


def test_the_row_for_the_other_side_of_a_bound_is_no_answer() -> None:
    """A newcomer's look-alike: the protocol gives apixaban's stop time only for a
    clearance of 30 mL/min or more, and the question asks below 30."""
    stop = "Apixaban is stopped 24 hours before if creatinine clearance is 30 mL/min or more."
    reduced = "If creatinine clearance is below 30 mL/min, the enoxaparin dose is reduced."
    sources = (chunk("t", stop), chunk("r", reduced))
    below = "How many hours before should apixaban be stopped when clearance is below 30 mL/min?"
    assert quoted(extract_answer(below, sources)) == [("r", reduced)]
    above = "How many hours before should apixaban be stopped when clearance is 30 mL/min or more?"
    assert quoted(extract_answer(above, sources))[0] == ("t", stop)
