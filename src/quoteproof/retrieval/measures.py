"""Measures a question asks for: an amount of money, a distance, a weight.

"How much does the program charge?" is not answered by a passage full of other
numbers (percentages, counts of participants, years): it wants a sum of money, and
"How many miles of sidewalk were built?" a distance. When a question asks for such a
measure and no retrieved source states one (a number with a currency or a unit of
that kind), the sources do not answer it whatever else they share with it, and the
question is refused for it as for a missing key term (`missing_measures`).

A question asks for money when it names money ("cost", "price", "fee", "pay",
"spend", "charge", "budget", "funding", "dollars", ...) and asks how much ("how
much", "how many dollars", "what was the cost of"). "How many people paid ..." asks
for a count, "How much time did nurses spend ..." for a time, and "How much did
spending rise?" or "How much more do they pay?" may be answered by a share or a
ratio: none of these is checked. A question asks for a distance or a weight when it
names the unit ("how many miles", "how many pounds"); "How far ..." (it may ask how
far along) and "How much weight did they lose?" (answered in percent as often) are
not checked. A source states money with a currency sign or word next to a number
("$25", "25 dollars", "USD 1.2 million") or says that something costs nothing
("free of charge", "at no cost").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_MONEY_WORD = re.compile(
    r"\b(?:costs?|costing|price[sd]?|pric(?:ing)|fees?|pa(?:y|ys|id|ying)|spen(?:d|ds|t|ding)|"
    r"charge[sd]?|charging|money|dollars?|budgets?|funding|expenditures?|reimburse(?:d|ment)?|"
    r"salar(?:y|ies)|wages?)(?![-\w])",
    re.IGNORECASE,
)
"""A word that names money ("cost", not "cost-effectiveness")."""
_NOT_A_SUM = re.compile(
    r"\bhow much (?:[\w-]+ ){0,2}?time\b|"
    r"\b(?:more|less|higher|lower|greater|smaller|larger|ris(?:e|en|es)|rose|increas\w*|"
    r"decreas\w*|fell|fall(?:en|s)?|drop\w*|declin\w*|grew|grow\w*|chang\w*|reduc\w*|"
    r"sav(?:e|ed|es|ing|ings))\b",
    re.IGNORECASE,
)
"""A question about time spent ("how much time did nurses spend"), or about a change or
a difference ("how much did spending rise", "how much more do they spend"), which a
share or a ratio answers as well as a sum of money."""
_HOW_MUCH = re.compile(
    r"\bhow much\b|"
    r"\bwhat (?:is|was|are|were|would be|will be) the (?:[\w-]+ ){0,3}?"
    r"(?:costs?|prices?|fees?|charges?|budgets?)\b",
    re.IGNORECASE,
)
_DOLLARS = re.compile(r"\bhow many (?:[\w-]+ ){0,2}?(?:dollars|euros)\b", re.IGNORECASE)
"""A question that asks for money in so many words, whatever else it says."""
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_MONEY = re.compile(
    rf"[$€£¥]\s?{_NUMBER}|\b(?:US\$|USD|EUR|GBP)\s?{_NUMBER}|"
    rf"{_NUMBER}(?:\s?(?:thousand|million|billion))?\s?(?:dollars?|USD|euros?|EUR|cents?|GBP)\b|"
    r"\bfree of charge\b|\bat no (?:extra |additional )?(?:cost|charge)\b|\bno[- ]cost\b|"
    r"\bwithout charge\b|\bcosts? nothing\b",
    re.IGNORECASE,
)

_UNITS = {
    "a distance": r"miles?|mi|kilomet(?:er|re)s?|km|met(?:er|re)s?|feet|foot|ft|yards?|blocks?",
    "a weight": r"pounds?|lbs?|kilo(?:gram)?s?|kg|ounces?|oz|stones?",
}
"""A measure's name (as a refusal names it) and its units."""


def _asks_unit(question: str, units: str) -> bool:
    """Whether `question` asks for a number of `units` ("how many miles", "how many
    more kilometers")."""
    asked = re.search(rf"\bhow (?:many|much)\s+(?:[\w-]+\s+)?(?:{units})\b", question, re.I)
    return asked is not None


def asked_measures(question: str) -> tuple[str, ...]:
    """The measures `question` asks for, named as a refusal says them ("an amount of
    money", "a distance", "a weight"); () for none."""
    asked = []
    money = _MONEY_WORD.search(question) and _HOW_MUCH.search(question)
    if (money and not _NOT_A_SUM.search(question)) or _DOLLARS.search(question):
        asked.append("an amount of money")
    asked += [name for name, units in _UNITS.items() if _asks_unit(question, units)]
    return tuple(asked)


def states_measure(measure: str, text: str) -> bool:
    """Whether `text` states `measure` (a name `asked_measures` gives): a sum of money,
    or a number with one of the measure's units."""
    if measure == "an amount of money":
        return _MONEY.search(text) is not None
    number_with_unit = rf"{_NUMBER}[\s-]?(?:{_UNITS[measure]})\b"
    return re.search(number_with_unit, text, re.IGNORECASE) is not None


def missing_measures(question: str, texts: Iterable[str]) -> tuple[str, ...]:
    """The measures `question` asks for (`asked_measures`) that none of `texts` states."""
    joined = "\n".join(texts)
    return tuple(m for m in asked_measures(question) if not states_measure(m, joined))
