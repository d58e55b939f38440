"""Table rows among the units of an answer: which row a question names, and when a
table lists nothing the question names.

A row's key is its first cell when that is a short name ("Saturday", "Insurance report
(up to 2 pages)"): the cell that says what the row is about. Days are read as the days
they cover: "Monday to Friday" is also Wednesday and "weekdays", "Weekends" is also
Saturday and Sunday, so that a timetable's row answers a question in other words for
its days; and ranges of numbers as the numbers they cover: "9 to 12" is also the 10th
floor, "30-40 kg" also 35 kg.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from quoteproof.ingest.blocks import CELL_SEPARATOR
from quoteproof.llm.extractive_units import Candidate
from quoteproof.retrieval.key_terms import number_ranges, range_numbers
from quoteproof.retrieval.measures import MONEY, asked_measures
from quoteproof.terms import stem, stems, words

__all__ = ["KEY_WORDS", "named_rows", "unlisted_rows"]

KEY_WORDS = 6
"""A first cell of more words than this is no key (a checklist's item, a sentence)."""

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_NAME = (
    r"(mon(?:day)?|tue(?:s(?:day)?)?|wed(?:s|nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|"
    r"sat(?:urday)?|sun(?:day)?)\b"
)
_DAY = re.compile(
    rf"\b{_DAY_NAME}\.?(?:\s*(?:to|-|–|—|until|through|thru)\s*{_DAY_NAME}\.?)?|"
    r"\b(weekdays?|weekends?)\b",
    re.IGNORECASE,
)
"""A day ("Wed"), a range of days ("Monday to Friday", "Mon–Fri"), or "weekdays",
"weekends"."""
_SPANS = {"weekday": (0, 4), "weekend": (5, 6)}
_FULL_DAY = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b", re.IGNORECASE)
_CLOSED = re.compile(r"\b(?:closed|except|not|no)\b", re.IGNORECASE)
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
_MONEY_WORDS = frozenset(
    stem(w) for w in ("cost", "costs", "price", "prices", "fee", "fees", "charge", "charges",
                      "pay", "paid", "spend", "money", "dollars")
)  # fmt: skip
"""The words that ask for the sum itself, not for what it is the price of."""


def row_key(candidate: Candidate) -> str:
    """The first cell of a table row (`Candidate.table`) when it is a short name (at
    most KEY_WORDS words, with a letter); "" for any other unit."""
    if candidate.table is None or candidate.cut is not None:
        return ""
    text = candidate.quoted(candidate.start, candidate.end)
    first = text.split(CELL_SEPARATOR, 1)[0] if CELL_SEPARATOR in text else ""
    said = words(first)
    return first if said and len(said) <= KEY_WORDS and any(w.isalpha() for w in said) else ""


def _days(key: str) -> set[str]:
    """The stems of the days `key` (a key or a cell) covers, and of "weekday" or
    "weekend" for them."""
    covered: set[int] = set()
    for match in _DAY.finditer(key):
        first, last, named = match.groups()
        if named:
            low, high = _SPANS[named.lower().rstrip("s")]
        else:
            low = next(i for i, day in enumerate(_DAYS) if day[:3] == first.lower()[:3])
            high = low
            if last:
                high = next(i for i, day in enumerate(_DAYS) if day[:3] == last.lower()[:3])
        covered |= set(range(low, high + 1)) if low <= high else {*range(low, 7), *range(high + 1)}
    named_days = {_DAYS[i] for i in covered}
    if covered & set(range(0, 5)):
        named_days |= {"weekday"}
    if covered & {5, 6}:
        named_days |= {"weekend"}
    return {stem(day) for day in named_days}


def key_stems(key: str) -> set[str]:
    """The stems of a row's key, with the days (`_days`) and the numbers
    (`key_terms.range_numbers`) it covers."""
    return stems(key) | _days(key) | range_numbers(key)


def asked_stems(terms: set[str]) -> set[str]:
    """Question `terms` (stems) with each ordinal's number ("10th": "10"), as a row's
    key names it."""
    return terms | {m.group(1) for t in terms if (m := _ORDINAL.fullmatch(t))}


def _tables(candidates: Sequence[Candidate]) -> list[list[int]]:
    """The indices of the keyed rows (`row_key`) of each table among `candidates`."""
    tables: dict[tuple[str, int | None], list[int]] = {}
    for i, c in enumerate(candidates):
        if row_key(c):
            tables.setdefault((c.chunk.ref, c.table), []).append(i)
    return list(tables.values())


_DECIMAL = re.compile(r"(?<![\d.,])\d+\.\d+(?![\d.,])")
"""A number with a decimal point ("1.5"), which `words` splits in two."""
_WHOLE = re.compile(r"(?<![\d.,])\d+(?![\d.,])")
"""A whole number standing alone."""


def _covered(key: str, values: Sequence[float]) -> set[str]:
    """The `values` (as written "=1.5") that a range of `key` covers ("1 to 2")."""
    return {
        f"={value}" for low, high in number_ranges(key) for value in values if low <= value <= high
    }


def _cell_days(row: Candidate) -> set[str]:
    """The stems of the days that the cells of table `row` after the first name in full
    (`_FULL_DAY`: "Saturday", "Monday to Friday"; not "3 Sun Lane"), in cells that
    do not say the place is closed then ("Closed Sunday")."""
    cells = row.quoted(row.start, row.end).split(CELL_SEPARATOR)[1:]
    return {
        day
        for cell in cells
        if _FULL_DAY.search(cell) and not _CLOSED.search(cell)
        for day in _days(cell)
    }


def _row_stems(row: Candidate, values: Sequence[float]) -> set[str]:
    """What names table `row`: its key's stems (`key_stems`), the decimal `values` a
    range of its key covers, and the days its other cells name (`_cell_days`)."""
    key = row_key(row)
    return key_stems(key) | _covered(key, values) | _cell_days(row)


def named_rows(candidates: Sequence[Candidate], terms: set[str], question: str = "") -> np.ndarray:
    """For each candidate, 1.0 when it is a row whose key (`_row_stems`: with the
    decimal numbers of `question` a range of it covers, and the days its other cells
    name) holds question terms (`terms`, stems) other than the name of its table's
    first column ("clinic" does not name the row "Clinic 7" of a "Clinic" column)
    that not every keyed row of its table holds, and not only some of those another
    row holds (the row "Saturday | 09:00 | 17:30" of an opening-hours table, for
    "when does it close on Saturday?"; the row "9 to 12 | AP3" for "the 10th floor";
    the row "1 to 2 | Extend the interval" for "a trough of 1.5 mg/L", whose pieces
    "1" and "5" name no row; for "children aged 2 to 4 years", the row "2 to 4
    years", not "4 to 6 years" nor "3 to 6 months", which hold only the 4; for "a
    filling and a root canal", both rows); else 0.0."""
    named = np.zeros(len(candidates))
    decimals = _DECIMAL.findall(question)
    values = [float(number) for number in decimals]
    pieces = {piece for number in decimals for piece in number.split(".")}  # "1", "5"
    whole = set(_WHOLE.findall(question))
    asked = (asked_stems(terms) - (pieces - whole)) | {f"={value}" for value in values}
    for rows in _tables(candidates):
        key_column = stems(candidates[rows[0]].columns.split(CELL_SEPARATOR, 1)[0])
        held = [(_row_stems(candidates[i], values) & asked) - key_column for i in rows]
        shared = set.intersection(*held)
        own_terms = [own - shared for own in held]
        for i, own in zip(rows, own_terms, strict=True):
            outdone = any(own < other for other in own_terms)
            named[i] = float(bool(own) and not outdone and len(rows) > 1)
    return named


def unlisted_rows(
    question: str, candidates: Sequence[Candidate], terms: set[str], paths: Sequence[str]
) -> np.ndarray:
    """For each candidate, True when the question asks for a price
    (`measures.asked_measures`) and the candidate is a keyed row of a table that does
    not list what the question names, or lists it only apart. The terms asked of a
    table are the question's terms other than words for the sum ("cost", "fee") that
    neither the table's document title, section path (`paths`) nor column names carry.
    Not listed: no row's key carries any of them, nor any other cell ("a root canal"
    over a dental price list of other treatments: its rows give other treatments'
    prices). Listed apart: some of them stand in rows' other cells, and no row
    carries all of those with one of the asked keys ("Express delivery to the
    Republic of Ireland" over rows "Express | UK mainland" and "International |
    Republic of Ireland": neither is that price). False otherwise."""
    unlisted = np.zeros(len(candidates), dtype=bool)
    if MONEY not in asked_measures(question):
        return unlisted
    for rows in _tables(candidates):
        first = candidates[rows[0]]
        said = f"{first.chunk.label} {paths[rows[0]]} {first.columns}"
        asked = terms - stems(said) - _MONEY_WORDS
        row_keys = [key_stems(row_key(candidates[i])) for i in rows]
        keys = set().union(*row_keys)
        cells = [stems(candidates[i].quoted(candidates[i].start, candidates[i].end)) for i in rows]
        in_cells = (asked - keys) & set().union(*cells)
        wanted_keys = asked & keys
        if asked and not wanted_keys and not in_cells:
            unlisted[rows] = True  # not listed
        elif in_cells and not any(
            in_cells <= row and (not wanted_keys or wanted_keys & key)
            for row, key in zip(cells, row_keys, strict=True)
        ):
            unlisted[rows] = True  # listed apart
    return unlisted
