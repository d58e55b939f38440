"""The resolver on pointers (`<quote ref="REF" unit="N"/>`): unit N of the cited
chunk is exactly `pointable_units(chunk.text, rows)[N - 1]`, read from the stored
document; anything else is rejected with its reason, never shown."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.lookups import Lookup, make_chunks
from quoteproof.llm.quotable import pointable_units
from quoteproof.model import Quote, Rejected
from quoteproof.quoting.parse import parse_output
from quoteproof.quoting.resolve import Resolution, resolve_output

PARAGRAPHS = [
    # over 50 words, so that each sentence is a unit of its own (not the paragraph whole)
    "Shingles starts with pain, itching or tingling on one side of the body, often in a "
    "band around the waist or over one eye of an older adult. "
    "A rash of blisters appears a few days later. The rash scabs over in a week, and the "
    "pain can last for weeks or months after the skin has healed in some older patients.",
    "Age group | Systolic | Diastolic\n18 to 39 years | 119 | 70\n40 to 59 years | 124 | 77",
    "Risk factors include: an age of fifty years or more, and a weakened immune system.",
    "Short.",
]
TABLE = PARAGRAPHS[1]
# The table's body rows, as spans of its chunk's text (the header row is not one).
ROWS = [
    (TABLE.index("18 to"), TABLE.index("\n40")),
    (TABLE.index("40 to"), len(TABLE)),
]


def lookup() -> Lookup:
    chunks = make_chunks(paragraphs=PARAGRAPHS)
    return Lookup(chunks, "\n\n".join(PARAGRAPHS), rows={"doc.2": ROWS})


def resolve(reply: str, store: Lookup | None = None) -> Resolution:
    store = store or lookup()
    return resolve_output(parse_output(reply), store.chunks, store)


def test_unit_n_is_the_nth_quotable_unit_read_from_the_document() -> None:
    store = lookup()
    for chunk in store.chunks:
        units = pointable_units(chunk.text, store.rows.get(chunk.ref, ()))
        for number, unit in enumerate(units, start=1):
            result = resolve(f'<quote ref="{chunk.ref}" unit="{number}"/>', store)
            (quote,) = result.quotes
            assert result.rejected == ()
            assert (quote.start, quote.end) == (chunk.start + unit.start, chunk.start + unit.end)
            assert quote.text == store.doc.text[quote.start : quote.end]
            assert quote.text == chunk.text[unit.start : unit.end]
            assert (quote.ref, quote.match, quote.claimed_text) == (chunk.ref, "ref", None)


def test_table_rows_are_units_of_their_own() -> None:
    result = resolve('<quote ref="doc.2" unit="2"/>')
    assert [q.text for q in result.quotes] == ["40 to 59 years | 124 | 77"]


def test_unknown_refs_and_numbers_are_rejected_with_a_reason() -> None:
    reply = (
        '<quote ref="nope.9" unit="1"/> <quote ref="doc.1" unit="4"/> '
        '<quote ref="doc.1" unit="0"/> <quote ref="doc.4" unit="1"/> '
        '<quote ref="doc.1" unit="x"/> <quote unit="1">free words</quote>'
    )
    result = resolve(reply)
    assert result.quotes == ()
    assert [r.reason for r in result.rejected] == [
        "unknown reference 'nope.9': not a retrieved source",
        "source 'doc.1' has no unit 4 (its units are 1-3)",
        "source 'doc.1' has no unit 0 (its units are 1-3)",
        "source 'doc.4' has no numbered units",
        "unit 'x' is not a unit number",
        "unit 1 names no source",
    ]


def test_a_pointer_resolves_by_its_number_and_keeps_the_words_as_a_claim() -> None:
    result = resolve('<quote ref="doc.1" unit="2">A rash of boils appears</quote>')
    (quote,) = result.quotes
    assert quote.text == "A rash of blisters appears a few days later."
    assert quote.claimed_text == "A rash of boils appears"
    assert quote.differs is not None
    # Words that are elsewhere in the sources do not move the pointer.
    moved = resolve('<quote ref="doc.1" unit="1">The rash scabs over in a week.</quote>')
    assert moved.quotes[0].text.startswith("Shingles starts")


def test_a_pointer_is_checked_against_the_stored_document() -> None:
    store = lookup()
    tampered = replace(store.chunks[0], text=store.chunks[0].text.replace("pain", "PAIN"))
    result = resolve_output(
        parse_output('<quote ref="doc.1" unit="1"/>'), [tampered, *store.chunks[1:]], store
    )
    assert result.quotes == ()
    (rejected,) = result.rejected
    assert rejected.reason.startswith("internal check failed")


def test_a_repeated_pointer_is_one_quote() -> None:
    result = resolve('<quote ref="doc.1" unit="1"/><quote ref="doc.1#1"/>')
    assert len(result.quotes) == 1
    assert [r.reason for r in result.rejected] == ["repeats quote q1"]


REFS = ["doc.1", "doc.2", "doc.3", "doc.4", "nope.1", "", "doc.1#2", "<b>doc.1</b>"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(REFS),
            st.one_of(st.integers(-3, 12).map(str), st.sampled_from(["", "x", "1e3", "9" * 40])),
            st.sampled_from(["/>", ">", "></quote>", ">words</quote>", "> <script>x</script>"]),
        ),
        max_size=6,
    )
)
def test_nothing_unresolvable_is_ever_a_quote(pointers: list[tuple[str, str, str]]) -> None:
    store = lookup()
    reply = " ".join(f'<quote ref="{ref}" unit="{unit}"{end}' for ref, unit, end in pointers)
    result = resolve(reply, store)
    by_ref = {chunk.ref: chunk for chunk in store.chunks}
    for quote in result.quotes:
        assert isinstance(quote, Quote)
        assert quote.text == store.doc.text[quote.start : quote.end]
        chunk = by_ref[quote.ref]
        spans = [
            (chunk.start + u.start, chunk.start + u.end)
            for u in pointable_units(chunk.text, store.rows.get(chunk.ref, ()))
        ]
        assert (quote.start, quote.end) in spans
    assert all(isinstance(r, Rejected) and r.reason for r in result.rejected)
