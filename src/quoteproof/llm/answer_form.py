"""What form an answer to a question takes, and whether a passage has that form.

A question's type is read from its wording (pure rules, no model):

- `quantity`: how much / many / long / far / fast / old / big / heavy / tall / wide /
  deep, dose, rate, duration, percentage, share, ratio, strength: the answer holds a
  number (not a year); for a dose or a strength, an amount of a drug ("200 mg"), for
  a duration ("how long"), a length of time ("10 days"), for a percentage,
  proportion or share, a share of a whole ("66.8%", "1 in 5"); for "how many X", a
  number that counts X ("36 PCORnet sites") is a specific form; a number that cites a
  paper's references ("(2,3)", "[4]") is none;
- `change`: how did (has, have) X change: the answer holds a number and says how it
  moved ("decreased", "rose", "fell", "doubled", "from ... to");
- `frequency`: how often / frequently: the answer holds a number or a frequency
  ("annually", "every", "daily", "upon hire");
- `when`: when, how soon (quickly, promptly), what time, date, month, year or
  period, at what time or stage: the answer holds a time or a condition ("before",
  "after", "within 72 hours", "immediately", a date, "the third calendar quarter");
  a day's date ("September 21, 2020", "21 September 2020", "2020-09-21",
  "9/21/2020"), a month with its year ("in April 2023") or a clock time ("5 p.m.",
  "17:30", not "1:50", a ratio) is a specific form, but for "how soon" or "how
  quickly" a delay is ("within one hour", "before 5 p.m.", "immediately"), and for
  "what year" or "which months" a year or a month ("in 2018", not "a 3-year time
  frame");
- `where`: where: the answer names a place, a region or kind of place ("southern
  states", "rural counties") or a name after "in", "at", "from" ("in Mississippi");
- `cause`: what causes, why, what leads to, risk factors, the reason (but "Does X
  cause Y?", "Is X a risk factor for Y?" are yes/no questions): the answer states a
  cause ("because", "due to", "caused by", "as a result", "the reason") or a purpose
  ("in order to", "to avoid"), or says that something causes or leads to what the
  question asks about (a word of the question after "causes", "leads to", "results
  in": "sleep apnea is a leading cause of sleepiness" does not say what causes sleep
  apnea);
- `list`: several things asked for by name ("Which enzymes does X inhibit?", "What
  are the symptoms of X?", "What are the five parts of X?"): the answer names them,
  items marked "1)", "(ii)", "•", or three or more in a row separated by commas or
  semicolons, the last after "and" or "or";
- `extreme`: the highest, lowest, largest ... of something ("Which region had the
  lowest incidence?"): the answer names the same superlative ("the lowest incidence
  was in the West"), a specific form;
- `definition`: "what is X?", "what does X mean?": the answer defines X ("X is...",
  "X are...", "X refers to...", or stands under a heading that names just X:
  `heading_names_subject`); "what counted as X?", "what experiences counted as X?",
  "how was X defined?", "how did they decide that someone had X?": the answer states
  the criterion ("defined as", "classified as having"), a specific form;
- `yes_no`: a question that opens with a verb ("Can ...", "Do ...", "Should I ...",
  "Is ...", also after a clause: "After X, should I ...", but not after a wh-word):
  the answer is the statement itself, a rule that says what may, must or must not be
  done ("not", "should", "required", "only") or a finding that says what was found
  or shown ("found", "indicate", "increased", "reduced");
- `who`: who, whom, whose: the answer names someone: an honorific ("Mr.", "Dr.",
  "Justice", "Esq."), or two or more capitalised words in a row past the start of a
  sentence ("Jane Doe", "JOHN P. ELWOOD", "Food and Drug Administration");
- `other`: anything else (which, what ... without a form above); no form is expected.

`form_match(kind, text)` is True when `text` has the form `kind` asks for (always
False for `other`). The rules are shallow on purpose: a match only lifts a passage
a little among passages that already match the question's words and meaning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Literal

from quoteproof.retrieval.measures import MONEY, asked_measures, missing_measures
from quoteproof.terms import STOPWORDS, query_stems, stem, stems, words

AnswerKind = Literal[
    "quantity",
    "change",
    "frequency",
    "when",
    "where",
    "cause",
    "who",
    "definition",
    "yes_no",
    "list",
    "extreme",
    "other",
]

_QUANTITY_QUESTION = re.compile(
    r"\bhow (?:much|many|long|far|fast|large|high|low|old|big|heavy|tall|wide|deep)\b|"
    r"\b(?:dose|dosage|doses|dosing|strengths?|rate|rates|duration|percent(?:age)?|ratio|"
    r"proportion|fraction|concentration|amount|number of|half-life)\b|\bshare of\b",
    re.IGNORECASE,
)
_CHANGE_QUESTION = re.compile(
    r"\bhow (?:did|has|have|does|do) .{1,80} chang(?:e|ed)\b", re.IGNORECASE
)
_FREQUENCY_QUESTION = re.compile(r"\bhow (?:often|frequently)\b|\bfrequency\b", re.IGNORECASE)
_SOON_QUESTION = re.compile(r"\bhow (?:soon|quickly|promptly)\b", re.IGNORECASE)
"""A time asked as a delay after an event ("How quickly must I report it?"): its
answer is a delay ("within one hour")."""
_WHEN_QUESTION = re.compile(
    rf"^\s*when\b|{_SOON_QUESTION.pattern}|\bat what (?:time|point|stage|age)\b|"
    r"^\s*(?:[^?]*?[.,]\s+)?(?:(?:by|until|till|on|from|in|over|during|between) )?"
    r"(?:what|which) (?:time\b(?! zones?\b)|dates?\b(?! formats?\b)|day of the week|"
    r"months?\b|(?:time )?period\b|time ?frame\b|"
    r"years?\b(?! (?:groups?|olds?|levels?|of study)\b))",
    re.IGNORECASE,
)
_YES_NO_QUESTION = re.compile(
    r"^\s*(?:[^?]*?[.,]\s+)?"
    r"(?:can|could|do|does|did|is|are|was|were|should|must|may|might|will|would|has|have)\b",
    re.IGNORECASE,
)
_WHO_QUESTION = re.compile(r"^\s*(?:[^?]*?[.,]\s+)?(?:who|whom|whose)\b", re.IGNORECASE)
_WH_WORD = re.compile(r"\b(?:what|which|who|whom|whose|how|when|where|why)\b", re.IGNORECASE)
_CAUSE_QUESTION = re.compile(
    r"\bwhy\b|\bwhat (?:causes?|leads? to|triggers?|makes?)\b|\bcaus(?:e|es|ed)\b|"
    r"\brisk factors?\b|\breasons?\b",
    re.IGNORECASE,
)
_COUNT_QUESTION = re.compile(r"\s*how (?:many|much)\b(?![^?]*\bwhy\b)", re.IGNORECASE)
"""A question for a count or an amount, whatever caused it ("How many fires have the
kettles caused?"), not one that also asks why."""
_EFFECT_QUESTION = re.compile(
    r"^\s*(?:what|which)\b[^?]*?\b(?:can|could|does|do|did|may|might|will|would)\b"
    r"[^?]*?\bcause\s*(?:\?|$|(?:in|for|to|with|after|during|among|when|if|at|over)\b)|"
    r"^\s*(?:what|which)\b[^?]*?\b(?:is|are|was|were|can be|may be)\s+caused by\b",
    re.IGNORECASE,
)
"""A question about what something causes, its effects: "What side effects can this
medicine cause (in dogs)?", "Which cases are caused by diabetes?"; "cause" with no
object after it. "What can (sometimes) cause chest pain?" names what is caused, and
asks for a cause."""

_DEFINITION_QUESTION = re.compile(
    r"^\s*what (?:is|are)(?: an?| the)? (?P<subject>[^?]{2,80}?)\s*\??\s*$|"
    r"^\s*what (?:does|do)(?: an?| the)?(?: terms?| words?| abbreviations?| acronyms?)? "
    r"(?!(?:it|this|that|these|those|you|they|we|he|she|i)\b)(?P<term>[^?]{2,80}?) "
    r"(?:mean|stand for)(?: by (?:an? |the )?(?P<by>[^?]{2,80}?))?\s*(?:\?|$|\b(?=in\b))",
    re.IGNORECASE,
)
"""A question about what something is: "What is X?", "What does (the term) X mean
(in Y)?" (not "What does it mean ...?"), "What does the policy mean by X?"."""
_CRITERION_QUESTION = re.compile(
    r"\bwhat (?:[\w-]+ ){0,2}?(?:counted|counts|qualified|qualifies|was considered|is considered) "
    r"as\b|"
    r"\bhow (?:was|were|is|are) .{1,80}? defined\b|\bdefinition of\b|"
    r"\bhow did .{1,80}? (?:decide|determine|classify|define)\b",
    re.IGNORECASE,
)
"""A question about what makes something count as what it names ("What counted as
uncontrolled asthma?", "How was obesity defined?")."""
_CRITERION = re.compile(
    r"\b(?:defined|classified|categorized|considered|counted|identified|designated)"
    r"(?:\s+\S+){0,3}?\s+as\b|\bdefin(?:ed|ition)\b|\brefers? to\b",
    re.IGNORECASE,
)
"""A sentence that states a definition or a criterion ("X was defined as ...",
"were classified as having ...")."""
_NUMBER = re.compile(
    r"\d+(?:[.,]\d+)*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twice|half)\b"
)
_DOSE_QUESTION = re.compile(r"\b(?:dose|doses|dosage|dosing|strengths?)\b", re.IGNORECASE)
_DURATION_QUESTION = re.compile(r"\bhow long\b|\bduration\b", re.IGNORECASE)
_SHARE_QUESTION = re.compile(
    r"\b(?:percent(?:age)?|proportion|fraction|share of)\b|\bhow many (?:of|in) (?:every|each)\b",
    re.IGNORECASE,
)
_WHERE_QUESTION = re.compile(r"^\s*(?:[^?]*?[.,]\s+)?where\b", re.IGNORECASE)
_AMOUNT = r"(?:\d+(?:[.,]\d+)*|one|two|three|four|five|six|seven|eight|nine|ten|twelve)"
_DOSE = re.compile(rf"\b{_AMOUNT}\s*(?:mg|mcg|µg|μg|g|mL|L|units?|IU|mEq|mmol)\b", re.IGNORECASE)
"""An amount of a drug: a number with a unit of mass, volume or activity ("200 mg",
"5 mL", "10 units"; "40 kg" is a body weight, not a dose)."""
_DURATION = re.compile(
    rf"\b{_AMOUNT}(?:\s*(?:to|-|–|or)\s*{_AMOUNT})?\s*"
    r"(?:(?:calendar|working|business|clock|school|consecutive|full)\s+)?"
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|weeks?|months?|years?)\b",
    re.IGNORECASE,
)
"""A length of time: a number (or a range) with a unit of time ("10 days", "30 to
120 minutes", "30 calendar days", "4 business hours")."""
_SHARE = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:%|percent\b|per cent\b)(?!\s*(?:CI\b|confidence\b))|"
    rf"\b{_AMOUNT} (?:in|of|out of) (?:every )?{_AMOUNT}\b|\b(?:half|a third|a quarter)\b",
    re.IGNORECASE,
)
"""A share of a whole: a percentage ("66.8%", "25 percent"; "95% CI" is a confidence
level), "1 in 5", "half"."""
_PLACE = re.compile(
    r"\b(?:(?:north|south|east|west)(?:ern|east|west)?(?:ern)?|central|midwest(?:ern)?|"
    r"rural|urban|region|county|counties|state|states|province|city|country|countries|"
    r"nationwide|abroad)\b|(?<![.!?:]\s)(?<!^)\b(?:in|at|from|across|near) [A-Z][a-z]+",
    re.IGNORECASE,
)
"""A place: a region or kind of place ("southern states", "rural counties"), or a
capitalised name after "in", "at", "from" ("in Mississippi")."""
_LIST_QUESTION = re.compile(
    r"^\s*(?:[^?]*?[.,]\s+)?(?:"
    r"what (?:are|were) the (?:[\w-]+ ){0,4}?[\w-]+[^\Wsu]s"
    r"(?: (?:of|for|in|on|to|that|used|at|with|from|by)\b|\s*\??\s*$)|"
    r"(?:which|what) (?:[\w-]+ (?:and )?){0,4}?[\w-]+[^\Wsu]s "
    r"(?:do|does|did|are|were|have|has|had|can|could|should|must|may|might|will|would)\b)",
    re.IGNORECASE,
)
"""A question that asks for several things: "What are the symptoms of X?" (a plural
after "what are the"), "Which enzymes does X inhibit?" (a plural after "which" or
"what", then a verb that opens a question)."""
_ITEM_MARK = re.compile(r"(?:^|\s)(?:\(?(?:[ivx]{1,4}|\d{1,2}|[a-h])\)|\d{1,2}\.\s|[•▪●◦‣·]\s)")
_SERIES = re.compile(r"(?:[^,;:.]{1,60}[,;]\s+){2}(?:and|or)\s")
"""Several things named in a row: items marked "1)", "(ii)", "•", or three or more
separated by commas or semicolons, the last after "and" or "or"."""
_EXTREME = re.compile(
    r"\b(?:highest|lowest|largest|smallest|greatest|fewest|fastest|slowest|biggest|"
    r"strongest|weakest|longest|shortest|earliest|best|worst)\b",
    re.IGNORECASE,
)
"""A superlative: what a question for the extreme of something names, and its answer
repeats ("Which region had the lowest incidence?": "the lowest incidence was in the
West")."""
_REFERENCE = re.compile(
    r"\b(?:Table|Figure|Fig\.|Section|Study|Reference ID:?|No\.|page|Chapter|Appendix)\s*"
    r"[\w.-]*\d[\w.-]*|\(\d+(?:\.\d+)*\)|"
    r"(?<=[A-Za-z.,;:%)]\s)[(\[]\d{1,3}(?:\s*[,;–-]\s*\d{1,3})*[)\]](?=[.,;:]|\s*$)",
    re.IGNORECASE,
)
"""A number that names a place (a table, section or study number) or cites the
numbered references of a paper ("barriers (2,3).", "(13–15),", "[4]." after a word
and before a stop, a comma or the end; "a scale (0–10) of" is a range), not a
quantity."""
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b(?![.,]\d)")
"""A year: a time ("when"), not a quantity."""
_TIME = re.compile(
    r"\b(?:before|after|during|within|upon|until|prior to|following|as soon as|once|"
    r"when|whenever|immediately|daily|weekly|monthly|annually|yearly|every|each time|"
    r"at (?:least|the (?:start|end|time))|minutes?|hours?|days?|weeks?|months?|years?|"
    r"January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\b|\d{4}|\b(?:[01]\d|2[0-3]):[0-5]\d\b|"
    r"\b\d{1,2}(?::\d{2})?\s*(?:a\.m\.|p\.m\.|am\b|pm\b)|"
    r"\b(?:first|second|third|fourth|last|final|1st|2nd|3rd|4th)(?:\s+(?:and|or|to)\s+\w+)?"
    r"\s+(?:(?:calendar|fiscal|financial)\s+quarters?\b|quarters?\s+of\s+(?:(?:19|20)\d\d|"
    r"the\s+(?:calendar\s+|fiscal\s+|financial\s+)?year)\b)",
    re.IGNORECASE,
)
"""A time or a condition of one: the form of an answer to "when" ("before", "within
72 hours", "in March", "2015", "5 p.m.", "the third calendar quarter")."""
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DAY_OR_HOUR = re.compile(
    rf"\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b|"
    rf"\b\d{{1,2}}\s+{_MONTH}\s+\d{{4}}\b|"
    rf"\b(?-i:{_MONTH})\s+\d{{4}}\b|"
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|"
    r"\b\d{1,2}(?::\d{2})?\s*(?:a\.m\.|p\.m\.|am\b|pm\b)|"
    r"\b(?:[01]\d|2[0-3]):[0-5]\d\b(?!:\d)"
)
"""A day's date, a month with its year ("in April 2023") or a clock time: the specific
form of a time ("when"), which few sentences hold by chance."""
_PERIOD_QUESTION = re.compile(
    r"\b(?:what|which) (?:years?|months?)\b(?! (?:groups?|olds?|levels?|of study)\b)",
    re.IGNORECASE,
)
"""A time asked as a year or a month ("In what year did ...?", "During which months
...?"): its answer names one."""
_YEAR_OR_MONTH = re.compile(
    rf"{_DAY_OR_HOUR.pattern}|{_YEAR.pattern}|"
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\b"
)
"""A year or a month's name (or a day's date, or a clock time): the specific form of
a time asked as a year or a month (not "a 3-year time frame")."""
_DELAY = re.compile(
    rf"\b(?:within|in|after|no later than|up to|at least|at most)\s+(?:{_DURATION.pattern})|"
    rf"\b(?:by|before|no later than|until)\s+(?:the\s+)?(?:{_DAY_OR_HOUR.pattern})|"
    r"\b(?:immediately|at once|straight away|right away|without delay|as soon as possible)\b",
    re.IGNORECASE,
)
"""A delay after an event: a length of time after "within", "in", "after" ("within one
hour", not "every 3 months"), a deadline ("before 5 p.m.", "by 30 June 2024", not
the opening hours "(08:00 to 16:00)"), or none ("immediately")."""
_FREQUENCY = re.compile(
    r"\d+(?:[.,]\d+)*|\b(?:once|twice|daily|weekly|monthly|annually|yearly|hourly|every|"
    r"each|per|upon|regularly|periodic(?:ally)?|times)\b",
    re.IGNORECASE,
)
_MOVED = re.compile(
    r"\b(?:increas|decreas|declin|rose|risen|rise|fell|fall|dropp|drop|grew|grow|reduc|"
    r"doubl|tripl|halv|chang|from\b.{1,60}\bto\b)",
    re.IGNORECASE,
)
"""Words that say how an amount moved (with a number: the form of a change)."""
_STATEMENT = re.compile(
    r"\b(?:not|no|never|nor|cannot|should|must|shall|may|can|only|required|requires?|"
    r"recommended|avoid|allowed|permitted|contraindicated|suitable|safe|unsafe|"
    r"found|findings?|showed|shows|indicated?|indicates|suggests?|suggested|demonstrated|"
    r"increased|decreased|reduced|improved|associated)\b|n't\b",
    re.IGNORECASE,
)
"""A rule (what may, must or must not be done) or a finding (what was found, shown,
increased or reduced): what a yes/no question is answered by."""
_NAME = re.compile(
    r"\b(?:Mr|Mrs|Ms|Dr|Prof|Justice|Judge|Esq|Hon)\b\.?|"
    r"(?<![.!?:]\s)(?<!^)\b[A-Z][A-Za-z'-]*\.?(?:\s+(?:of|and|for|the|[A-Z]\.))*"
    r"\s+[A-Z][A-Za-z'-]+"
)
"""Someone named: an honorific, or capitalised words in a row that do not start the
text or a sentence (a name, an agency)."""
_CAUSE = re.compile(
    r"\b(?:because|due to|caused by|results? from|"
    r"as a result|owing to|since|therefore|thus|so that|"
    r"risk factors?|blocked|reason|(?:in order|so as) to|to (?:avoid|ensure|allow))\b",
    re.IGNORECASE,
)
"""A cause named before what it explains ("X happens because ...", "due to")."""
_EFFECT = re.compile(
    r"\b(?:causes?|causing|leads? to|led to|results? in|triggers?|responsible for|"
    r"contributes? to)\b",
    re.IGNORECASE,
)
"""A cause named before its effect ("smoking causes cancer"): the form of an answer
only when the effect after it is what the question asks about."""

NEAR_WORDS = 10
_NEAR_KINDS = frozenset({"quantity", "frequency", "when", "who", "where"})

_FORMS: dict[AnswerKind, re.Pattern[str]] = {
    "quantity": _NUMBER,
    "frequency": _FREQUENCY,
    "when": _TIME,
    "cause": _CAUSE,
    "yes_no": _STATEMENT,
    "who": _NAME,
    "where": _PLACE,
}


def _opens_with_verb(question: str) -> bool:
    """True when `question` opens with a verb (also after a clause), not after a
    wh-word: a yes/no question."""
    opening = _YES_NO_QUESTION.search(question)
    return opening is not None and not _WH_WORD.search(opening.group())


def _asks_definition(question: str) -> bool:
    """True when `question` asks what something is ("What is X?", "What does X
    mean?") or what counts as it (`_CRITERION_QUESTION`)."""
    return bool(_definition_subject(question) or _CRITERION_QUESTION.search(question))


def _definition_subject(question: str) -> str | None:
    """What "What is X?" or "What does X mean?" asks about (X); None for another
    question."""
    asked = _DEFINITION_QUESTION.search(question)
    if asked is None:
        return None
    return asked.group("subject") or asked.group("by") or asked.group("term")


def _asks_cause(question: str) -> bool:
    """True when `question` asks for a cause ("why", "what causes", risk factors),
    not whether something causes something (a yes/no question: "Does X cause Y?")
    nor what it causes (`_EFFECT_QUESTION`: "What side effects can it cause?") or how
    much of it (`_COUNT_QUESTION`: "How many fires have the kettles caused?")."""
    return (
        _CAUSE_QUESTION.search(question) is not None
        and not _opens_with_verb(question)
        and _EFFECT_QUESTION.search(question) is None
        and _COUNT_QUESTION.match(question) is None
    )


_ASKS: tuple[tuple[AnswerKind, Callable[[str], object]], ...] = (
    ("cause", _asks_cause),
    ("who", _WHO_QUESTION.search),
    ("when", _WHEN_QUESTION.search),
    ("frequency", _FREQUENCY_QUESTION.search),
    ("where", _WHERE_QUESTION.search),
    ("yes_no", _opens_with_verb),
    ("change", _CHANGE_QUESTION.search),
    ("extreme", _EXTREME.search),
    ("quantity", _QUANTITY_QUESTION.search),
    ("list", _LIST_QUESTION.search),
    ("definition", _asks_definition),
)
"""Each form a question's wording can name, with the test that finds it (true when
it does), in the order `answer_kind` tries them."""


def answer_kind(question: str) -> AnswerKind:
    """The form of answer `question` asks for (see the module docstring): the first
    form of `_ASKS` (cause, who, when, frequency, where, yes/no, change, extreme,
    quantity, list, definition) that its wording names, else `other`."""
    return next((kind for kind, asks in _ASKS if asks(question)), "other")


_NUMBERING = re.compile(
    r"^\s*(?:(?:section|part|chapter|article)\s+)?(?:\d+(?:\.\d+)*|[ivxlc]{1,6}|[a-z])[.):]?\s+",
    re.IGNORECASE,
)
"""A heading's number ("2.", "4.2", "IV.", "Section 4:", "b)"): no part of its name."""


def heading_names_subject(question: str, heading: str) -> bool:
    """True when `question` asks what something is ("What is an incident
    commander?") and `heading` names just that, set aside its numbering, articles and
    question words ("Incident commander", a glossary's term over its definition;
    "What Is Sleep Apnea?"): the text under such a heading says what it is."""
    subject = _subject_stems(question)
    return bool(subject) and query_stems(_NUMBERING.sub("", heading)) == subject


@lru_cache(maxsize=64)
def _subject_stems(question: str) -> frozenset[str]:
    """The stems of what a definition question asks about (`_definition_subject`);
    empty for a question of another kind. Read once per question, not per passage."""
    asked = _definition_subject(question)
    if asked is None or answer_kind(question) != "definition":
        return frozenset()
    return frozenset(query_stems(asked))


def _defines(text: str, question: str) -> bool:
    """True when `text` says what the subject of "What is SUBJECT?" (or "What does
    SUBJECT mean?") is: "SUBJECT is ...", "SUBJECT refers to ..."."""
    asked = _definition_subject(question)
    if asked is None:
        return False
    subject = re.escape(asked).replace("\\ ", r"\s+")
    pattern = rf"\b{subject}\s+(?:is|are|refers? to|means?|comprises?)\b"
    return re.search(pattern, text, re.IGNORECASE) is not None


def _causes_what_is_asked(text: str, question: str) -> bool:
    """True when `text` says something causes (leads to, results in) what `question`
    asks about: a word of the question follows the connective in the same sentence
    ("obesity leads to sleep apnea"), not only before it ("sleep apnea is a leading
    cause of sleepiness" answers what sleep apnea causes, not what causes it)."""
    asked = query_stems(question)
    for found in _EFFECT.finditer(text):
        after = re.split(r"[.!?;]", text[found.end() :], maxsplit=1)[0]
        if asked & stems(after):
            return True
    return False


def _near_asked(text: str, start: int, end: int, asked: set[str]) -> bool:
    """True when a word of `text` whose stem is in `asked` stands within NEAR_WORDS
    words of the span `start`-`end`, or when `text` has no such word (nothing to be
    near: it matched the question by meaning)."""
    present = [
        m for m in re.finditer(r"[A-Za-z][A-Za-z'-]*", text) if stem(m.group().lower()) in asked
    ]
    gaps = (text[m.end() : start] if m.end() <= start else text[end : m.start()] for m in present)
    return not present or any(len(words(gap)) <= NEAR_WORDS for gap in gaps)


_COUNT_QUESTION = re.compile(
    r"\bhow many\s+(?:(?:of|the|different|separate|distinct|total)\s+)*"
    r"((?:[A-Za-z][\w'-]*\s+){0,2}[A-Za-z][\w'-]*)",
    re.IGNORECASE,
)
PLURALS = frozenset({"people", "children", "men", "women", "staff", "data", "personnel"})
"""Plural nouns that do not end in "s": what "how many" may count."""
COUNTED_GAP = 3
"""Words at most between a number and what it counts ("46 telephone and Zoom calls")."""
_COUNT = re.compile(rf"\b{_AMOUNT}\b(?![.,]?\d)", re.IGNORECASE)
"""A number, in digits or words ("36", "1,000", "Ten"): what may count something."""


def _without_places(text: str) -> str:
    """`text` with the numbers that name a place or cite references (`_REFERENCE`)
    and the years blanked: what is left may count or measure something."""
    return _YEAR.sub(" ", _REFERENCE.sub(" ", text))


@lru_cache(maxsize=64)
def _counted(question: str) -> frozenset[str]:
    """The stems of what "how many X ...?" counts: up to three words after "how many"
    (set aside "of the" and a function word before them), up to the next function
    word or the first plural noun (not a word in capitals: "US states")
    ("pcornet" and "sit" for "How many PCORnet sites ran the queries?", "comment" for
    "How many comments came?": the verb after the noun is no part of it); empty for
    another question."""
    asked = _COUNT_QUESTION.search(question)
    if asked is None:
        return frozenset()
    counted: list[str] = []
    for token in re.findall(r"[A-Za-z][\w'-]*", asked.group(1)):
        word = token.lower()
        if word in STOPWORDS:
            if counted:
                break
            continue  # "how many of these sites"
        counted.append(stem(word))
        if (word.endswith("s") and not token.isupper()) or word in PLURALS:
            break  # "US states" runs on past "US"
    return frozenset(counted)


def _counts_asked(question: str, text: str) -> bool:
    """True when `text` gives a count of what "how many X?" counts: a number (not a
    year, nor a reference's) followed, at most COUNTED_GAP words later, by a word of X
    ("Both queries were performed by 36 PCORnet sites" for "How many sites ran the
    queries?"; "N = 30,783,825 patients" counts something else)."""
    counted = _counted(question)
    if not counted:
        return False
    text = _without_places(text)
    for number in _COUNT.finditer(text):
        following = words(text[number.end() :])[: COUNTED_GAP + 1]
        if any(stem(word) in counted for word in following):
            return True
    return False


def _quantity_form(question: str) -> re.Pattern[str]:
    """What a number answering the quantity `question` looks like: an amount of a
    drug for a dose, a length of time for a duration, a share of a whole for a
    percentage or proportion, else any number."""
    if _DOSE_QUESTION.search(question):
        return _DOSE
    if _DURATION_QUESTION.search(question):
        return _DURATION
    if _SHARE_QUESTION.search(question):
        return _SHARE
    return _NUMBER


def specific_form(question: str, text: str = "") -> bool:
    """True when the form `question` asks for is one few sentences have by chance:
    a cause (a causal connective, or a cause of what is asked), a dose (a number with
    a drug unit), a duration (a number with a unit of time), a share (a percentage),
    a criterion ("defined as"), an extreme ("the lowest") or, for "how many X", a
    count of X in `text` (`_counts_asked`); False for a bare number,
    a time, a name or a statement, which most sentences of technical text hold. For a
    time ("when"), also True when `text` holds a day's date, a month with its year or a
    clock time, which few sentences hold by chance ("by September 21, 2020", "in
    April 2023"; "before acting" is a time of any sentence); for "how soon" or "how
    quickly", a delay instead ("within one hour", "before 5 p.m.", "immediately"),
    for "what year" or "which months" a year or a month (`_time_form`)."""
    kind = answer_kind(question)
    return (
        kind in ("cause", "extreme")
        or (kind == "quantity" and _quantity_form(question) is not _NUMBER)
        or (kind == "quantity" and _counts_asked(question, text))
        or _CRITERION_QUESTION.search(question) is not None
        or (kind == "when" and _time_form(question).search(text) is not None)
    )


def _time_form(question: str) -> re.Pattern[str]:
    """What the time that answers the "when" `question` looks like: a delay for "how
    soon" or "how quickly" (`_DELAY`: the opening hours do not say how soon a call must
    be made), a year or a month for "what year" or "which months" (`_YEAR_OR_MONTH`),
    else a day's date, a month with its year or a clock time."""
    if _SOON_QUESTION.search(question):
        return _DELAY
    return _YEAR_OR_MONTH if _PERIOD_QUESTION.search(question) else _DAY_OR_HOUR


VALUE_FORMS: dict[AnswerKind, str] = {
    "quantity": "a number",
    "change": "a change in a figure",
    "frequency": "a frequency",
    "when": "a time",
}
"""The answer kinds whose form is a value (an amount, a change, a frequency, a time)
that an answer holds, each with what a reader is told the question asks for."""
_QUANTITY_NAMES: dict[re.Pattern[str], str] = {
    _DOSE: "a dose",
    _DURATION: "a length of time",
    _SHARE: "a share of a whole",
}
"""What a quantity question asks for, by the form of its number (`_quantity_form`)."""


_LINKS = frozenset({"was", "were", "is", "are", "n", "total", "totaled", "totalled"})
"""Words that may stand between what is counted and its count ("sites was 36",
"sites (n = 36)")."""


def _counts_after(question: str, text: str) -> bool:
    """True when a word of what "how many X?" counts is followed by a number (not a
    year, nor a reference's) with nothing but punctuation or `_LINKS` words between:
    "The number of participating sites was 36", "Sites: 36", a row "| Participating
    sites | 36 |"; not "the sites covered 30,783,825 patients"."""
    counted = _counted(question)
    text = _without_places(text)
    for number in _COUNT.finditer(text):
        before = words(text[: number.start()])
        while before and before[-1] in _LINKS:
            before.pop()
        if before and stem(before[-1]) in counted:
            return True
    return False


_TIMES = frozenset({stem("times")})
"""What "how many times" counts: "twice", "once a day" answer it, with no word after."""


def _gives_value(kind: AnswerKind, question: str, text: str) -> bool:
    """True when `text` gives the value `question` asks for (`form_match`, or a count
    of what "how many X" counts: "Ten sites"); for "how many X" with no unit asked
    (a plain number, not "how many times"), only a count of X, the number just before
    X (`_counts_asked`: "36 PCORnet sites") or just after it (`_counts_after`:
    "Sites: 36"), since a number near X that counts something else ("The queries at
    the sites covered 30,783,825 patients" for "how many sites") does not say how
    many."""
    if _counts_asked(question, text):
        return True
    counted = _counted(question)
    plain = kind == "quantity" and _quantity_form(question) is _NUMBER
    if plain and counted and counted != _TIMES:  # "twice a day" answers "how many times"
        return _counts_after(question, text)
    return form_match(kind, text, question)


def missing_value(question: str, texts: Sequence[str]) -> str | None:
    """What `question` asks for (`VALUE_FORMS`; for a quantity, a dose, a length of
    time or a share where it asks for one) when it asks for a value and none of
    `texts` (the quotes an answer shows) has it (`_gives_value`: a count of what "how
    many" counts, a number near the question's words for "how much", a time for
    "when", ...; for money, asked for in any wording, a sum of money:
    `measures.missing_measures`); None when it asks for no value, when a text has
    it, or when there is no text."""
    if not texts:
        return None
    if MONEY in asked_measures(question):  # "What is the price of a vial?"
        return MONEY if MONEY in missing_measures(question, texts) else None
    kind = answer_kind(question)
    asked = VALUE_FORMS.get(kind)
    if asked is None:
        return None
    if any(_gives_value(kind, question, t) for t in texts):
        return None
    if kind == "quantity":
        return _QUANTITY_NAMES.get(_quantity_form(question), asked)
    return asked


def form_match(kind: AnswerKind, text: str, question: str = "") -> bool:
    """True when `text` has the form of answer `kind` (False for `other`); a match
    that `question` itself holds ("type 2" in "type 2 diabetes") does not count
    (a cause's does: "the reason" answers "what was the reason"), nor does a number
    that names a table, section or study ("Table 11", "(2.2)"), nor a year for a
    quantity ("in 2015"). For a quantity, frequency, time or name, the match must
    also stand near what is asked (term proximity): within NEAR_WORDS words of a
    word of `question` (a number at the far end of a sentence about something else
    does not answer "how much")."""
    if kind == "definition":
        criterion = _CRITERION_QUESTION.search(question) is not None
        return _defines(text, question) or (criterion and _CRITERION.search(text) is not None)
    if kind == "cause" and _causes_what_is_asked(text, question):
        return True
    if kind == "list":
        return len(_ITEM_MARK.findall(text)) >= 2 or _SERIES.search(text) is not None
    if kind == "extreme":
        asked = {m.group().lower() for m in _EXTREME.finditer(question)}
        return any(m.group().lower() in asked for m in _EXTREME.finditer(text))
    if kind == "change":
        return _MOVED.search(text) is not None and form_match("quantity", text, question)
    pattern = _quantity_form(question) if kind == "quantity" else _FORMS.get(kind)
    if pattern is None:
        return False
    asked = set() if kind == "cause" else {m.group().lower() for m in pattern.finditer(question)}
    if kind == "quantity":
        text = _without_places(text)
    terms = query_stems(question) if kind in _NEAR_KINDS else set()
    return any(
        m.group().lower() not in asked
        and (not terms or _near_asked(text, m.start(), m.end(), terms))
        for m in pattern.finditer(text)
    )
