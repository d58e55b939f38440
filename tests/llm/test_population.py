"""Who a passage is about: the populations a text names, and a question's."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from quoteproof import Index
from quoteproof.llm.population import about_another_population, missing_populations, populations


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("The dose for children under 12", {"children"}),
        ("8.4 Paediatric Use", {"children"}),
        ("in neonates and infants", {"children"}),
        ("Recommended dosage in adults and pediatric patients", {"adults", "children"}),
        ("No adjustment is needed in elderly patients", {"older adults"}),
        ("in older adults", {"older adults", "adults"}),
        ("Use during pregnancy and lactation", {"pregnancy", "breastfeeding"}),
        ("Is it safe while breastfeeding?", {"breastfeeding"}),
        ("Full-time staff are entitled to 28 days of annual leave", {"full-time"}),
        ("Staff who work part time receive leave pro rata", {"part-time"}),
        ("all staff, full-time or part-time", {"full-time", "part-time"}),
        ("Part-timers and full\u2011time staff", {"full-time", "part-time"}),
        ("a ratio of 1 full-time equivalent (FTE) per 250 beds", set()),
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
    # patients and working patterns are compared each with their own kind
    assert not about_another_population(children, "A full-time nurse gives the dose.")
    part_time = populations("How much leave do part-time staff get?")
    assert about_another_population(part_time, "Full-time staff get 28 days.")
    assert not about_another_population(part_time, "Adults get 28 days.")
    assert missing_populations("What is the dose for children?", ["Full-time staff."]) == ()


def test_missing_populations_in_the_question_s_own_words() -> None:
    adult_label = ["The recommended dosage in adults is 400 mg.", "Store refrigerated."]
    assert missing_populations("What is the dose for pediatric patients?", adult_label) == (
        "pediatric",
    )
    assert missing_populations("What is the dose in adults?", adult_label) == ()
    assert missing_populations("What is the dose for children?", ["Store it cold."]) == ()
    assert missing_populations("What is the dose?", adult_label) == ()
    pregnancy = ["Use during pregnancy only if the benefit justifies the risk."]
    assert missing_populations("Is it safe while breastfeeding?", pregnancy) == ("breastfeeding",)


@pytest.mark.parametrize(
    ("document", "other", "same", "term", "answer"),
    [
        (
            "# ZENTRIX (valorimab) injection\n\n## Recommended Dosage\n\n"
            "The recommended dosage of ZENTRIX in adults is 400 mg every 4 weeks.\n\n"
            "## Dosage Modifications\n\nWithhold ZENTRIX for Grade 3 infusion reactions.\n",
            "What is the dose of valorimab for children?",
            "What is the dose of valorimab for adults?",
            "children",
            "400 mg",
        ),
        (  # "... part-time staff" was answered with the full-time sentence, no notice
            "# Staff handbook\n\n## Annual leave\n\n"
            "Full-time staff are entitled to 28 days of annual leave, including bank "
            "holidays. Leave must be booked at least two weeks ahead through the rota.\n",
            "How much annual leave do part-time staff get?",
            "How much annual leave do full-time staff get?",
            "part-time",
            "28 days",
        ),
    ],
    ids=["adult-dose", "full-time-leave"],
)
def test_an_index_that_speaks_of_one_population_refuses_a_question_about_another(
    tmp_path: Path, document: str, other: str, same: str, term: str, answer: str
) -> None:
    source = tmp_path / "source.md"
    source.write_text(document)
    with Index.open(tmp_path / "index", create=True) as index, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BM25 alone: no threshold
        index.ingest([source], embed=False)
        refused = index.ask(other)
        assert (refused.status, refused.refusal_reason) == ("refused", "not_in_sources")
        assert f"No retrieved source mentions '{term}'." in refused.notices
        answered = index.ask(same)
        assert answered.status == "answered" and answer in answered.quotes[0].text
