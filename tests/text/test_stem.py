"""The crude stemmer that term evidence and the no-model answer match words with."""

from __future__ import annotations

import pytest

from quoteproof.terms import query_terms, stem


@pytest.mark.parametrize(
    "forms",
    [
        ("cause", "causes", "caused", "causing"),
        ("dose", "doses", "dosing"),
        ("box", "boxes"),
        ("class", "classes"),
        ("adult", "adults"),
        ("virus", "viruses"),
    ],
)
def test_the_forms_of_a_word_share_one_stem(forms: tuple[str, ...]) -> None:
    assert len({stem(form) for form in forms}) == 1


def test_short_words_keep_three_letters() -> None:
    assert [stem(w) for w in ("use", "uses", "bed", "sees")] == ["use", "use", "bed", "see"]


def test_the_s_of_a_possessive_is_no_query_term_a_letter_that_names_something_is() -> None:
    assert query_terms("What should a hospital's surveillance provide?") == [
        "hospital", "surveillance", "provide",
    ]  # fmt: skip
    assert query_terms("Do T cells need vitamin D?") == ["t", "cells", "need", "vitamin", "d"]


def test_a_number_word_stems_to_its_digits() -> None:
    assert stem("five") == stem("5") == "5"
    assert stem("twelve") == "12"
    assert stem("one") == "one"  # more often a pronoun than a count
