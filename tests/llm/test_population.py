"""Who a passage is about: the populations a text names, and a question's."""

from __future__ import annotations

import pytest

from quoteproof.llm.population import about_another_population, populations


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("The dose for children under 12", {"children"}),
        ("8.4 Paediatric Use", {"children"}),
        ("in neonates and infants", {"children"}),
        ("Recommended dosage in adults and pediatric patients", {"adults", "children"}),
        ("No adjustment is needed in elderly patients", {"older adults"}),
        ("in older adults", {"older adults", "adults"}),
        ("Use during pregnancy and lactation", {"pregnancy"}),
        ("Patients with renal impairment", set()),
        ("the childish handwriting of the kidney report", set()),  # whole words only
    ],
)
def test_populations_named(text: str, named: set[str]) -> None:
    assert populations(text) == named


def test_another_population_only_when_both_name_one_and_they_differ() -> None:
    children = populations("What is the dose for children?")
    assert about_another_population(children, "The dose in adults is 400 mg.")
    assert not about_another_population(children, "In adults and children the dose is 4 mg/kg.")
    assert not about_another_population(children, "The dose is 400 mg.")  # names none
    assert not about_another_population(frozenset(), "The dose in adults is 400 mg.")
