"""The numbered quotable units of a source: what a model points at with
`<quote ref="REF" unit="N"/>` instead of copying words.

One definition serves the prompt (which marks each unit with its number), the grammar
(which allows only the numbers that exist) and the resolver (which maps a number back
to its unit's span of the stored chunk): `llm.quotable.pointable_units` over the
chunk's text and its table body rows, numbered from 1 in the order it returns them.
Only a unit's `start`/`end` (offsets into `Chunk.text`) are used here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from quoteproof.llm.quotable import Unit, pointable_units
from quoteproof.model import Chunk

__all__ = [
    "OfferedUnits",
    "SourceUnits",
    "TableRowLookup",
    "chunk_units",
    "offered_numbers",
    "source_units",
    "unit_at",
]

SourceUnits = Mapping[str, Sequence[Unit]]
"""The units of each source, by ref, in number order (unit N at index N - 1)."""

OfferedUnits = Mapping[str, Sequence[int]]
"""The numbers of the units a model is offered, by ref, best first: the sources in
the order of their best unit."""


class TableRowLookup(Protocol):
    """Where a chunk's table rows are read from (the store, through the resolver's
    `SourceLookup`)."""

    def table_rows(self, chunk: Chunk) -> Sequence[tuple[int, int]]:
        """Return the body rows of the tables in `chunk`, as spans of `chunk.text`,
        in order."""
        ...


def chunk_units(chunk: Chunk, lookup: TableRowLookup) -> list[Unit]:
    """Return the quotable units of `chunk`, unit N at index N - 1."""
    return pointable_units(chunk.text, lookup.table_rows(chunk))


def source_units(chunks: Sequence[Chunk], lookup: TableRowLookup) -> dict[str, list[Unit]]:
    """Return the units of each of `chunks`, by ref (see `chunk_units`)."""
    return {chunk.ref: chunk_units(chunk, lookup) for chunk in chunks}


def unit_at(units: Sequence[Unit], number: int) -> Unit | None:
    """Return unit `number` (1-based) of `units`, or None when there is no such unit."""
    return units[number - 1] if 1 <= number <= len(units) else None


def offered_numbers(
    units: SourceUnits, spans: Sequence[tuple[str, int, int]]
) -> dict[str, list[int]]:
    """Return the numbers of the units of `units` whose (ref, start, end) is one of
    `spans`, by ref, in the order of `spans` (a span that is no unit is left out)."""
    numbers: dict[str, list[int]] = {}
    for ref, start, end in spans:
        for number, unit in enumerate(units.get(ref, ()), start=1):
            if (unit.start, unit.end) == (start, end):
                numbers.setdefault(ref, []).append(number)
                break
    return numbers
