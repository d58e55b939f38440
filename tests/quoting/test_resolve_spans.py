"""The resolver on quotes over chunk boundaries and on partial quotes: what is shown is
always one stored slice, and what the source lacks is rejected with its reason."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.lookups import Lookup, make_chunks, overlapping_windows
from quoteproof.model import Quote, Rejected, sha256_text
from quoteproof.quoting.parse import parse_output
from quoteproof.quoting.partial import MIN_PARTIAL_WORDS
from quoteproof.quoting.resolve import resolve_output

# A label whose paragraphs are cut by page furniture, one chunk per paragraph.
BREAK = "\n\nReference ID: 4690158 — Page 9 of 30\n\n"
LABEL = [
    "Hypersensitivity reactions have been observed during and following administration "
    "of the drug. Signs may include hypotension, tachycardia and rash.",
    "Slow the infusion rate if such signs occur. Discontinue at once if anaphylaxis "
    "occurs and start appropriate treatment.",
    "Monitor liver tests in all patients before starting the drug. Stop the drug if "
    "the transaminases rise above ten times the upper limit of normal.",
]
LABEL_TEXT = BREAK.join(LABEL)
REST = "not found in the source next to the part shown (rest of quote q1)"
INVENTED = "Aspirin cures every illness known to medicine when taken twice daily."


def label_lookup() -> Lookup:
    return Lookup(make_chunks(paragraphs=LABEL, separator=BREAK), LABEL_TEXT)


def resolve(
    reply: str, retrieved: list[int], lookup: Lookup | None = None
) -> tuple[list[Quote], list[Rejected]]:
    """Resolve `reply` against the chunks at `retrieved`; every quote is checked to be
    the stored slice."""
    lookup = lookup or label_lookup()
    sources = [lookup.chunks[i] for i in retrieved]
    result = resolve_output(parse_output(reply), sources, lookup)
    for quote in result.quotes:
        assert quote.text == lookup.doc.text[quote.start : quote.end]
    return list(result.quotes), list(result.rejected)


def test_a_quote_over_page_furniture_is_one_stored_span() -> None:
    words = "Signs may include hypotension, tachycardia and rash. Slow the infusion rate"
    (quote,), rejected = resolve(f'<quote ref="doc.2">{words}</quote>', [1])
    assert rejected == [] and quote.match == "normalized"
    assert (
        quote.text
        == f"Signs may include hypotension, tachycardia and rash.{BREAK}Slow the infusion rate"
    )
    assert quote.ref == "doc.1"  # the chunk where the span starts
    assert quote.differs is None  # the furniture's numbers are not the claim's


def test_normalised_words_over_a_boundary() -> None:
    words = "signs MAY include   hypotension, tachycardia and rash.\nslow the infusion"
    (quote,), _ = resolve(f'<quote ref="doc.1">{words}</quote>', [0])
    assert quote.match == "normalized" and quote.text.endswith("Slow the infusion")


def test_fuzzy_words_over_a_boundary_keep_the_differs_flags() -> None:
    words = (
        "Signs may include hypotension, tachycardia and rash. Slow the infusoin rate if "
        "such sings occur. Discontinue at once if anaphylaxis occurs"
    )
    (quote,), _ = resolve(f'<quote ref="doc.1">{words}</quote>', [0])
    assert quote.match == "fuzzy" and 90 <= quote.score < 100
    assert "infusion" in quote.text and "infusoin" not in quote.text
    assert quote.differs is None
    changed = words.replace("at once", "not at once")
    (flagged,), _ = resolve(f'<quote ref="doc.1">{changed}</quote>', [0])
    assert flagged.differs is not None and "not" in flagged.differs


def test_overlapping_windows_resolve_exactly_over_their_edge() -> None:
    text = " ".join(LABEL)
    first, second = overlapping_windows(text, "Discontinue at once", "Slow the infusion")
    words = text[text.index("Signs") : text.index("Monitor liver tests") + len("Monitor liver")]
    (quote,), _ = resolve(f'<quote ref="doc.1">{words}</quote>', [0], Lookup([first, second], text))
    assert quote.match == "exact" and quote.text == words


def test_the_cited_chunk_joins_its_previous_neighbour() -> None:
    words = (
        "Discontinue at once if anaphylaxis occurs and start appropriate treatment. "
        "Monitor liver tests in all patients"
    )
    (quote,), _ = resolve(f'<quote ref="doc.3">{words}</quote>', [2])
    assert quote.ref == "doc.2" and quote.text.startswith("Discontinue") and BREAK in quote.text


def test_words_from_non_adjacent_chunks_are_not_merged() -> None:
    first = "Signs may include hypotension, tachycardia and rash."
    third = "Monitor liver tests in all patients before starting the drug."
    (quote,), (rest,) = resolve(f'<quote ref="doc.1">{first} {third}</quote>', [0, 2])
    assert quote.text == first and rest == Rejected(third, REST)


def test_a_partial_quote_shows_the_found_sentences_and_rejects_the_rest() -> None:
    real = (
        "Slow the infusion rate if such signs occur. Discontinue at once if anaphylaxis "
        "occurs and start appropriate treatment."
    )
    (quote,), (rest,) = resolve(f'<quote ref="doc.2">{real} {INVENTED}</quote>', [1])
    assert quote.text == real and quote.claimed_text == real and quote.id == "q1"
    assert rest == Rejected(INVENTED, REST)


def test_invented_words_before_the_found_part_are_rejected_too() -> None:
    real = "Slow the infusion rate if such signs occur."
    (quote,), (rest,) = resolve(f'<quote ref="doc.2">{INVENTED} {real}</quote>', [1])
    assert quote.text == real and rest.raw == INVENTED


def test_a_partial_quote_may_cross_a_boundary() -> None:
    real = (
        "Signs may include hypotension, tachycardia and rash. "
        "Slow the infusion rate if such signs occur."
    )
    (quote,), (rest,) = resolve(f'<quote ref="doc.1">{real} {INVENTED}</quote>', [0])
    assert quote.text.startswith("Signs") and quote.text.endswith("occur.") and BREAK in quote.text
    assert rest.raw == INVENTED


def test_a_found_part_of_few_words_is_not_shown() -> None:
    short = "Slow the infusion rate."
    assert len(short.split()) < MIN_PARTIAL_WORDS
    quotes, (rejected,) = resolve(f'<quote ref="doc.2">{short} {INVENTED}</quote>', [1])
    assert quotes == [] and "threshold" in rejected.reason
    assert rejected.raw.startswith("<quote")


def test_a_partial_quote_of_a_passage_already_quoted_is_a_repeat() -> None:
    real = "Slow the infusion rate if such signs occur."
    reply = f'<quote ref="doc.2">{real}</quote><quote ref="doc.2">{real} {INVENTED}</quote>'
    (quote,), (repeat, rest) = resolve(reply, [1])
    assert quote.id == "q1" and repeat.reason == "repeats quote q1"
    assert rest == Rejected(INVENTED, REST)


# --- the guarantee, whatever the claimed words ---------------------------------------


def claimed_words() -> st.SearchStrategy[str]:
    """Slices of the label's text (over boundaries, non-adjacent joins), mutated,
    with invented sentences in between."""
    slices = st.tuples(st.integers(0, len(LABEL_TEXT)), st.integers(0, 200)).map(
        lambda t: LABEL_TEXT[t[0] : t[0] + t[1]]
    )
    pieces = st.one_of(slices, st.sampled_from(LABEL), st.just(INVENTED), st.text(max_size=40))
    return st.lists(pieces, min_size=1, max_size=4).map(" ".join)


def squash(text: str) -> str:
    return "".join(text.split())


@settings(max_examples=300, deadline=None)
@given(words=claimed_words(), ref=st.sampled_from(["doc.1", "doc.2", "doc.3", "x"]))
def test_whatever_the_words_every_quote_is_the_stored_slice(words: str, ref: str) -> None:
    lookup = label_lookup()
    parsed = parse_output(f'<quote ref="{ref}">{words}</quote>')
    result = resolve_output(parsed, lookup.chunks, lookup)
    rests = [r.raw for r in result.rejected if "rest of quote" in r.reason]
    for item, quote in zip(parsed.items, result.quotes, strict=False):
        assert quote.text == LABEL_TEXT[quote.start : quote.end]
        assert quote.text_sha256 == sha256_text(quote.text)
        claimed = (getattr(item, "claimed", None) or "").strip()
        if claimed and quote.claimed_text != claimed:  # partial: long enough, rest rejected
            assert len(quote.text.split()) >= MIN_PARTIAL_WORDS
            assert quote.claimed_text is not None and quote.claimed_text in claimed
            # the part shown and the parts rejected make up the claim, nothing else
            assert sum(len(squash(part)) for part in [quote.claimed_text, *rests]) == len(
                squash(claimed)
            )
