"""The units the `extractive` backend chooses among: the quotable units of the
retrieved sources, and the units that run from one source into the next chunk.

Each quotable unit of a source (`llm.quotable`: sentences, short paragraphs, a
lead-in with its list, and the body rows of tables whose structure the index keeps,
with headings, contents lines, captions, fragments and front matter left out) is a
`Candidate`, none from a chunk under a reference list's heading ("References"). So is
each unit that runs from the end of a source into the next chunk of its document (a
sentence or a lead-in's list cut by page furniture or the chunk size: the source
stops mid-sentence and the next chunk goes on in lower case, or it stops at a
lead-in's colon), quoted from both chunks; it replaces the pieces of it that each
chunk holds alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from quoteproof.ingest.blocks import CELL_SEPARATOR
from quoteproof.llm.quotable import Unit, ends_lead_in, quotable_units
from quoteproof.model import Chunk, Hit
from quoteproof.quoting.passages import JOIN

__all__ = ["Candidate", "Following", "TableRows", "candidates_of", "quotable_first"]

TableRows = Callable[[Chunk], Sequence[tuple[int, int]]]
"""A chunk's table body rows, as spans of its text, in order."""

Following = Callable[[Chunk], Chunk | None]
"""The chunk after a chunk in its document version (None at the end)."""

_LEAD_IN_SPLIT = "\n\n"
_SENTENCE_SPLIT = " "
"""What stands between a chunk's text and the next chunk's in the text their
straddling units are found in: a paragraph break after a lead-in (it ends its line,
the list follows), a space inside a sentence."""
_RUNS_ON = re.compile(r"[a-z][a-z'-]+\b(?![.)])")
"""The start of a text that goes on with the sentence before it: a word in lower case
(not a list marker such as "a." or "iv)")."""


@dataclass(frozen=True)
class Candidate:
    """A unit an answer may quote: `chunk.text[start:end]` (a `quotable.Unit`),
    `core` the words it is scored on, `header` a laid-out table's header line quoted
    before it, and `rank` its source's place among the sources (0 the first)."""

    chunk: Chunk
    rank: int
    start: int
    end: int
    core: str
    header: tuple[int, int] | None = None
    cut: int | None = None
    """For a unit that runs into the next chunk: where `chunk.text` (then the chunk's
    text, `split` and the next chunk's text) passes to the next chunk."""
    split: str = ""
    """What stands between the two texts there (`_LEAD_IN_SPLIT`, `_SENTENCE_SPLIT`)."""
    table: int | None = None
    """For a table row, where its table's paragraph starts in `chunk.text` (the rows
    of one table share it); None for any other unit."""
    columns: str = ""
    """For a table row, the line above its table's first row (its column names when
    the table has a header row; a laid-out table's header line); "" when none."""
    own: int | None = None
    """For a unit quoted from the sentence before it (`extractive._with_sentences_before`),
    where its own sentence starts; None for any other unit."""

    def quoted(self, start: int, end: int) -> str:
        """The text of `chunk.text[start:end]` as a quote of it reads: across the
        chunk boundary, `passages.JOIN` in place of `split` (the quote is found in
        the chunk joined with the next, `quoting.passages.Passage.join`)."""
        text = self.chunk.text
        if self.cut is not None and start < self.cut < end:
            return text[start : self.cut] + JOIN + text[self.cut + len(self.split) : end]
        return text[start:end]


_REFERENCE_LIST = re.compile(
    r"(?:\d+\.?\s*)?(?:references?(?: cited| list)?|bibliography|works cited|literature cited)",
    re.IGNORECASE,
)
"""The heading of a document's list of references: its entries are no answer."""


def _unit_candidates(chunk: Chunk, rank: int, rows: Sequence[tuple[int, int]]) -> list[Candidate]:
    """The quotable units of `chunk` (`rows`: its table rows), with its rank; none for
    a chunk under a reference list's heading (`_REFERENCE_LIST`)."""
    if chunk.section and _REFERENCE_LIST.fullmatch(chunk.section[-1].strip()):
        return []
    return [
        Candidate(
            chunk,
            rank,
            unit.start,
            unit.end,
            _scored_text(chunk.text, unit),
            unit.header,
            table=unit.table,
            columns=_columns(chunk.text, unit),
        )
        for unit in quotable_units(chunk.text, rows)
    ]


def _columns(text: str, unit: Unit) -> str:
    """The column names of the table row `unit` of `text` (its structured table's
    line of names, or its laid-out table's header line); "" for any other unit."""
    span = unit.columns or (unit.header if unit.table is not None else None)
    return text[span[0] : span[1]] if span else ""


def _scored_text(text: str, unit: Unit) -> str:
    """What `unit` of `text` is scored on: its core; for a table row under a line of
    column names with as many cells ("Day | Open | Close" over "Saturday | 09:00 |
    17:30"; a Markdown table's line may start and end with "|"), each cell after its
    column's name ("Day: Saturday; Open: 09:00; Close: 17:30"), so that a row
    answers a question in its columns' words."""
    core = text[unit.core_start : unit.core_end]
    if unit.columns is None:
        return core
    names = text[unit.columns[0] : unit.columns[1]].strip("| ").split(CELL_SEPARATOR)
    cells = core.split(CELL_SEPARATOR)
    if len(names) != len(cells) or len(cells) < 2:
        return core
    return "; ".join(
        f"{name.strip()}: {cell.strip()}" for name, cell in zip(names, cells, strict=True)
    )


def _straddling(
    chunk: Chunk, rank: int, following: Following
) -> tuple[Chunk | None, list[Candidate]]:
    """The units that run from the end of `chunk` into the next chunk: when `chunk`
    stops at a lead-in's colon, or mid-sentence with the next going on in lower case
    (page furniture or the chunk size cut it there), and the next chunk of its
    section (`following`) follows after a gap, the units of the two texts joined
    that cross the boundary, as units of `chunk` whose text is both texts
    (`Candidate.cut` says where the next one starts); and the next chunk (None, and
    no units, where nothing runs on)."""
    tail = chunk.text.rstrip()
    if tail.endswith((".", "!", "?")):
        return None, []
    after = following(chunk)
    if after is None or after.section != chunk.section or after.start <= chunk.end:
        return None, []
    if ends_lead_in(tail):
        split = _LEAD_IN_SPLIT
    elif _RUNS_ON.match(after.text):
        split = _SENTENCE_SPLIT
    else:
        return None, []
    cut = len(chunk.text)
    joined = replace(chunk, text=chunk.text + split + after.text, end=after.end)
    units = [
        replace(c, cut=cut, split=split)
        for c in _unit_candidates(joined, rank, ())
        if c.start < cut and c.end > cut + len(split)
    ]
    return after, units


def candidates_of(
    sources: Sequence[Chunk], table_rows: TableRows | None, following: Following | None = None
) -> list[Candidate]:
    """The quotable units of `sources`, in order, each with its source's rank; with
    `following`, also the units that run into the next chunk (`_straddling`), which
    replace the pieces of them each chunk holds alone."""
    candidates: list[Candidate] = []
    covered: dict[str, list[tuple[int, int]]] = {}
    for rank, chunk in enumerate(sources):
        candidates += _unit_candidates(chunk, rank, table_rows(chunk) if table_rows else ())
        after, straddling = _straddling(chunk, rank, following) if following else (None, [])
        cut = len(chunk.text)
        for c in straddling:
            candidates.append(c)
            covered.setdefault(chunk.ref, []).append((c.start, cut))
            if after is not None:
                covered.setdefault(after.ref, []).append((0, c.end - cut - len(c.split)))
    return [
        c
        for c in candidates
        if c.cut is not None
        or not any(lo <= c.start and c.end <= hi for lo, hi in covered.get(c.chunk.ref, ()))
    ]


def quotable_first(
    hits: Sequence[Hit], table_rows: TableRows | None = None, following: Following | None = None
) -> list[Hit]:
    """`hits` in order, those whose chunk has no quotable unit (a table of contents,
    a page of headings; `table_rows` gives a chunk's table rows, `following` the next
    chunk, into which a unit may run) moved after the rest."""
    quotable = [
        bool(candidates_of([hit.chunk], table_rows))
        or (following is not None and bool(_straddling(hit.chunk, 0, following)[1]))
        for hit in hits
    ]  # the next chunk is read only for a chunk with no unit of its own
    return [hits[i] for i in sorted(range(len(hits)), key=lambda i: not quotable[i])]
