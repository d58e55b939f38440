"""The resolver: resolution order, rejection reasons, and quotes read from documents."""

from __future__ import annotations

from helpers.lookups import PARAGRAPHS, TEXT, Lookup
from quoteproof.model import Quote, Rejected, sha256_text
from quoteproof.quoting.parse import parse_output
from quoteproof.quoting.resolve import resolve_output


def resolve(reply: str, retrieved: list[int], threshold: float = 90.0) -> tuple[Lookup, list]:
    lookup = Lookup()
    sources = [lookup.chunks[i] for i in retrieved]
    result = resolve_output(parse_output(reply), sources, lookup, threshold=threshold)
    for quote in result.quotes:
        assert quote.text == TEXT[quote.start : quote.end]
        assert quote.text_sha256 == sha256_text(quote.text)
    return lookup, [*result.quotes, *result.rejected]


def test_whole_chunk_by_ref() -> None:
    _, (quote,) = resolve('<quote ref="doc.2"/>', [1])
    assert isinstance(quote, Quote)
    assert (quote.text, quote.match, quote.claimed_text) == (PARAGRAPHS[1], "ref", None)


def test_exact_hit_in_cited_chunk_skips_neighbours() -> None:
    lookup, (quote,) = resolve('<quote ref="doc.2">100 mg once daily</quote>', [1])
    assert isinstance(quote, Quote) and quote.match == "exact" and quote.ref == "doc.2"
    assert lookup.neighbour_calls == 1  # fetched lazily but only once per quote


def test_words_found_in_a_neighbour_that_was_not_retrieved() -> None:
    _, (quote,) = resolve('<quote ref="doc.2">Stop the infusion if hypersensitivity</quote>', [1])
    assert isinstance(quote, Quote) and quote.ref == "doc.3"


def test_words_found_in_another_retrieved_chunk_despite_wrong_ref() -> None:
    _, (quote,) = resolve('<quote ref="nope.9">Monitor liver tests</quote>', [0, 3])
    assert isinstance(quote, Quote) and quote.ref == "doc.4" and quote.match == "exact"


def test_normalized_and_fuzzy_show_the_source_words() -> None:
    _, (normalized, fuzzy) = resolve(
        '<quote ref="doc.3">STOP  the   infusion</quote><quote ref="doc.3">Stop the infusoin if '
        "hypersensitivty occurs</quote>",
        [2],
    )
    assert isinstance(normalized, Quote) and normalized.match == "normalized"
    assert normalized.text == "Stop the infusion"
    assert isinstance(fuzzy, Quote) and fuzzy.match == "fuzzy" and 90 <= fuzzy.score < 100
    assert fuzzy.text == "Stop the infusion if hypersensitivity occurs"


def test_changed_number_is_flagged_differs() -> None:
    _, (quote,) = resolve('<quote ref="doc.2">Then give 100 mg once daily for 5 days.</quote>', [1])
    assert isinstance(quote, Quote) and "5" not in quote.text
    assert quote.differs is not None and "5" in quote.differs


def test_rejections_carry_reasons() -> None:
    _, items = resolve(
        '<quote ref="ghost.1"/><quote ref="doc.1">Aspirin twice a day with food</quote>', [0, 1]
    )
    assert all(isinstance(item, Rejected) for item in items)
    reasons = [item.reason for item in items if isinstance(item, Rejected)]
    assert "unknown reference 'ghost.1'" in reasons[0]
    assert "threshold 90" in reasons[1]


def test_citations_to_unretrieved_refs_are_dropped() -> None:
    lookup = Lookup()
    parsed = parse_output("Dose on day one [doc.1]. Also this [doc.4][zz.1].")
    result = resolve_output(parsed, lookup.chunks[:2], lookup)
    cited = [c for seg in result.segments if seg.type == "prose" for c in seg.citations]
    assert cited == ["doc.1"]
    assert {r.raw for r in result.rejected} == {"[doc.4]", "[zz.1]"}


def test_quote_pages_come_from_the_located_span() -> None:
    _, (on_two, on_one) = resolve(
        '<quote ref="doc.3">Stop the infusion</quote><quote ref="doc.1">Give 200 mg</quote>',
        [0, 2],
    )
    assert isinstance(on_two, Quote) and isinstance(on_one, Quote)
    assert (on_two.pages, on_one.pages) == ((2,), (1,))
