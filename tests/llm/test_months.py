"""Months of a year: a question about one is not answered by a passage about another."""

from __future__ import annotations

from pathlib import Path

from quoteproof import Index
from quoteproof.llm.extractive import choose_extractive
from quoteproof.llm.months import about_other_months, missing_months, months_named
from quoteproof.model import Chunk


def test_months_are_read_with_their_year_in_the_usual_ways() -> None:
    assert months_named("in December 2015?") == {(2015, 12)}
    assert months_named("by September 21, 2020; Dec. 3, 2015") == {(2020, 9), (2015, 12)}
    assert months_named("posted 05/28/2019, period 2015-11") == {(2019, 5), (2015, 11)}
    assert months_named("In 2015 we may 12 times") == set()  # a year alone, "may" no month


def test_a_passage_about_another_month_is_no_answer() -> None:
    asked = months_named("How many checks were there in Texas in December 2015?")
    assert about_other_months(asked, "NICS firearm checks, November 2015. Texas 21,550")
    assert not about_other_months(asked, "Texas 21,550 56,941")  # names no month: not judged
    assert not about_other_months(asked, "from January 2015 to June 2016")  # spans it
    assert not about_other_months(set(), "November 2015")  # the question names none


def test_a_month_no_source_spans_is_named_as_missing() -> None:
    question = "How many checks were there in Texas in December 2015?"
    texts = ["NICS checks, November 2015", "Comments due by September 21, 2020."]
    assert missing_months(question, texts) == ("December 2015",)
    assert missing_months(question, [*texts, "Totals for Dec 2015"]) == ()
    assert missing_months("How many checks were there in Texas?", texts) == ()


def test_the_no_model_answer_does_not_quote_another_month_s_row() -> None:
    # a newcomer's monthly NICS report (November 2015) answered "... in December
    # 2015?" with its Texas row
    text = "Firearm checks: November 2015\n\nTexas had 146,982 checks in all."
    report = Chunk("n", "n", 1, 1, 0, len(text), text, (), "NICS November 2015", "/n.pdf")
    asked = "How many checks were there in Texas in {}?"
    assert "Texas had" in choose_extractive(asked.format("November 2015"), [report]).reply
    assert choose_extractive(asked.format("December 2015"), [report]).reply == "<no-answer/>"


def test_a_question_about_a_month_no_source_spans_is_refused(tmp_path: Path) -> None:
    report = tmp_path / "checks.txt"
    report.write_text("Firearm checks: November 2015\n\nTexas had 146,982 checks in all.\n")
    with Index.open(tmp_path / "index", create=True) as index:
        index.ingest([report], embed=False)
        answer = index.ask("How many checks were there in Texas in December 2015?")
        assert (answer.status, answer.refusal_reason) == ("refused", "not_in_sources")
        assert "No retrieved source mentions 'December 2015'." in answer.notices
        assert index.ask("How many checks were there in Texas in November 2015?").quotes


def test_a_month_written_otherwise_or_as_a_word_prefix_is_read_rightly() -> None:
    # a review: these refused questions their sources answer, or read months in words
    assert missing_months("in December 2015?", ["In December of 2015, Texas had 12"]) == ()
    quarter = "Revenue for the quarter Apr 1 - Jun 30, 2019 rose; in April it fell."
    assert missing_months("What was revenue in April 2019?", [quarter]) == ()
    assert not about_other_months(months_named("in April 2019?"), quarter)
    assert months_named("Who won the Marathon 2019? The Mayor 2020, Law 5/2020") == set()
    assert months_named("The 2011-12 budget") == set()  # a fiscal year, not December
