"""Whether a generated sentence says only what the passages it cites say.

A model can cite a real passage and still invent its figures ("$25.25 per vial
[9cxdzv.4]"): the citation check passes and the sentence is wrong. This module
checks, without a model, the parts of a sentence whose change changes its meaning
most. Each *claim* of the sentence must be carried by its cited passages:

- numbers, by value and with the unit or currency written with them
  (`differs.NUMBER`, `differs.UNITS`): "2,5 ml" is "2.5 mL", "1,000" is "1000",
  "$25.25" needs 25.25 in dollars. A number of the sentence without a unit needs
  only its value. In the passages, a number without a unit also takes the unit of
  the number its range runs into ("5 to 10 days", "120/80 mmHg"). A number inside
  a code ("COVID-19") is checked as part of the code's name.
- dates ("22 October 2020", "October 22, 2020", "October 2020", "2020-10-22",
  "10/22/2020" read either way round): the passages must hold a date that agrees on
  every part the sentence's date gives; its numbers are not checked again.
- names: capitalised words that are not stopwords, inside the sentence or, when
  they are not general English (`key_terms.is_general`), at its start or right
  after an opening mark such as ":" or "("; all-capital words ("FDA", plural
  "ADRs"), codes of letters and digits ("CYP3A4") and drug names by their stem
  ("-vir", "-mab", ...). The passages must hold each, in any case; a name of four
  letters or more may have another ending (`key_terms.carries`).
- negation: a sentence that negates ("not", "no", "never", "without", "none",
  "n't": `differs.negations`) needs passages that negate something, with those
  words or with a word of negative meaning ("contraindicated", "avoid", "lack",
  "absent", "unable", "fail", "unknown", "discontinue", "stop", "exclude").

A retrieved passage is checked with its label (`chunk_passage`): the document title
names what the passage calls "it" or by its brand name. An agent's data results are
passages too (`data_passage`).

Contract: `unsupported(sentence, support_of(passages))` lists the claims of
`sentence` that `passages` do not carry, as the sentence writes them, and
`support_problem` turns them into the reason a sentence is removed
(`"$25.25" is not in [9cxdzv.4]`). A sentence that is a stretch of one of its
passages between two blanks is always supported. Text is compared after HTML
entities are unescaped and Unicode is NFKC-normalised. Pure functions; O(length
of the sentence and of the passages), each passage read once per process (cached).

What this does not catch: a meaning changed with the same numbers, names and
polarity ("before" for "after", "increases" for "decreases"); numbers written as
words ("five"); a negation the sentence drops, or one it adds to a clause when its
passages negate something else; numbers, names and dates each in the passages but
put together otherwise ("100 mg on day 1" from "200 mg on day 1 ... 100 mg from day
2"); claims made of lower-case ordinary words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Literal

from quoteproof.model import Chunk, DataResult
from quoteproof.quoting.differs import NUMBER, UNITS, negations, number_value
from quoteproof.quoting.normalize import normalize, unescape_entities
from quoteproof.retrieval.key_terms import carries, is_general
from quoteproof.terms import STOPWORDS, tokens, words

__all__ = [
    "Claim",
    "Support",
    "chunk_passage",
    "data_passage",
    "support_of",
    "support_problem",
    "unsupported",
]

ClaimKind = Literal["number", "date", "name", "negation"]

_CURRENCIES = {
    "$": "$",
    "us$": "$",
    "usd": "$",
    "dollar": "$",
    "dollars": "$",
    "€": "€",
    "eur": "€",
    "euro": "€",
    "euros": "€",
    "£": "£",
    "gbp": "£",
    "¥": "¥",
    "jpy": "¥",
    "yen": "¥",
}
_CURRENCY_BEFORE = re.compile(r"(?:US\$|[$€£¥])\s?\Z", re.IGNORECASE)
_UNIT_AFTER = re.compile(r"\s?-?\s?(%|[^\W\d_]+)")
_RANGE = re.compile(r"\s*(?:-|–|—|/|to|or|and)\s*", re.IGNORECASE)

_MONTH_FORMS = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sept", "sep"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)
_MONTHS = {form: number for number, forms in enumerate(_MONTH_FORMS, 1) for form in forms}
_MONTH_NAMES = {number: forms[0] for number, forms in enumerate(_MONTH_FORMS, 1)}
_MONTH = "(?P<month>{})\\.?".format(
    "|".join(
        form
        for name in sorted(_MONTHS, key=len, reverse=True)
        for form in (name.title(), name.upper())
    )
)
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?(?!\d)"
_YEAR = r"(?P<year>\d{4})(?!\d)"
_DATES = (
    re.compile(r"(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})(?!\d)"),
    re.compile(r"(?P<first>\d{1,2})/(?P<second>\d{1,2})/(?P<year>\d{4})(?!\d)"),
    re.compile(rf"{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?\b"),
    re.compile(rf"{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?\b"),
    re.compile(rf"{_MONTH},?\s+{_YEAR}"),
)
_WORD_START = re.compile(r"(?<!\w)\w")
_OPENING = frozenset(":;([{\"'“‘«.!?•*")

DRUG_STEMS = (
    "vir", "mab", "cillin", "mycin", "micin", "cycline", "oxacin", "azole", "pril",
    "sartan", "olol", "dipine", "statin", "nib", "parib", "ciclib", "lisib", "zomib",
    "coxib", "parin", "platin", "taxel", "tidine", "afil", "gliptin",
    "gliflozin", "glitazone", "lukast", "setron", "triptan", "semide", "thiazide",
    "dronate", "caine", "azepam", "zolam", "oxetine", "triptyline", "pramine",
    "profen", "fenac", "olone", "asone", "isone", "vudine", "formin", "kinra",
)  # fmt: skip
"""Endings of drug names (international nonproprietary name stems): a word ending
so is a name wherever it stands."""
SHORT_NAME = 3
"""Names this short must be in the passages as they are (no other ending)."""

_NEGATIVE_MEANING = re.compile(
    r"\b(?:contraindicat|avoid|lack|absen|unable|fail|unknown|discontinu|stop|exclud)\w*"
)


@dataclass(frozen=True)
class Claim:
    """One checkable part of a sentence: its kind and the words that make it."""

    kind: ClaimKind
    shown: str


Date = tuple[int | None, int | None, int | None]
"""(year, month, day); None for a part the date does not give."""


@dataclass(frozen=True)
class Support:
    """What passages say, in the respects a sentence is checked in: each number's
    value with each unit it takes (and with None), the dates, the lower-cased words
    (month names of the dates included), and whether they negate anything."""

    numbers: frozenset[tuple[Decimal | str, str | None]]
    dates: frozenset[Date]
    words: frozenset[str]
    negates: bool

    def __or__(self, other: Support) -> Support:
        return Support(
            self.numbers | other.numbers,
            self.dates | other.dates,
            self.words | other.words,
            self.negates or other.negates,
        )


@dataclass(frozen=True)
class _Number:
    value: Decimal | str
    unit: str | None
    start: int
    end: int
    shown: str


@dataclass(frozen=True)
class _DateMatch:
    readings: tuple[Date, ...]
    start: int
    end: int


def _prepared(text: str) -> str:
    return unicodedata.normalize("NFKC", unescape_entities(text))


def _unit(word: str) -> str | None:
    folded = word.casefold()
    return UNITS.get(folded) or _CURRENCIES.get(folded)


def _numbers(text: str, *, ranges: bool) -> list[_Number]:
    """The numbers of `text` in order, each with the unit or currency written with
    it; with `ranges`, a number without one takes the unit of the number its range
    runs into ("5 to 10 days")."""
    found: list[_Number] = []
    for m in NUMBER.finditer(text):
        start, end = m.span()
        shown_start, shown_end = start, end
        before = _CURRENCY_BEFORE.search(text, max(0, start - 4), start)
        after = _UNIT_AFTER.match(text, end)
        if before is not None:  # "$25.25", "US$ 25"
            unit, shown_start = _unit(before.group().strip()), before.start()
        elif after is not None and (unit := _unit(after.group(1))) is not None:
            shown_end = after.end()  # "200 mg", "25 USD"
        else:
            unit = None
        found.append(
            _Number(number_value(m.group()), unit, start, end, text[shown_start:shown_end])
        )
    for i in range(len(found) - 2, -1, -1) if ranges else ():
        this, next_ = found[i], found[i + 1]
        if this.unit is None and _RANGE.fullmatch(text, this.end, next_.start):
            found[i] = _Number(this.value, next_.unit, this.start, this.end, this.shown)
    return found


def _readings(m: re.Match[str]) -> tuple[Date, ...]:
    """The valid dates a date pattern's match can be read as."""
    groups = m.groupdict()
    year = int(groups["year"]) if groups.get("year") else None
    day = int(groups["day"]) if groups.get("day") else None
    if groups.get("first"):
        first, second = int(groups["first"]), int(groups["second"])
        candidates: list[Date] = [(year, first, second), (year, second, first)]
    else:
        month = groups["month"].rstrip(".")
        number = int(month) if month.isdigit() else _MONTHS[month.lower()]
        candidates = [(year, number, day)]
    return tuple(
        dict.fromkeys(
            date
            for date in candidates
            if date[1] is not None
            and 1 <= date[1] <= 12
            and (date[2] is None or 1 <= date[2] <= 31)
        )
    )


def _date_matches(text: str) -> Iterator[_DateMatch]:
    """Every date pattern's match at every word start of `text` (overlapping)."""
    for start in _WORD_START.finditer(text):
        for pattern in _DATES:
            m = pattern.match(text, start.start())
            if m is not None:
                readings = _readings(m)
                if readings:
                    yield _DateMatch(readings, m.start(), m.end())


def _sentence_dates(text: str) -> list[_DateMatch]:
    """The dates of a sentence: at each word start the longest match, left to right."""
    chosen: list[_DateMatch] = []
    for match in _date_matches(text):
        if chosen and match.start < chosen[-1].end:
            if match.start == chosen[-1].start and match.end > chosen[-1].end:
                chosen[-1] = match
            continue
        chosen.append(match)
    return chosen


def _negates(normalised: str) -> bool:
    return bool(negations(normalised)) or _NEGATIVE_MEANING.search(normalised) is not None


@lru_cache(maxsize=512)
def _passage_support(passage: str) -> Support:
    text = _prepared(passage)
    numbers: set[tuple[Decimal | str, str | None]] = set()
    for number in _numbers(text, ranges=True):
        numbers.update({(number.value, None), (number.value, number.unit)})
        after = _UNIT_AFTER.match(text, number.end)  # "US$ 2.5 mg": also 2.5 mg
        if after is not None and (unit := _unit(after.group(1))) is not None:
            numbers.add((number.value, unit))
    dates = {reading for match in _date_matches(text) for reading in match.readings}
    months = {_MONTH_NAMES[month] for _, month, _ in dates if month is not None}
    return Support(
        frozenset(numbers),
        frozenset(dates),
        frozenset(words(text)) | months,
        _negates(normalize(text)),
    )


def support_of(passages: Iterable[str]) -> Support:
    """Return what `passages` say, together (see `Support`)."""
    support = Support(frozenset(), frozenset(), frozenset(), False)
    for passage in passages:
        support |= _passage_support(passage)
    return support


def _is_name(word: str, opens: bool) -> bool:
    """Whether `word` (a token not starting with a digit) is a name: a code of
    letters and digits, an all-capital word, a drug name by its stem, or a
    capitalised word that is no stopword and either does not open the sentence or
    a clause (`opens`) or is not general English."""
    letters = [c for c in word if c.isalpha()]
    if not letters:
        return False
    lower = word.lower()
    if _unit(word) is not None:
        return False
    if any(c.isdigit() for c in word) or (len(lower) >= 6 and lower.endswith(DRUG_STEMS)):
        return True
    if len(letters) >= 2 and (word.isupper() or (word.endswith("s") and word[:-1].isupper())):
        return True
    if not word[0].isupper() or word == "I" or lower in STOPWORDS:
        return False
    return not opens or not is_general(lower)


def _opens(text: str, start: int) -> bool:
    """Whether the token at `start` opens the sentence or a clause (after ':', '(' ...)."""
    i = start - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return i < 0 or text[i] in _OPENING


def _carried(name: str, present: frozenset[str]) -> bool:
    """Whether `present` holds the name `name`, or, for a plural such as "ADRs", its
    singular."""
    forms = (
        [name, name[:-1]] if len(name) > 2 and name[-1] == "s" and name[:-1].isupper() else [name]
    )
    return any(
        lower in present or (len(lower) > SHORT_NAME and carries(present, lower))
        for lower in map(str.lower, forms)
    )


def _inside(start: int, spans: Sequence[_DateMatch]) -> bool:
    return any(span.start <= start < span.end for span in spans)


def unsupported(sentence: str, support: Support) -> list[Claim]:
    """Return the claims of `sentence` that `support` does not carry, in order:
    numbers (with their units), dates and names as the sentence writes them, then
    the sentence's first negation when the passages negate nothing."""
    text = _prepared(sentence)
    dates = _sentence_dates(text)
    claims: list[tuple[int, Claim]] = []
    for date in dates:
        if not any(_agrees(reading, support.dates) for reading in date.readings):
            claims.append((date.start, Claim("date", text[date.start : date.end])))
    for number in _numbers(text, ranges=False):
        if _inside(number.start, dates) or _in_code(text, number.start):
            continue
        if (number.value, number.unit) not in support.numbers:
            claims.append((number.start, Claim("number", number.shown)))
    for token in tokens(text):
        word = token.group()
        if word[0].isdigit() or _inside(token.start(), dates):
            continue
        if _is_name(word, _opens(text, token.start())) and not _carried(word, support.words):
            claims.append((token.start(), Claim("name", word)))
    found = [claim for _, claim in sorted(claims, key=lambda pair: pair[0])]
    said = negations(normalize(text))
    if said and not support.negates:
        found.append(Claim("negation", said[0]))
    return list(dict.fromkeys(found))


def _in_code(text: str, start: int) -> bool:
    """Whether the number at `start` is the end of a code: right after a letter, or
    after a letter and a hyphen ("B12", "COVID-19")."""
    before = text[max(0, start - 2) : start]
    return before[-1:].isalpha() or (before[-1:] == "-" and before[:1].isalpha())


def _agrees(date: Date, dates: frozenset[Date]) -> bool:
    """Whether some date of `dates` has every part that `date` gives."""
    return any(
        all(part is None or part == theirs for part, theirs in zip(date, other, strict=True))
        for other in dates
    )


def support_problem(sentence: str, refs: Sequence[str], passages: Sequence[str]) -> str | None:
    """Return why `sentence`, citing `refs` whose texts are `passages`, is not
    supported by them (None: it is): `"$25.25", "Amazon" are not in [9cxdzv.4]`,
    and for a negation `it says "not", but [9cxdzv.4] negates nothing`."""
    claims = unsupported(sentence, support_of(passages))
    if not claims:
        return None
    cited = "".join(f"[{ref}]" for ref in refs)
    shown = [f'"{claim.shown}"' for claim in claims if claim.kind != "negation"]
    parts = []
    if shown:
        parts.append(f"{', '.join(shown)} {'is' if len(shown) == 1 else 'are'} not in {cited}")
    parts += [
        f'it says "{claim.shown}", but {cited} negates nothing'
        for claim in claims
        if claim.kind == "negation"
    ]
    return "; ".join(parts)


def chunk_passage(chunk: Chunk) -> str:
    """The text a sentence citing `chunk` may rest on: its label (the document's
    title, where the label names "VEKLURY® (remdesivir)", its section path and page,
    all shown with the citation) and its text."""
    return f"{chunk.label}\n{chunk.text}"


def data_passage(result: DataResult) -> str:
    """The text of a data result that a sentence may rest on, one part a line: its
    table, filters, period, columns, row count, operation and value, preview cells."""
    parts = [result.table, *(f"{f.column} {f.op} {f.value}" for f in result.filters)]
    parts += [result.period or "", *result.columns, str(result.row_count)]
    if result.operation is not None:
        parts += [f"{result.operation} {result.column or ''}", str(result.value)]
    parts += [cell for row in result.rows for cell in row if cell is not None]
    return "\n".join(parts)
