"""Receipts: re-checking a saved answer's quotes against the index (`quoteproof verify`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from quoteproof.model import Answer, Quote
from quoteproof.quoting.validate import quote_problems
from quoteproof.store.base import Store


@dataclass(frozen=True)
class QuoteCheck:
    """The verdict on one quote: valid when `problems` is empty. `cited` marks a
    passage from `Answer.cited` (cited by prose) rather than from `Answer.quotes`."""

    quote_id: str
    ref: str
    problems: tuple[str, ...]
    cited: bool = False

    @property
    def valid(self) -> bool:
        """True when the quote matches the index exactly."""
        return not self.problems


def _ref_problems(quote: Quote, store: Store) -> list[str]:
    chunk = store.get_chunk(quote.ref)
    if chunk is None:
        return [f"ref '{quote.ref}' is not in the index"]
    if (chunk.doc_id, chunk.doc_version) != (quote.doc_id, quote.doc_version):
        return [f"ref '{quote.ref}' belongs to another document version"]
    end = chunk.end
    if quote.end > chunk.end:  # a quote may run on into the next chunk
        following = [c for c in store.neighbours(chunk) if c.ordinal == chunk.ordinal + 1]
        end = following[0].end if following else chunk.end
    if not chunk.start <= quote.start < quote.end <= end:
        return [
            f"offsets {quote.start}..{quote.end} lie outside ref '{quote.ref}' "
            "and the chunk after it"
        ]
    return []


def _page_problems(quote: Quote, store: Store) -> list[str]:
    layout = store.get_layout(quote.doc_id, quote.doc_version)
    expected = (layout.pages_of(quote.start, quote.end) or None) if layout else None
    if quote.pages != expected:
        return [f"pages {_pages(quote.pages)} do not match the index ({_pages(expected)})"]
    return []


def _pages(pages: tuple[int, ...] | None) -> str:
    return "none" if not pages else ", ".join(map(str, pages))


def check_quote(quote: Quote, store: Store) -> QuoteCheck:
    """Re-read `quote` from `store` and compare text, offsets, pages and both hashes."""
    document = store.get_document(quote.doc_id, quote.doc_version)
    problems = quote_problems(quote, document)
    if document is not None:
        problems += _ref_problems(quote, store) + _page_problems(quote, store)
    return QuoteCheck(quote.id, quote.ref, tuple(problems))


def verify_answer(answer: Answer, store: Store) -> list[QuoteCheck]:
    """Return one check per quote of `answer`, in order, then one per cited passage
    (`answer.cited`, marked `cited`). O(quotes × document length)."""
    checks = [check_quote(quote, store) for quote in answer.quotes]
    checks += [replace(check_quote(quote, store), cited=True) for quote in answer.cited]
    return checks
