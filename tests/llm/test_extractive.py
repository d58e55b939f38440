"""The extractive backend: quotes only, chosen by overlap with the question."""

from __future__ import annotations

from quoteproof.llm.base import CompletionRequest
from quoteproof.llm.extractive import ExtractiveBackend, extract_answer
from quoteproof.model import Chunk
from quoteproof.quoting.parse import QuoteItem, parse_output
from quoteproof.quoting.prompt import build_messages

LONG = (
    "Influenza spreads by droplets. Vaccination every year is the best protection. "
    "Antiviral drugs can shorten the illness when started early. "
    "Most people recover within two weeks without complications. " * 3
)


def chunk(ref: str, text: str) -> Chunk:
    return Chunk(ref, "d", 1, 1, 0, len(text), text, (), "L", "/d.txt")


def test_quotes_best_sentences_of_long_chunks_and_whole_short_ones() -> None:
    sources = (chunk("d.1", LONG), chunk("d.2", "Annual vaccination protects against influenza."))
    parsed = parse_output(
        extract_answer("How does vaccination protect against influenza?", sources)
    )
    quotes = [item for item in parsed.items if isinstance(item, QuoteItem)]
    assert [q.ref for q in quotes] == ["d.1", "d.2"]
    assert quotes[0].claimed is not None and "Vaccination every year" in quotes[0].claimed
    assert quotes[0].claimed in LONG and len(quotes[0].claimed) < len(LONG)
    assert quotes[1].claimed is None  # short chunk: quoted whole by ref
    assert all(isinstance(item, QuoteItem) for item in parsed.items)


def test_no_overlap_means_no_answer() -> None:
    assert extract_answer("rattlesnake antivenom", (chunk("d.1", LONG),)) == "<no-answer/>"


def test_weak_sources_and_duplicates_are_left_out() -> None:
    same = "Antiviral drugs can shorten influenza illness when started early."
    sources = (
        chunk("a.1", same),
        chunk("b.1", same),
        chunk("c.1", "Influenza is common in winter."),
        chunk("e.1", "Antiviral drugs influenza illness started early shorten."),
    )
    reply = extract_answer("Can antiviral drugs shorten influenza illness?", sources)
    refs = [i.ref for i in parse_output(reply).items if isinstance(i, QuoteItem)]
    assert refs == ["a.1", "e.1"]


def test_backend_reads_the_request_not_the_prompt() -> None:
    sources = (chunk("d.1", "Annual vaccination protects against influenza."),)
    request = CompletionRequest(build_messages("vaccination?", sources), "vaccination?", sources)
    completion = ExtractiveBackend().complete(request)
    assert completion.text == '<quote ref="d.1"/>' and completion.model is None


def test_stream_hands_over_the_whole_reply_once() -> None:
    sources = (chunk("d.1", LONG), chunk("d.2", "Annual vaccination protects against influenza."))
    request = CompletionRequest(build_messages("vaccination?", sources), "vaccination?", sources)
    pieces: list[str] = []
    completion = ExtractiveBackend().stream(request, pieces.append)
    assert pieces == [completion.text]
    assert completion == ExtractiveBackend().complete(request)
