"""The crude stemmer that term evidence and the no-model answer match words with."""

from __future__ import annotations

import pytest

from quoteproof.terms import stem


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
