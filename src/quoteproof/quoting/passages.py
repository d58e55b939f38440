"""Search texts made of one chunk or of adjacent chunks, mapped back to the document.

A quote may run from the end of one chunk into the next. `Passage.join(chunks)` makes
one search text of adjacent chunks of one document version: each chunk's text once
(where windows overlap, the shared text is not repeated), and a single line break
(`JOIN`) where the document has text between two chunks (a heading, page furniture),
which a quoting reader leaves out. `document_span` maps a span of the search text
back to document offsets: from its first character to its last, so the span shown
includes whatever lies between the chunks. Nothing here reads or makes quote text.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from quoteproof.model import Chunk

__all__ = ["JOIN", "Passage", "around"]

JOIN = "\n"
"""What stands in the search text for the document text between two chunks."""


@dataclass(frozen=True)
class _Piece:
    """`length` characters of the search text from `offset` are the document's from
    `doc_start`."""

    offset: int
    doc_start: int
    length: int


@dataclass(frozen=True)
class Passage:
    """The search text `text` of `chunks` (in document order) and where its pieces lie
    in the document. Build with `of` or `join`."""

    chunks: tuple[Chunk, ...]
    text: str
    pieces: tuple[_Piece, ...]

    @classmethod
    def of(cls, chunk: Chunk) -> Passage:
        """The passage of one chunk: its text, offsets `chunk.start` on."""
        return cls((chunk,), chunk.text, (_Piece(0, chunk.start, len(chunk.text)),))

    @classmethod
    def join(cls, chunks: Sequence[Chunk]) -> Passage | None:
        """The passage of `chunks` when they are consecutive chunks (ordinals one apart,
        in any order given) of one document version; otherwise None. A chunk that
        overlaps the one before adds only its text after that one's end.

        O(total length of the chunks' texts).
        """
        ordered = sorted(chunks, key=lambda c: c.ordinal)
        if not ordered or any(
            (b.doc_id, b.doc_version, b.ordinal) != (a.doc_id, a.doc_version, a.ordinal + 1)
            for a, b in pairwise(ordered)
        ):
            return None
        parts: list[str] = []
        pieces: list[_Piece] = []
        offset, covered = 0, ordered[0].start
        for chunk in ordered:
            skip = max(0, covered - chunk.start)
            if skip >= len(chunk.text):
                continue
            if pieces and chunk.start > covered:
                parts.append(JOIN)
                offset += len(JOIN)
            part = chunk.text[skip:]
            pieces.append(_Piece(offset, chunk.start + skip, len(part)))
            parts.append(part)
            offset += len(part)
            covered = chunk.end
        return cls(tuple(ordered), "".join(parts), tuple(pieces))

    def _piece_at(self, position: int) -> _Piece:
        """The piece holding search-text character `position` (or the one before a join)."""
        k = bisect.bisect_right([p.offset for p in self.pieces], position) - 1
        return self.pieces[max(0, k)]

    def document_span(self, start: int, end: int) -> tuple[int, int]:
        """The document offsets `[start', end')` of search-text span `text[start:end]`
        (`start < end`, neither end on a join): from its first character's document
        offset to just after its last one's."""
        first, last = self._piece_at(start), self._piece_at(end - 1)
        return first.doc_start + start - first.offset, last.doc_start + end - last.offset

    def chunk_at(self, doc_offset: int) -> Chunk:
        """The first of `chunks` whose span covers document offset `doc_offset` (the
        last chunk when none does)."""
        return next((c for c in self.chunks if c.start <= doc_offset < c.end), self.chunks[-1])

    def agrees_with(self, document_text: str, start: int, end: int) -> bool:
        """True when every character of `text[start:end]` outside the joins is the
        document's character at its mapped offset: the chunks are the document's."""
        for piece in self.pieces:
            lo, hi = max(start, piece.offset), min(end, piece.offset + piece.length)
            if lo >= hi:
                continue
            doc_lo = piece.doc_start + lo - piece.offset
            if document_text[doc_lo : doc_lo + hi - lo] != self.text[lo:hi]:
                return False
        return True


def around(chunk: Chunk, neighbours: Sequence[Chunk]) -> Passage | None:
    """The passage of `chunk` with those of `neighbours` one place before or after it
    in its document version (others are ignored); None when there are none."""
    adjacent = [
        c
        for c in neighbours
        if (c.doc_id, c.doc_version) == (chunk.doc_id, chunk.doc_version)
        and abs(c.ordinal - chunk.ordinal) == 1
    ]
    return Passage.join([chunk, *adjacent]) if adjacent else None
