"""An in-memory document in paragraph chunks and a `SourceLookup` over it, for
resolver tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from quoteproof.model import Chunk, Document, Layout, Location, sha256_text

PARAGRAPHS = [
    "Give 200 mg on day 1.",
    "Then give 100 mg once daily for 4 days.",
    "Stop the infusion if hypersensitivity occurs.",
    "Monitor liver tests before and during treatment.",
]
TEXT = "\n\n".join(PARAGRAPHS)


def make_chunks(
    doc_id: str = "doc", paragraphs: Sequence[str] = PARAGRAPHS, separator: str = "\n\n"
) -> list[Chunk]:
    """One chunk per paragraph of `separator.join(paragraphs)`."""
    chunks, offset = [], 0
    for ordinal, paragraph in enumerate(paragraphs, start=1):
        chunks.append(
            Chunk(
                ref=f"{doc_id}.{ordinal}",
                doc_id=doc_id,
                doc_version=1,
                ordinal=ordinal,
                start=offset,
                end=offset + len(paragraph),
                text=paragraph,
                section=("Dosing",),
                label=f"Label › ¶{ordinal}",
                source_path=f"/{doc_id}.txt",
            )
        )
        offset += len(paragraph) + len(separator)
    return chunks


def overlapping_windows(text: str, first_end: str, second_start: str) -> list[Chunk]:
    """Two chunks of one paragraph `text` whose windows overlap: the first ends after
    the words `first_end`, the second starts at the words `second_start` (earlier)."""
    base = make_chunks(paragraphs=[text])[0]
    cut = text.index(first_end) + len(first_end)
    overlap = text.index(second_start)
    first = replace(base, end=cut, text=text[:cut])
    second = replace(base, ref=f"{base.doc_id}.2", ordinal=2, start=overlap, text=text[overlap:])
    return [first, second]


class Lookup:
    """An in-memory `SourceLookup` over one document, by default `TEXT` in paragraphs."""

    def __init__(
        self,
        chunks: Sequence[Chunk] | None = None,
        text: str = TEXT,
        rows: Mapping[str, Sequence[tuple[int, int]]] | None = None,
    ) -> None:
        self.chunks = list(chunks or make_chunks())
        self.doc = Document("doc", 1, "/doc.txt", "Label", "text", text, sha256_text(text))
        self.rows = dict(rows or {})
        self.neighbour_calls = 0

    def document(self, doc_id: str, version: int) -> Document | None:
        return self.doc if (doc_id, version) == ("doc", 1) else None

    def neighbours(self, chunk: Chunk) -> Sequence[Chunk]:
        self.neighbour_calls += 1
        return [c for c in self.chunks if abs(c.ordinal - chunk.ordinal) == 1]

    def table_rows(self, chunk: Chunk) -> Sequence[tuple[int, int]]:
        """The table body rows given for `chunk`'s ref (none by default)."""
        return self.rows.get(chunk.ref, ())

    def locate(self, document: Document, start: int, end: int, *, boxes: bool = True) -> Location:
        """Paragraphs 1-2 lie on page 1, paragraphs 3-4 on page 2."""
        return Location(LAYOUT.pages_of(start, end))


LAYOUT = Layout(page_starts=(0, TEXT.index(PARAGRAPHS[2])))
