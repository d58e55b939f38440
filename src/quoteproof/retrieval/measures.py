"""Measures a question asks for: an amount of money, a distance.

"How much does the program charge?" is not answered by a passage full of other
numbers (percentages, counts of participants, years): it wants a sum of money, and
"How many miles of sidewalk were built?" a distance. When a question asks for such a
measure and no retrieved source states one, the sources do not answer it whatever
else they share with it, and the question is refused for it as for a missing key
term (`missing_measures`).

A question asks for money only in so many words (`_ASKS_MONEY`): "how much money" or
"funding", "how many dollars", "how much does (did, will ...) X cost (pay, spend,
charge)" with the verb not followed by "of" ("how much does the cost of insulin
affect adherence?" is no question about a price), or "what is (was ...) the (total,
annual ...) cost (price, fee, charge, fine) of (for, per) X" or at the question's end ("the
fee structure", "the price elasticity" are none). "How much attention do parents pay",
"how much of the budget", "how much more do they spend" or "how much did spending
rise" ask for no sum: a share or a ratio answers them. A question asks for a distance
when "how many" is followed by a unit of length ("how many miles"; "how many square
feet" asks for an area and is not checked).

Stating a measure is read leniently, so that an answerable question is not refused:
any currency sign or name anywhere in the sources states money (a table headed "Cost
($)" states it for every row; "100 pounds" too, unless it weighs), as does a currency
code beside a number ("AUD 40"; "AUD" alone may be alcohol use disorder), and "is
free", "free of charge", "no cost", "no fee", "costs nothing", "no copay" (not "free
of particles", "smoke-free", "free to withdraw"); a number with a unit of length
states a distance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MONEY = "an amount of money"
DISTANCE = "a distance"

_AUX = r"(?:does|do|did|will|would|is|was|are|were|has|have|had|should|can|could|might|must)"
_ASKS_MONEY = re.compile(
    r"\bhow much (?:money|funding|cash)\b|\bhow many (?:[\w-]+ ){0,2}?(?:dollars|euros)\b|"
    rf"\bhow much {_AUX}\b[^?]*?"
    r"\b(?:cost|costs|pay|pays|paid|spend|spends|spent|charge|charges|charged|reimburse|"
    r"reimburses|reimbursed)\b(?!\s+of\b)|"
    r"\bwhat (?:is|was|are|were|would be|will be) the (?:[\w-]+ ){0,3}?"
    r"(?:cost|price|fee|charge|fine)(?:\s+(?:of|for|per|to)\b|\s*\?)",
    re.IGNORECASE,
)
_NOT_A_SUM = re.compile(
    r"\b(?:more|less|longer|shorter|higher|lower|greater|smaller|larger|ris(?:e|en|es)|rose|"
    r"increas\w*|decreas\w*|fell|fall(?:en|s)?|drop\w*|declin\w*|grew|grow\w*|chang\w*|"
    r"reduc\w*|(?<!-)time|hours|days|effort|attention)\b",
    re.IGNORECASE,
)
"""A question about a change, a difference or time spent ("how much more do they pay",
"how much did costs rise", "how much time do nurses spend"), which a share, a ratio or
a time answers."""
_STATES_MONEY = re.compile(
    r"\b(?:is|are|was|were|be|been)\s+(?:\w+\s+)?free\b(?!-|\s+(?:of|from|to)\b)|"
    r"[$€£¥₹¢]|\b(?:dollars?|euros?|pence|cents?|rupees?|yen)(?![\w])|"
    r"(?:\b(?:USD|US\$|EUR|GBP|INR|Rs\.|CHF|AUD|CAD)\s?\d|\d\s?(?:USD|EUR|GBP|INR|CHF|AUD|CAD)\b)|"
    r"\bfree of charge\b|\bfor free\b|\bwithout charge\b|\bcosts? nothing\b|"
    r"\bno[- ](?:cost|charge|fees?|co-?pay(?:ment)?s?)\b",
    re.IGNORECASE,
)
"""What states money: a currency sign or name, a currency code beside a number
("AUD 50"; "AUD" alone may be alcohol use disorder), or a word for no charge ("is
free", not "are free to withdraw")."""
_LENGTH_UNITS = r"miles?|mi|kilomet(?:er|re)s?|km|met(?:er|re)s?|feet|foot|ft|yards?|blocks?"
_ASKS_DISTANCE = re.compile(rf"\bhow many (?:{_LENGTH_UNITS})\b", re.IGNORECASE)
_STATES_DISTANCE = re.compile(
    rf"(?<![\d.,])\d[\d,]*(?:\.\d+)?[\s-]?(?:{_LENGTH_UNITS}|m)\b", re.IGNORECASE
)
"""A number with a unit of length (one that starts a run of digits: a long run is read
once, not from each of its digits)."""


_ANOTHER_QUESTION = re.compile(
    r"\b(?:and|or|also)\s+(?:what|how|when|where|who|whom|which|why|is|are|does|do|can)\b",
    re.IGNORECASE,
)
"""A question that asks something more ("What is the dose, and what is the price of one
vial?"): the sources may answer the rest, so no measure refuses it."""


def asked_measures(question: str) -> tuple[str, ...]:
    """The measures `question` asks for, named as a refusal says them (`MONEY`,
    `DISTANCE`); () for none, and for a question that asks something more
    (`_ANOTHER_QUESTION`)."""
    if _ANOTHER_QUESTION.search(question):
        return ()
    asked = []
    if _ASKS_MONEY.search(question) and not _NOT_A_SUM.search(question):
        asked.append(MONEY)
    if _ASKS_DISTANCE.search(question):
        asked.append(DISTANCE)
    return tuple(asked)


_POUNDS = re.compile(r"\b\d[\d,.]*\s+pounds?\b", re.IGNORECASE)
_WEIGHT_BEFORE = re.compile(
    r"\b(?:weigh\w*|lift\w*|los[et]|losing|gain\w*|carr(?:y|ies|ied|ying)|heav\w*)"
    r"(?:\s+[\w-]+){0,3}\s*$",
    re.IGNORECASE,
)
_WEIGHT_AFTER = re.compile(
    r"\s*(?:per\s+square|of\s+(?:body\s+)?weight|in\s+weight|psi|of\s+force)\b", re.IGNORECASE
)
WEIGHT_WINDOW = 40
"""How many characters before "100 pounds" are read for a word of weight."""


def _pounds_of_money(text: str) -> bool:
    """Whether `text` states a sum in pounds in words ("reduced to 60 pounds"), not a
    weight ("weighs about 100 pounds", "do not lift more than 10 pounds", "lost 10
    pounds", "10 pounds per square inch")."""
    return any(
        not _WEIGHT_BEFORE.search(text[max(0, m.start() - WEIGHT_WINDOW) : m.start()])
        and not _WEIGHT_AFTER.match(text, m.end())
        for m in _POUNDS.finditer(text)
    )


def states_measure(measure: str, text: str) -> bool:
    """Whether `text` states `measure` (a name `asked_measures` gives): any currency
    sign or name (pounds too, unless they weigh: `_pounds_of_money`), or a word for
    no charge, for money; a number with a unit of length for a distance."""
    if measure == MONEY:
        return _STATES_MONEY.search(text) is not None or _pounds_of_money(text)
    return _STATES_DISTANCE.search(text) is not None


def missing_measures(question: str, texts: Iterable[str]) -> tuple[str, ...]:
    """The measures `question` asks for (`asked_measures`) that none of `texts` states."""
    joined = "\n".join(texts)
    return tuple(m for m in asked_measures(question) if not states_measure(m, joined))
