"""What form an answer to a question takes, and whether a passage has that form.

A question's type is read from its wording (pure rules, no model):

- `quantity`: how much / many / long / often / far / soon, dose, rate, duration,
  percentage, ratio, change ("how did X change"): the answer holds a number;
- `when`: when, at what time or stage: the answer holds a time or a condition
  ("before", "after", "within 72 hours", "upon hire", a date);
- `cause`: what causes, why, what leads to, risk factors: the answer states a
  cause ("because", "due to", "caused by", "leads to", "as a result");
- `definition`: "what is X?": the answer defines X ("X is...", "X are...", "X refers
  to...");
- `other`: anything else (which, who, yes/no questions); no form is expected.

`form_match(kind, text)` is True when `text` has the form `kind` asks for (always
False for `other`). The rules are shallow on purpose: a match only lifts a passage
a little among passages that already match the question's words and meaning.
"""

from __future__ import annotations

import re
from typing import Literal

AnswerKind = Literal["quantity", "when", "cause", "definition", "other"]

_QUANTITY_QUESTION = re.compile(
    r"\bhow (?:much|many|long|often|far|soon|frequently|fast|large|high|low)\b|"
    r"\b(?:dose|dosage|doses|dosing|rate|rates|duration|percent(?:age)?|ratio|"
    r"proportion|concentration|amount|number of|frequency|half-life|how did .{1,80} change)\b",
    re.IGNORECASE,
)
_WHEN_QUESTION = re.compile(r"^\s*when\b|\bat what (?:time|point|stage|age)\b", re.IGNORECASE)
_CAUSE_QUESTION = re.compile(
    r"\bwhy\b|\bwhat (?:causes?|leads? to|triggers?|makes?)\b|\bcaus(?:e|es|ed)\b|"
    r"\brisk factors?\b|\breasons?\b",
    re.IGNORECASE,
)

_DEFINITION_QUESTION = re.compile(
    r"^\s*what (?:is|are)(?: an?| the)? (?P<subject>[^?]{2,80}?)\s*\??\s*$", re.IGNORECASE
)
_NUMBER = re.compile(
    r"\d+(?:[.,]\d+)*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twice|half)\b"
)
_REFERENCE = re.compile(
    r"\b(?:Table|Figure|Fig\.|Section|Study|Reference ID:?|No\.|page|Chapter|Appendix)\s*"
    r"[\w.-]*\d[\w.-]*|\(\d+(?:\.\d+)*\)",
    re.IGNORECASE,
)
"""A number that names a place (a table, section or study number), not a quantity."""
_TIME = re.compile(
    r"\b(?:before|after|during|within|upon|until|prior to|following|as soon as|once|"
    r"when|whenever|immediately|daily|weekly|monthly|annually|yearly|every|each time|"
    r"at (?:least|the (?:start|end|time))|minutes?|hours?|days?|weeks?|months?|years?|"
    r"January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\b|\d{4}",
    re.IGNORECASE,
)
_CAUSE = re.compile(
    r"\b(?:because|due to|caused? by|causes?|causing|leads? to|led to|results? (?:in|from)|"
    r"as a result|owing to|since|therefore|thus|so that|triggers?|responsible for|"
    r"risk factors?|contributes? to|blocked|reason)\b",
    re.IGNORECASE,
)

_FORMS: dict[AnswerKind, re.Pattern[str]] = {"quantity": _NUMBER, "when": _TIME, "cause": _CAUSE}


def answer_kind(question: str) -> AnswerKind:
    """The form of answer `question` asks for (see the module docstring); the first
    of cause, when, quantity, definition that its wording names, else `other`."""
    if _CAUSE_QUESTION.search(question):
        return "cause"
    if _WHEN_QUESTION.search(question):
        return "when"
    if _QUANTITY_QUESTION.search(question):
        return "quantity"
    if _DEFINITION_QUESTION.search(question):
        return "definition"
    return "other"


def _defines(text: str, question: str) -> bool:
    """True when `text` says what the subject of "what is SUBJECT?" is."""
    asked = _DEFINITION_QUESTION.search(question)
    if asked is None:
        return False
    subject = re.escape(asked.group("subject")).replace("\\ ", r"\s+")
    pattern = rf"\b{subject}\s+(?:is|are|refers? to|means?|comprises?)\b"
    return re.search(pattern, text, re.IGNORECASE) is not None


def form_match(kind: AnswerKind, text: str, question: str = "") -> bool:
    """True when `text` has the form of answer `kind` (False for `other`); a match
    that `question` itself holds ("type 2" in "type 2 diabetes") does not count, nor
    does a number that names a table, section or study ("Table 11", "(2.2)")."""
    if kind == "definition":
        return _defines(text, question)
    pattern = _FORMS.get(kind)
    if pattern is None:
        return False
    asked = {m.group().lower() for m in pattern.finditer(question)}
    if kind == "quantity":
        text = _REFERENCE.sub(" ", text)
    return any(m.group().lower() not in asked for m in pattern.finditer(text))
