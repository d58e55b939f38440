"""Who a passage is about: the patient populations a text names (children, adults,
older adults, pregnancy, breastfeeding) and the working patterns of staff (full-time,
part-time), so that a question about one is not answered by a passage about another.

A drug label gives an adult dose and a pediatric dose in sentences that share every
other word; "What is the dose for children?" answered with "The recommended dosage
in adults is 400 mg" quotes the label truly and answers wrongly. A unit that names a
population, none of them the one asked about, is therefore no answer
(`about_another_population`). A unit that names no population is left alone: it may
hold for everyone, and its section heading ("Pediatric Use") is read with it. When
the retrieved sources name populations and never the one asked about, the question
is refused as a missing key term is (`missing_populations`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_POPULATIONS = {
    "children": re.compile(
        r"\b(?:child(?:ren|hood)?|p(?:a)?ediatrics?|infants?|infancy|neonat(?:es?|al)|"
        r"newborns?|adolescents?|adolescence|toddlers?|kids?|juveniles?)\b",
        re.IGNORECASE,
    ),
    "adults": re.compile(r"\badults?\b", re.IGNORECASE),
    "older adults": re.compile(
        r"\b(?:elderly|geriatrics?|older (?:adults|patients|people|persons|subjects))\b",
        re.IGNORECASE,
    ),
    "pregnancy": re.compile(r"\b(?:pregnan(?:t|cy|cies))\b", re.IGNORECASE),
    "breastfeeding": re.compile(
        r"\b(?:lactati(?:ng|on)|breast-?(?:feeding|fed|milk)|nursing mothers)\b", re.IGNORECASE
    ),
    "full-time": re.compile(
        r"\bfull[-\u2010\u2011 ]?time(?:rs?)?\b(?!\s+equivalents?)", re.IGNORECASE
    ),
    "part-time": re.compile(
        r"\bpart[-\u2010\u2011 ]?time(?:rs?)?\b(?!\s+equivalents?)", re.IGNORECASE
    ),
}
"""Each population and the words that name it ("older adults" names adults too). A
policy gives full-time staff's leave and part-time staff's in sentences as alike as a
label's adult and pediatric doses; "full-time equivalent" is a measure of staffing,
not a working pattern."""

_WORKING_PATTERNS = frozenset({"full-time", "part-time"})
_KINDS = (frozenset(_POPULATIONS) - _WORKING_PATTERNS, _WORKING_PATTERNS)
"""Populations are compared within a kind: a passage on full-time staff is about
another population than part-time staff, not than children."""


def populations(text: str) -> frozenset[str]:
    """The populations (keys of `_POPULATIONS`) that `text` names."""
    return frozenset(name for name, pattern in _POPULATIONS.items() if pattern.search(text))


def _unmatched(asked: frozenset[str], named: frozenset[str]) -> frozenset[str]:
    """The populations of `asked` in each kind where `named` names some population
    and none of those `asked` names."""
    return frozenset().union(
        *(
            asked & kind
            for kind in _KINDS
            if asked & kind and named & kind and not asked & named & kind
        )
    )


def about_another_population(asked: frozenset[str], text: str) -> bool:
    """Whether `text` names a population and none of those `asked` about (the
    `populations` of a question), of the same kind (patients, working patterns): False
    when the question names none, or `text` none of that kind."""
    return bool(_unmatched(asked, populations(text)))


def missing_populations(question: str, texts: Iterable[str]) -> tuple[str, ...]:
    """The words of `question` that name a population (as it writes them, lower-cased)
    when `texts` name some population of its kind and none of those the question asks
    about; () when the question names none, or `texts` name none of its kind (they may
    hold for everyone)."""
    named = frozenset().union(*(populations(text) for text in texts))
    missing = _unmatched(populations(question), named)
    found = (_POPULATIONS[name].search(question) for name in sorted(missing))
    return tuple(dict.fromkeys(match.group(0).lower() for match in found if match))
