"""Answer events while an answer is being made: prose as the model writes it, each
quote only once the resolver has turned it into source text.

The terminal and the web page draw a draft from these events; the final `Answer`
(built from the whole reply) replaces the draft. A `QuoteResolved` event carries a
`Quote` made by the resolver, so even a draft never shows the model's words as a
quote; prose deltas are model text and are drawn as such.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from quoteproof.model import Chunk, DataResult, Quote, Rejected
from quoteproof.quoting.parse import parse_output, with_source_refs
from quoteproof.quoting.resolve import SourceLookup, resolve_output

__all__ = [
    "AnswerEvent",
    "DataComputed",
    "DraftStream",
    "EventSink",
    "ProseDelta",
    "QuoteDropped",
    "QuoteResolved",
    "StageStarted",
]


@dataclass(frozen=True)
class StageStarted:
    """A model call begins: `stage` names it (`answer`, `retry`, `verify`, …). A draft
    shown so far for an earlier attempt is void once a `retry` starts."""

    stage: str


@dataclass(frozen=True)
class ProseDelta:
    """More model-written prose (raw: citation markers included)."""

    text: str


@dataclass(frozen=True)
class QuoteResolved:
    """A quote of the reply, resolved to source text by the resolver."""

    quote: Quote


@dataclass(frozen=True)
class QuoteDropped:
    """A quote of the reply that did not resolve (what the model wrote and why it was
    dropped, as the final answer lists it): never shown as a quote."""

    rejected: Rejected


@dataclass(frozen=True)
class DataComputed:
    """A table result computed by an agent tool."""

    result: DataResult


AnswerEvent = StageStarted | ProseDelta | QuoteResolved | QuoteDropped | DataComputed
EventSink = Callable[[AnswerEvent], None]

# A protocol tag (opening, closing or self-closing), or a `<quote` whose `>` is missing.
_TAG = re.compile(
    r"<\s*(?P<close>/)?\s*(?P<name>quote|no[-_ ]?answer)\b(?P<attrs>[^<>]*)>"
    r"|(?P<broken><\s*quote\b[^<>]*)(?=<|\Z)",
    re.IGNORECASE,
)
_QUOTE_CLOSE = re.compile(r"<\s*/\s*quote\s*>", re.IGNORECASE)


def _unfinished_from(text: str, pos: int) -> int:
    """The offset from which `text` may still change meaning when more arrives: a
    `<` with no `>` after it, or a quote tag not closed yet; else `len(text)`."""
    cut = len(text)
    last_open = text.rfind("<", pos)
    if last_open != -1 and text.find(">", last_open) == -1:
        cut = last_open
    for tag in _TAG.finditer(text, pos, cut):
        if _kind(tag) == "open" and not _QUOTE_CLOSE.search(text, tag.end(), cut):
            return tag.start()
    return cut


def _kind(tag: re.Match[str]) -> Literal["open", "self-closing", "broken", "other"]:
    """What a `_TAG` match is: a quote's opening tag, a whole `<quote …/>`, a `<quote`
    without `>`, or another protocol tag (closing tag, no-answer)."""
    if tag.group("broken") is not None:
        return "broken"
    if tag.group("name").lower() != "quote" or tag.group("close"):
        return "other"
    return "self-closing" if tag.group("attrs").rstrip().endswith("/") else "open"


class DraftStream:
    """Feeds streamed reply text in, sends `ProseDelta`, `QuoteResolved` and
    `QuoteDropped` events out, in reply order.

    Prose is sent as soon as it cannot turn out to be part of a tag; a quote is sent
    when its tag is complete, after resolving it against `sources` (as `ask` does).
    Protocol tags that are not quotes (`<no-answer/>`, stray closing tags) are not
    shown; a quote naming `PID-n` names the source `ids[n]` (`parse.with_source_refs`).
    `close` flushes what is left (an unclosed quote resolves to the end).
    Each feed costs O(length of the new text + tags since the last complete item).
    """

    def __init__(
        self,
        sources: Sequence[Chunk],
        lookup: SourceLookup,
        threshold: float,
        sink: EventSink,
        ids: Mapping[int, str] | None = None,
    ) -> None:
        self._sources = sources
        self._ids = ids or {}
        self._lookup = lookup
        self._threshold = threshold
        self._sink = sink
        self._text = ""
        self._pos = 0

    def feed(self, piece: str) -> None:
        """Add `piece` of reply text and send whatever became final."""
        self._text += piece
        self._drain(_unfinished_from(self._text, self._pos))

    def close(self) -> None:
        """Send everything still held back; call once, when the reply is complete."""
        self._drain(len(self._text))

    def _drain(self, end: int) -> None:
        while self._pos < end:
            tag = _TAG.search(self._text, self._pos, end)
            prose_end = tag.start() if tag else end
            if prose_end > self._pos:
                self._sink(ProseDelta(self._text[self._pos : prose_end]))
                self._pos = prose_end
            if tag is None:
                return
            kind, tag_end = _kind(tag), tag.end()
            if kind == "open":
                close = _QUOTE_CLOSE.search(self._text, tag.end(), end)
                tag_end = close.end() if close else end
            if kind != "other":
                self._resolve(self._text[tag.start() : tag_end])
            self._pos = tag_end

    def _resolve(self, raw: str) -> None:
        resolution = resolve_output(
            parse_output(with_source_refs(raw, self._ids)),
            self._sources,
            self._lookup,
            threshold=self._threshold,
        )
        for quote in resolution.quotes:
            self._sink(QuoteResolved(quote))
        for rejected in resolution.rejected:
            self._sink(QuoteDropped(rejected))
