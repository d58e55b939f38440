"""Receipts: re-checking a saved answer against the index (`quoteproof verify`), and
turning a recorded answer into a displayable one (`verify_recorded`).

A quote's fields are of three kinds. Those the index fixes are re-read from it and
compared (`check_quote`): the document (`doc_id`, `doc_version`, `doc_sha256`, whose
`source_path` it must have), the span (`ref`, `start`, `end`: inside the ref's chunk
and the one after it), `text` and `text_sha256`, the chunk's `label` (which starts
with the document's title) and `section`, the `pages` the span lies on, and, when the
answer records them, `ocr` and the `tables` rows it covers (both added after the
first release). `boxes` are recomputed from the stored PDF wherever they are drawn,
never compared (they are read with PDFium, whose versions may differ by a fraction of
a point), and so is `list_goes_on`, a reading of the text after the quote that the
answer does not vouch for: a displayed quote has the index's, never the record's.
The others are the answer's own: `id`, and the model's `claimed_text`, with the
`match`, `score` and `differs` found from it; only the answer's seal (`seal`) vouches
for them, as for everything outside the quotes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

from quoteproof.codec import answer_from_dict
from quoteproof.model import (
    Answer,
    ClaimedQuote,
    Document,
    Fact,
    Quote,
    QuotedTable,
    QuoteReceipt,
    QuoteSegment,
    RecordedAnswer,
    Rejected,
)
from quoteproof.quoting.resolve import quote_at
from quoteproof.quoting.validate import quote_problems
from quoteproof.seal import SealCheck, check_seal, split_seal
from quoteproof.store.base import AuditEntry, Store
from quoteproof.store_lookup import StoreLookup


@dataclass(frozen=True)
class QuoteCheck:
    """The verdict on one quote: valid when `problems` is empty. `cited` marks a
    passage from `Answer.cited` (cited by prose) rather than from `Answer.quotes`.
    `notes` say what a reader should know that is no fault of the quote (its document
    version has since been superseded or retired)."""

    quote_id: str
    ref: str
    problems: tuple[str, ...]
    cited: bool = False
    notes: tuple[str, ...] = ()

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


def indexed_quote(
    claim: QuoteReceipt, document: Document, store: Store, lookup: StoreLookup, *, boxes: bool
) -> Quote:
    """The quote the index gives for `claim`'s span of `document` (whose ref must be
    in the index): every field the index fixes (see the module docstring) read from
    it, boxes too when `boxes`; the answer's own fields taken from `claim`."""
    chunk = store.get_chunk(claim.ref)
    assert chunk is not None, "the ref was checked first"
    location = lookup.locate(document, claim.start, claim.end, boxes=boxes)
    own = {name: getattr(claim, name) for name in _OWN_FIELDS}
    return quote_at(chunk, document, claim.start, claim.end, location, **own)


_OWN_FIELDS = ("id", "claimed_text", "match", "score", "differs")
"""The fields of a quote that are the answer's own, not the index's."""

_COMPARED = ("source_path", "label", "section", "pages")
"""Fields the index fixes, compared beyond what `quote_problems` checks."""

_COMPARED_WHEN_RECORDED = ("ocr", "tables")
"""Fields added after the first release: compared when the answer records a value
other than the default (an older answer lacks them)."""


def _field_problems(claim: QuoteReceipt, indexed: Quote) -> list[str]:
    """Each compared field whose recorded value is not the index's, with both values."""
    names = [*_COMPARED]
    names += [name for name in _COMPARED_WHEN_RECORDED if getattr(claim, name)]
    problems = []
    for name in names:
        recorded, actual = getattr(claim, name), getattr(indexed, name)
        if recorded != actual:
            verb = "differ" if name.endswith("s") else "differs"
            problems.append(
                f"{name} {verb}: the answer says {_shown(name, recorded)}, "
                f"the index says {_shown(name, actual)}"
            )
    return problems


def _shown(name: str, value: Any) -> str:
    """A field's value as a message shows it."""
    if name == "section":
        return json.dumps(" › ".join(value), ensure_ascii=False) if value else "no section"
    if name == "pages":
        return "no pages" if not value else "page " + ", ".join(map(str, value))
    if name == "tables":
        return _tables_shown(value) if value else "no table rows"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False)


def _tables_shown(tables: tuple[QuotedTable, ...]) -> str:
    """Table rows as `[cell | cell] [cell | cell]`, tables separated by `; `."""
    return "; ".join(
        " ".join("[" + " | ".join(cell.text for cell in row.cells) + "]" for row in table.rows)
        for table in tables
    )


def _version_notes(claim: QuoteReceipt, document: Document, store: Store) -> tuple[str, ...]:
    """Whether the quoted document version is still the current one."""
    current = store.current_version(document.source_path)
    where = f"version {document.version} of {document.source_path}"
    if current is None:
        return (f"{where}, since retired from the index",)
    if current.version != document.version:
        return (f"{where}, since superseded by version {current.version}",)
    return ()


@dataclass(frozen=True)
class _Reading:
    """A claim read against the index: the index's quote (None when the document or
    ref is missing), what differs, and the notes."""

    indexed: Quote | None
    problems: list[str]
    notes: tuple[str, ...]


def _read(claim: QuoteReceipt, store: Store, lookup: StoreLookup, *, boxes: bool) -> _Reading:
    document = store.get_document(claim.doc_id, claim.doc_version)
    problems = quote_problems(claim, document)
    if document is None:
        return _Reading(None, problems, ())
    ref_problems = _ref_problems(claim, store)
    if ref_problems:
        return _Reading(None, problems + ref_problems, _version_notes(claim, document, store))
    indexed = indexed_quote(claim, document, store, lookup, boxes=boxes)
    problems += _field_problems(claim, indexed)
    return _Reading(indexed, problems, _version_notes(claim, document, store))


def check_quote(quote: QuoteReceipt, store: Store, *, cited: bool = False) -> QuoteCheck:
    """Re-read `quote` from `store` and compare every field the index fixes (see the
    module docstring); note a superseded or retired document version."""
    with StoreLookup(store) as lookup:
        return _check(quote, store, lookup, cited)


def _check(quote: QuoteReceipt, store: Store, lookup: StoreLookup, cited: bool) -> QuoteCheck:
    reading = _read(quote, store, lookup, boxes=False)
    return QuoteCheck(quote.id, quote.ref, tuple(reading.problems), cited, reading.notes)


def check_fact(fact: Fact, store: Store) -> QuoteCheck | None:
    """Re-read the stored triplet of an imported `fact` and compare its subject,
    relation, object, graph file and line (a check named by the fact's id and the
    triplet's); note a triplet retired since. None for a generated fact, whose
    provenance is the quote of its source sentence, checked as any quote."""
    if fact.origin != "imported" or fact.triplet_id is None:
        return None
    stored = store.get_triplet(fact.triplet_id)
    problems: list[str] = []
    notes: tuple[str, ...] = ()
    if stored is None:
        problems.append(f"triplet {fact.triplet_id} is not in the index")
    else:
        claimed = (fact.subject, fact.relation, fact.object, fact.graph_file, fact.row)
        indexed = (stored.subject, stored.relation, stored.object, stored.graph_file, stored.row)
        if claimed != indexed:
            problems.append(
                f"the answer's triplet {' | '.join(map(str, claimed[:3]))} "
                f"({claimed[3]}, line {claimed[4]}) is not the index's "
                f"{' | '.join(map(str, indexed[:3]))} ({indexed[3]}, line {indexed[4]})"
            )
        if not stored.is_current:
            notes = ("a triplet since retired from the graph",)
    return QuoteCheck(fact.id, fact.triplet_id, tuple(problems), notes=notes)


def verify_answer(answer: Answer | RecordedAnswer, store: Store) -> list[QuoteCheck]:
    """Return one check per quote of `answer` (a fresh or a recorded one), in order,
    then one per cited passage (`answer.cited`, marked `cited`), then one per
    imported triplet it cites (`check_fact`). O(quotes × document length)."""
    with StoreLookup(store) as lookup:
        checks = [_check(quote, store, lookup, False) for quote in answer.quotes]
        checks += [_check(quote, store, lookup, True) for quote in answer.cited]
    facts = answer.facts if isinstance(answer, Answer) else answer.without_quotes.facts
    checks += [check for fact in facts if (check := check_fact(fact, store)) is not None]
    return checks


@dataclass(frozen=True)
class AnswerCheck:
    """The verdict on a saved answer JSON: one check per quote and cited passage
    (`verify_answer`), and the check of the answer as a whole against its seal."""

    quotes: tuple[QuoteCheck, ...]
    seal: SealCheck

    @property
    def valid(self) -> bool:
        """True when every quote matches the index and the seal shows no change."""
        return all(check.valid for check in self.quotes) and not self.seal.problems


def verify_saved(
    data: object,
    store: Store,
    key: bytes | None,
    entry: Callable[[str], AuditEntry | None],
) -> AnswerCheck:
    """Check a saved answer JSON (`data`, as read from a file or a request): every
    quote against `store`, and the whole against its seal (`seal.check_seal`) with
    the audit `key` and the audit entry the seal names (`entry` of its id: None when
    absent or not visible). Raises `ValueError` naming the first bad field when
    `data` is not an answer (`codec.answer_from_dict`)."""
    content, seal = split_seal(data)
    recorded = answer_from_dict(content)
    checks = tuple(verify_answer(recorded, store))
    assert isinstance(content, dict), "answer_from_dict accepts only an object"
    named = entry(seal.audit_entry) if seal is not None else None
    return AnswerCheck(checks, check_seal(content, seal, key, named))


def verify_recorded(record: RecordedAnswer, store: Store) -> Answer:
    """Return the displayable `Answer` of `record`: each claimed quote that passes
    `check_quote` becomes the `Quote` the index gives for its span (`indexed_quote`:
    text, label, section, pages, boxes, OCR and table rows all read from the index);
    one that fails is dropped from `quotes` (with its segment) or `cited`, and listed
    in `rejected` with the reasons, so it is never shown as verbatim.
    O(quotes × document length)."""
    rejected = list(record.without_quotes.rejected)
    with StoreLookup(store) as lookup:
        quotes = _verified(record.quotes, store, lookup, rejected, boxes=True)
        cited = _verified(record.cited, store, lookup, rejected, boxes=False)
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
    claims: tuple[ClaimedQuote, ...],
    store: Store,
    lookup: StoreLookup,
    rejected: list[Rejected],
    *,
    boxes: bool,
) -> tuple[Quote, ...]:
    """The claims that verify, as quotes read from `store`; the others go to `rejected`."""
    quotes = []
    for claim in claims:
        reading = _read(claim, store, lookup, boxes=boxes)
        if reading.indexed is None or reading.problems:
            reason = f"recorded quote {claim.id} no longer matches the index: "
            rejected.append(Rejected(claim.text, reason + "; ".join(reading.problems)))
            continue
        quotes.append(reading.indexed)
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
