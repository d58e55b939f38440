"""Tests for quoteproof.receipts: `verify_answer` re-checks quotes and cited passages;
`verify_recorded` turns a recorded answer into a displayable one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from helpers.answers import make_answer, make_quote
from quoteproof import Index
from quoteproof.codec import answer_from_dict, answer_to_dict
from quoteproof.model import (
    Chunk,
    ProseSegment,
    Quote,
    QuotedRow,
    QuotedTable,
    QuoteSegment,
    TableCell,
    sha256_text,
)
from quoteproof.receipts import answer_as_recorded, verify_answer, verify_recorded
from quoteproof.render.html import render_answer_html


def passage(index: Index, chunk: Chunk, quote_id: str) -> Quote:
    """The whole chunk as a quote with a correct receipt (as the resolver builds it)."""
    document = index.store.get_document(chunk.doc_id, chunk.doc_version)
    assert document is not None
    return make_quote(
        document.text,
        chunk.start,
        chunk.end,
        quote_id,
        ref=chunk.ref,
        label=chunk.label,
        doc_id=chunk.doc_id,
        doc_version=chunk.doc_version,
        source_path=chunk.source_path,
        section=chunk.section,
        pages=chunk.pages,
    )


def test_cited_passages_are_verified_after_the_quotes(index_dir: Path) -> None:
    with Index.open(index_dir) as index:
        dose, rash = (index.search(words, top_k=1)[0].chunk for words in ("200 mg", "blisters"))
        quote = passage(index, dose, "q1")
        cited = passage(index, rash, "q1")  # ids of cited passages may repeat quote ids
        tampered = dataclasses.replace(cited, id="c2", text=cited.text.replace("five", "ten"))
        answer = make_answer(
            (ProseSegment("Blisters follow.", (rash.ref,)), QuoteSegment("q1")),
            (quote,),
            cited=(cited, tampered),
        )
        checks = verify_answer(answer, index.store)
        assert index.verify(answer) == checks
    assert [(c.quote_id, c.ref, c.cited, c.valid) for c in checks] == [
        ("q1", dose.ref, False, True),
        ("q1", rash.ref, True, True),
        ("c2", rash.ref, True, False),
    ]
    assert "text differs from the source" in "; ".join(checks[2].problems)


def test_a_quote_may_run_into_the_next_chunk_but_starts_in_its_ref(index_dir: Path) -> None:
    with Index.open(index_dir) as index:
        first = index.search("burning tingling pain", top_k=1)[0].chunk
        chunks = index.store.chunks_of(first.doc_id, first.doc_version)
        (following,) = [c for c in chunks if c.ordinal == first.ordinal + 1]
        document = index.store.get_document(first.doc_id, first.doc_version)
        assert document is not None
        layout = index.store.get_layout(first.doc_id, first.doc_version)
        pages = (layout.pages_of(first.start, following.end) or None) if layout else None

        def spanning(ref: str, quote_id: str) -> Quote:
            return make_quote(
                document.text, first.start, following.end, quote_id, ref=ref,
                label=first.label, doc_id=first.doc_id, doc_version=first.doc_version,
                source_path=first.source_path, section=first.section, pages=pages,
            )  # fmt: skip

        quotes = (spanning(first.ref, "q1"), spanning(following.ref, "q2"))
        checks = index.verify(make_answer((), quotes))
    assert [c.valid for c in checks] == [True, False]
    assert "lie outside ref" in checks[1].problems[0]


def test_verify_recorded_rereads_every_quote_and_rejects_what_no_longer_matches(
    index_dir: Path,
) -> None:
    with Index.open(index_dir) as index:
        dose, rash = (index.search(words, top_k=1)[0].chunk for words in ("200 mg", "blisters"))
        answer = make_answer(
            (ProseSegment("Blisters follow.", (rash.ref,)), QuoteSegment("q1"), QuoteSegment("q2")),
            (passage(index, dose, "q1"), passage(index, rash, "q2")),
            cited=(passage(index, rash, "c1"),),
        )
        data = answer_to_dict(answer)
        assert verify_recorded(answer_from_dict(data), index.store) == answer
        words = "Blisters never follow; take ten times the dose."
        data["quotes"][1].update(text=words, text_sha256=sha256_text(words))
        data["cited"][0]["doc_version"] = 99
        shown = verify_recorded(answer_from_dict(data), index.store)
    assert all(type(quote) is Quote for quote in (*shown.quotes, *shown.cited))
    assert shown.quotes == answer.quotes[:1] and shown.cited == ()
    assert shown.segments == answer.segments[:2]
    (text, missing) = shown.rejected
    assert text.raw == words and "text differs from the source" in text.reason
    assert "recorded quote q2 no longer matches the index" in text.reason
    assert (
        missing.raw == answer.cited[0].text and "version 99 is not in the index" in missing.reason
    )


def test_a_saved_run_draws_no_recorded_table_cells() -> None:
    """An evaluation report has no index to re-read cells from: a forged cell in the
    saved JSON ("50 mg" where the source says "5 mg") is never drawn."""
    source = "Drug | Dose\nApixaban | 5 mg"
    body = source.index("Apixaban")
    header = QuotedRow((TableCell(0, 4, "Drug"), TableCell(7, 11, "Dose")), True, False)
    forged = QuotedRow(
        (TableCell(body, body + 8, "Apixaban"), TableCell(body + 11, len(source), "50 mg"))
    )
    quote = make_quote(
        source, body, len(source), tables=(QuotedTable(body, len(source), (header, forged)),)
    )
    saved = answer_to_dict(make_answer((QuoteSegment("q1"),), (quote,)))
    shown = answer_as_recorded(answer_from_dict(saved))
    assert shown.quotes[0].tables == () and shown.quotes[0].text == "Apixaban | 5 mg"
    assert "50 mg" not in render_answer_html(shown)
