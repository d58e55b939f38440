"""The measure of benchmarks/answers.py: how much of a human answer the shown quotes
hold, repeated quotes, and quotes that start inside a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.bench_scripts import load_script

answers = load_script("answers")


def test_held_share_counts_the_human_answers_words_found_in_any_shown_text() -> None:
    human = "Administer VEKLURY over 30 to 120 minutes."
    assert answers.held_share(human, [human]) == 1.0
    assert answers.held_share(human, ["Administer VEKLURY", "over 30 to 120 minutes"]) == 1.0
    assert answers.held_share(human, ["Administer VEKLURY over 30 minutes."]) == 5 / 7
    assert answers.held_share(human, []) == 0.0


def test_the_best_of_equivalent_human_answers_counts() -> None:
    item = {"gold_answer": "Dose is 200 mg.", "gold_quotes": ["Dose is 200 mg.", "Give 200 mg."]}
    assert answers.best_share(item, ["Give 200 mg on day 1."]) == 1.0
    assert answers.best_share({"gold_quotes": []}, ["anything"]) == 0.0


def test_repeats_are_the_same_text_one_inside_another_or_one_word_changed() -> None:
    sentence = "The early signs of shingles develop in three stages."
    changed = sentence.replace("three", "four")
    other = "Shingles is caused by the varicella zoster virus in adults."
    assert answers.repeated_quotes([sentence, other]) == 0
    assert answers.repeated_quotes([sentence, sentence]) == 1
    assert answers.repeated_quotes([sentence + " More text here.", sentence]) == 1
    assert answers.repeated_quotes([sentence, changed, other]) == 1


def test_a_quote_starts_inside_a_word_only_between_two_letters_or_digits() -> None:
    text = "Antivirals and Other Treatments"
    assert answers.starts_inside_word(text, 3)
    assert not answers.starts_inside_word(text, 0)
    assert not answers.starts_inside_word(text, text.index("and"))


def test_the_articles_corpus_holds_every_article_its_set_names() -> None:
    items = answers.load_set("articles").items
    refs = {ref for item in items for ref in item.get("gold_refs", [])}
    assert refs == {Path(path).name for path in answers.ARTICLES.paths}
    assert answers.ARTICLES.calibration is not None and answers.ARTICLES.calibration.is_file()


@pytest.mark.parametrize(
    "name", ["articles-held", "articles-held2", "articles-held3", "articles-held4"]
)
def test_the_held_articles_corpus_holds_every_article_its_set_names(name: str) -> None:
    corpus, _ = answers.SETS[name]
    assert corpus.name == name
    items = answers.load_set(name).items
    refs = {ref for item in items for ref in item.get("gold_refs", [])}
    assert refs == {Path(path).name for path in corpus.paths}
    assert corpus.calibration is not None and corpus.calibration.is_file()
    assert corpus.calibration.name == f"{name}-calibration.jsonl"


def test_the_held_articles_corpora_share_no_article() -> None:
    first = {Path(path).name for path in answers.ARTICLES_HELD_CORPUS.paths}
    second = {Path(path).name for path in answers.ARTICLES_HELD2_CORPUS.paths}
    third = {Path(path).name for path in answers.ARTICLES_HELD3_CORPUS.paths}
    fourth = {Path(path).name for path in answers.ARTICLES_HELD4_CORPUS.paths}
    assert len(second) == 16 and not first & second
    assert not second & {Path(path).name for path in answers.ARTICLES.paths}
    assert len(third) == 16 and not third & (first | second)
    assert not third & {Path(path).name for path in answers.ARTICLES.paths}
    assert len(fourth) == 16 and not fourth & (first | second | third)
    assert not fourth & {Path(path).name for path in answers.ARTICLES.paths}
