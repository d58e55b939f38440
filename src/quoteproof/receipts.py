"""Receipts: re-checking a saved answer's quotes against the index (`quoteproof verify`),
and turning a recorded answer into a displayable one (`verify_recorded`)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from quoteproof.model import (
    Answer,
    ClaimedQuote,
    Document,
    Quote,
    QuotedTable,
    QuoteReceipt,
    QuoteSegment,
    RecordedAnswer,
    Rejected,
)
from quoteproof.quoting.validate import quote_problems
from quoteproof.store.base import Store
from quoteproof.tables.quoted import quoted_tables


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


def _ref_problems(quote: QuoteReceipt, store: Store) -> list[str]:
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


def _page_problems(quote: QuoteReceipt, store: Store) -> list[str]:
    layout = store.get_layout(quote.doc_id, quote.doc_version)
    expected = (layout.pages_of(quote.start, quote.end) or None) if layout else None
    if quote.pages != expected:
        return [f"pages {_pages(quote.pages)} do not match the index ({_pages(expected)})"]
    return []


def _pages(pages: tuple[int, ...] | None) -> str:
    return "none" if not pages else ", ".join(map(str, pages))


def _tables(quote: QuoteReceipt, document: Document, store: Store) -> tuple[QuotedTable, ...]:
    """The table rows the quote's span covers, read from the stored document."""
    stored = store.get_tables(document.doc_id, document.version)
    return quoted_tables(document.text, stored, quote.start, quote.end)


def _table_problems(quote: QuoteReceipt, document: Document, store: Store) -> list[str]:
    """A recorded quote's table rows (when it records any) must be the index's."""
    if quote.tables and quote.tables != _tables(quote, document, store):
        return ["its table rows do not match the index"]
    return []


def _problems(quote: QuoteReceipt, document: Document | None, store: Store) -> list[str]:
    problems = quote_problems(quote, document)
    if document is not None:
        problems += _ref_problems(quote, store) + _page_problems(quote, store)
        problems += _table_problems(quote, document, store)
    return problems


def check_quote(quote: QuoteReceipt, store: Store) -> QuoteCheck:
    """Re-read `quote` from `store` and compare text, offsets, pages and both hashes."""
    document = store.get_document(quote.doc_id, quote.doc_version)
    return QuoteCheck(quote.id, quote.ref, tuple(_problems(quote, document, store)))


def verify_answer(answer: Answer | RecordedAnswer, store: Store) -> list[QuoteCheck]:
    """Return one check per quote of `answer` (a fresh or a recorded one), in order,
    then one per cited passage (`answer.cited`, marked `cited`).
    O(quotes × document length)."""
    checks = [check_quote(quote, store) for quote in answer.quotes]
    checks += [replace(check_quote(quote, store), cited=True) for quote in answer.cited]
    return checks


def verify_recorded(record: RecordedAnswer, store: Store) -> Answer:
    """Return the displayable `Answer` of `record`: each claimed quote that passes
    `check_quote` becomes a `Quote` whose text and table rows are re-read from the
    stored document (`Document.text[start:end]`); one that fails is dropped from `quotes` (with its
    segment) or `cited`, and listed in `rejected` with the reasons, so it is never
    shown as verbatim. O(quotes × document length)."""
    rejected = list(record.without_quotes.rejected)
    quotes = _verified(record.quotes, store, rejected)
    cited = _verified(record.cited, store, rejected)
    shown = {quote.id for quote in quotes}
    segments = tuple(
        segment
        for segment in record.without_quotes.segments
        if not isinstance(segment, QuoteSegment) or segment.quote_id in shown
    )
    return replace(
        record.without_quotes,
        segments=segments,
        quotes=quotes,
        cited=cited,
        rejected=tuple(rejected),
    )


def _verified(
    claims: tuple[ClaimedQuote, ...], store: Store, rejected: list[Rejected]
) -> tuple[Quote, ...]:
    """The claims that verify, as quotes read from `store`; the others go to `rejected`."""
    quotes = []
    for claim in claims:
        document = store.get_document(claim.doc_id, claim.doc_version)
        problems = _problems(claim, document, store)
        if document is None or problems:
            reason = f"recorded quote {claim.id} no longer matches the index: "
            rejected.append(Rejected(claim.text, reason + "; ".join(problems)))
            continue
        text = document.text[claim.start : claim.end]
        quotes.append(_as_quote(claim, text=text, tables=_tables(claim, document, store)))
    return tuple(quotes)


def answer_as_recorded(record: RecordedAnswer) -> Answer:
    """Return `record` as an `Answer` whose quotes are its claims, NOT re-read from
    any store. Only for drawing a saved evaluation run (`evaluation.report`), which
    has no index to read from and whose quotes the run itself re-read from the index
    when it was made (its `verbatim_failures`); an answer from the audit log or from
    a user goes through `verify_recorded`. The run checked each quote's text, not its
    table cells, so recorded `tables` are dropped: table quotes are drawn as text."""
    return replace(
        record.without_quotes,
        quotes=tuple(_as_quote(claim, tables=()) for claim in record.quotes),
        cited=tuple(_as_quote(claim, tables=()) for claim in record.cited),
    )


def _as_quote(receipt: QuoteReceipt, **changes: object) -> Quote:
    values = {f.name: getattr(receipt, f.name) for f in fields(receipt)}
    return Quote(**(values | changes))
