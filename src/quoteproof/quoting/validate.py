"""Checks that a quote is exactly what its receipt says: the last line of defence."""

from __future__ import annotations

from quoteproof.model import Document, QuoteReceipt, sha256_text


def quote_problems(quote: QuoteReceipt, document: Document | None) -> list[str]:
    """Return what is wrong with `quote` against the stored `document` (empty: valid).

    Valid means: the document version exists, its text still hashes to the quote's
    `doc_sha256`, the offsets lie inside it, `quote.text` equals
    `document.text[start:end]`, and `text_sha256` is the hash of that text.
    """
    if document is None:
        return [f"document {quote.doc_id} version {quote.doc_version} is not in the index"]
    problems = []
    if sha256_text(document.text) != quote.doc_sha256:
        problems.append("document hash differs from the receipt's doc_sha256")
    if not 0 <= quote.start < quote.end <= len(document.text):
        problems.append(f"offsets {quote.start}..{quote.end} lie outside the document")
    elif document.text[quote.start : quote.end] != quote.text:
        problems.append(f"text differs from the source at offsets {quote.start}..{quote.end}")
    if sha256_text(quote.text) != quote.text_sha256:
        problems.append("text_sha256 is not the hash of the quote's text")
    return problems
