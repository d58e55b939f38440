"""Key terms of a question: the specific words (drug and condition names, codes,
numbers) that a passage must carry to answer it.

A question about acetaminophen is not answered by passages about remdesivir however
much vocabulary they share. A question's numbers are key terms, and so are its content
words that are not general English: not in the bundled word list
(`common_words.txt`), even allowing for a changed ending ("diagnose" is general
because "diagnosis" is listed, "safest" because "safe" is). Only whole endings
count: "warfarin" is specific although "warfare" is listed. A word written in lower
case in the question that joins two listed words ("fingerstick", "outpatient",
"bloodstream": the first of at least SHORTEST_BASE letters and no bound prefix such as
"hyper" or "micro", the second of at least COMPOUND_TAIL letters) is general too;
a capitalised one ("Westbrook") stays a key term, as a name. So does any word
written capitalised inside the question, not opening it or one of its sentences:
place and program names ("Oregon", "Puerto Rico", "North Carolina") are in the word
list, but passages about Illinois do not answer a question about Indiana. A key term is
*carried* by a passage that has a word beginning with the term less its last two
letters (at least four), so "diagnosed" carries "diagnose", or, for a term that is no
name, by the word it is derived from ("penalties" carries "penalizes", "ethnic"
carries "ethnicities"; "minor" does not carry "Minority"); a number is carried by
the same number ("3.5", not "3" and "5") or a range that covers it ("9 to 12"
carries 10, `range_numbers`; a decimal number only by itself: the bounds of a table's
rows often leave their unit to the column, "1 to 2" beside "More than 2"), a code
of letters and digits by the same code ("Ward 9A" is not carried by "Ward 9B", nor
named "9" in the refusal). A day of the month written as an ordinal after "on the",
"by the", "after the" ... ("paid if approved on the 20th") is carried by the same
number or by any such day (`_DAY_OF_MONTH`: "claims approved after the 15th are paid
..." states the rule a question about the 20th needs). A school, financial or season
year written as two years in a row, the second in two digits ("2026-27", "2026/27"),
is one key term, carried by the same two years in any such writing, "2026/2027" too
(`year_spans`: the 2025-26 term dates do not answer a question about 2026-27, though
they name 2026 and 27 October). A month's name is carried by a span of months that
covers it (`spanned_months`: "between 1 May and 30 September" carries "July"). A
name of its inhabitants is carried by the place's name ("Yorkers" by "York": the term
less a DEMONYM_ENDINGS ending). Accents and the marks written inside a word are set
aside on both sides (`folded`: "Oʻahu" carries "Oahu", "Clinica" carries "Clínica").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache
from importlib.resources import files

from quoteproof.terms import query_terms, words

SHORTEST_KEY = 3
SHORTEST_BASE = 3
ENDINGS = (
    "s", "es", "e", "d", "ed", "ing", "er", "ers", "est", "ly", "y", "al", "ic",
    "ion", "ions", "ation", "ations", "ive", "ity", "is", "ses", "ment", "ments",
)  # fmt: skip
"""Inflection and derivation endings: a word is general when a listed word is its
base (the word less one of these) with none or one of these added."""
CARRIED_PREFIX = 4
DEMONYM_ENDINGS = ("ers", "er")
"""Endings that name a place's inhabitants ("New Yorkers", "Londoner")."""
DERIVED_ENDINGS = (
    "izes", "ized", "izing", "ize", "ization", "ises", "ised", "ising", "ise", "isation",
    "ities", "ity", "iers", "ier", "iest", "iness", "ies", "ied", "ness",
)  # fmt: skip
"""Endings that derive one word from another ("penalizes" from "penal", "healthier"
from "health", "ethnicities" from "ethnic"), set aside when a passage is looked for a
key term that is no name (`carries`)."""
DERIVED_TAILS = (
    "", "s", "e", "es", "y", "ies", "ty", "ties", "al", "ic", "ed", "ing", "ize", "ise",
    "ity", "ities",
)  # fmt: skip
"""What a passage's word may add to such a base to carry the term ("penal" + "ties",
"drows" + "y", "immun" + "ize")."""
DERIVED_BASE = 4
"""Fewest letters left of a key term once a DERIVED_ENDINGS ending is set aside."""
COMPOUND_TAIL = 4
BOUND_PREFIXES = frozenset(
    "anti bio contra counter hyper hypo inter intra macro micro mono multi neo non para "
    "peri poly post pre pro pseudo semi sub super trans ultra".split()
)
"""Prefixes that make a technical term of a general word ("hypertension"), not a compound."""
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
MAX_RANGE = 100
_NUMBER_RANGE = re.compile(
    r"(?<![\w.,/:-])(\d{1,3}(?:\.\d+)?)\s*(?:to|-|–|—)\s*(\d{1,3}(?:\.\d+)?)(?![\d/-]|[.,:]\d)",
    re.IGNORECASE,
)
"""A range of numbers below 1000: "9 to 12", "30-40", "1–4", "0.5 to 1.5" (a range of
years, "2019-2024", is a period: a question about 2023 still needs a source that says
2023)."""
_CODE = re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z\d]+\b")
"""A word of letters and digits: a code ("9A", "N95", "H1N1", "B12"), or a number with
its unit or ordinal ending ("100mg", "1st", `_NUMBER_WITH_UNIT`)."""
_NUMBER_WITH_UNIT = re.compile(
    r"\d+(?:mg|g|kg|mcg|ug|ml|l|dl|mmol|mmhg|h|hrs?|min|s|d|wks?|y|yrs?|iu|u|cm|mm|m|km|"
    r"ft|lbs?|oz|x|st|nd|rd|th)"
)
_MONTH_NAMES = (
    "January|February|March|April|May|June|July|August|September|October|November|December"
)
_DAY_OF_MONTH = re.compile(
    r"\b(?:[Oo]n|[Bb]y|[Aa]fter|[Bb]efore|[Uu]ntil|[Tt]ill|[Ff]rom|[Ss]ince)\s+the\s+"
    r"([1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b"
    rf"(?!\s+(?:(?!(?:{_MONTH_NAMES})\b)[A-Z]|(?i:century|centuries|floor|edition|"
    r"anniversary|birthday|percentile|grade|place|times?|years?|weeks?|months?|row|round|"
    r"dose|trimester|line|generation|session|offen[cs]e|child|visit|attempt|days?|cycles?|"
    r"pages?|warnings?|stages?|steps?|levels?|phases?|chapters?|items?)\b))"
)
"""A day of the month: an ordinal of 1 to 31 after "on the", "by the", "after the" ...,
not of a century, a floor or another counted thing ("on the 20th", "after the 15th
are paid", "by the 3rd March"; not "the 20th century", "on the 2nd floor", "for the 3rd
offence" nor "on the 3rd Amendment")."""
_DAY = r"(?:the\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?)?"
_MONTH_RANGE = re.compile(
    rf"\b(?:[Bb]etween\s+{_DAY}({_MONTH_NAMES})\b[^.;:\n]{{0,12}}?\s*and\s*{_DAY}"
    rf"({_MONTH_NAMES})|({_MONTH_NAMES})\b[^.;:\n]{{0,12}}?\s*(?:to|until|till|through|-|–|—)"
    rf"\s*{_DAY}({_MONTH_NAMES}))\b"
)
"""A span of months: "between 1 May and 30 September", "from October to March",
"April–June" ("in June and December" names two months, no span)."""
_YEAR_SPAN = re.compile(r"\b((?:19|20)\d\d)\s?[-–—/]\s?((?:19|20)?\d\d)\b")
"""A school, financial or season year written as two years in a row ("2025-26",
"2025/2026", "2025–26")."""
_LOWER_WORD = re.compile(r"\b[a-z]+\b")
_NAME_WORD = re.compile(r"(?<!^)(?<![.?!:]\s)\b[A-Z][a-z]+\b")
"""A capitalised word that does not open the question or a sentence of it: a name."""


@cache
def _common_words() -> frozenset[str]:
    """The bundled general-English words."""
    text = files("quoteproof.retrieval").joinpath("common_words.txt").read_text("utf-8")
    return frozenset(line for line in text.split() if not line.startswith("#"))


def is_general(word: str) -> bool:
    """Whether `word`, or a form of it with another of the ENDINGS, is listed."""
    listed = _common_words()
    bases = {word} | {
        word[: -len(ending)]
        for ending in ENDINGS
        if word.endswith(ending) and len(word) - len(ending) >= SHORTEST_BASE
    }
    return any(base + ending in listed for base in bases for ending in ("", *ENDINGS))


def is_general_compound(word: str) -> bool:
    """Whether `word` joins two listed words: a first part of SHORTEST_BASE or more
    letters that is no bound prefix, and a second of COMPOUND_TAIL or more letters,
    listed itself or with a plural "s" ("fingersticks")."""
    listed = _common_words()
    return any(
        word[:cut] in listed
        and word[:cut] not in BOUND_PREFIXES
        and (word[cut:] in listed or (word.endswith("s") and word[cut:-1] in listed))
        for cut in range(SHORTEST_BASE, len(word) - COMPOUND_TAIL + 1)
    )


def _names(question: str) -> set[str]:
    """The lower-cased words `question` writes capitalised where no sentence of it
    opens (`_NAME_WORD`): names, matched as written."""
    return {match.group(0).lower() for match in _NAME_WORD.finditer(question.strip())}


def key_terms(question: str) -> list[str]:
    """Return the key terms of `question` (lower-cased, in first-seen order): its
    numbers ("3.5" whole; "100" of "100mg"), its codes of letters and digits ("9a",
    "n95", whole), and words of SHORTEST_KEY or more letters that are names
    (capitalised inside the question, not opening it or a sentence of it: "Oregon",
    "Puerto Rico", even though general English lists them) or not general English,
    nor compounds of general words written in lower case."""
    codes = [w.lower() for w in _CODE.findall(question)]
    codes = [code for code in codes if not _NUMBER_WITH_UNIT.fullmatch(code)]
    uncoded = _CODE.sub(
        lambda word: "" if word.group().lower() in codes else word.group(), question
    )
    spans = year_spans(uncoded, short_only=True)
    unspanned = _YEAR_SPAN.sub(
        lambda m: " " if year_spans(m.group(), short_only=True) else m.group(), uncoded
    )
    found = _NUMBER.findall(unspanned) + sorted(spans) + codes
    lower_case = set(_LOWER_WORD.findall(question))
    names = _names(question)
    for term in query_terms(question):
        has_digit = any(ch.isdigit() for ch in term)
        compound = term in lower_case and is_general_compound(term)
        specific = term in names or (not is_general(term) and not compound)
        if not has_digit and len(term) >= SHORTEST_KEY and specific:
            found.append(term)
    return list(dict.fromkeys(found))


_IN_WORD_MARK = re.compile(r"(?<=\w)‘(?=\w)")
"""A left quotation mark between letters: an ʻokina typed as one ("O‘ahu"); an
apostrophe is left alone (it joins "didn't", and "didnt" is no word)."""


def folded(text: str) -> str:
    """`text` without accents and without the marks written inside words (the ʻokina of
    "Oʻahu", also typed as a left quotation mark, and other modifier letters):
    "Clínica O‘ahu" -> "Clinica Oahu"."""
    decomposed = unicodedata.normalize("NFKD", _IN_WORD_MARK.sub("", text))
    return "".join(ch for ch in decomposed if unicodedata.category(ch) not in ("Mn", "Lm"))


def carries(present: Iterable[str], term: str, *, derived: bool = False) -> bool:
    """Whether the lower-cased words `present` carry the lower-cased word `term`: one
    of them begins with `term` less its last two letters (at least CARRIED_PREFIX), or
    is `term` less a DEMONYM_ENDINGS ending (at least CARRIED_PREFIX letters), or, when
    `derived` (a term that is no name: "Minority" in "Office of Minority Health" is not
    carried by "minor"), is `term` less a DERIVED_ENDINGS ending (at least
    DERIVED_BASE letters) with a DERIVED_TAILS ending ("penalties" carries
    "penalizes", "health" "healthier", "ethnic" "ethnicities", "drowsy" "drowsiness")."""
    stem = term[: max(CARRIED_PREFIX, len(term) - 2)]
    places = {
        term[: -len(ending)]
        for ending in DEMONYM_ENDINGS
        if term.endswith(ending) and len(term) - len(ending) >= CARRIED_PREFIX
    }
    bases = {
        term[: -len(ending)]
        for ending in DERIVED_ENDINGS
        if derived and term.endswith(ending) and len(term) - len(ending) >= DERIVED_BASE
    }
    return any(
        word.startswith(stem)
        or word in places
        or any(word.startswith(base) and word[len(base) :] in DERIVED_TAILS for base in bases)
        for word in present
    )


def spanned_months(text: str) -> set[str]:
    """The lower-cased names of the months the spans of months of `text` cover
    (`_MONTH_RANGE`, from the first to the last, over the year's end too: "from October
    to March" covers December)."""
    names = _MONTH_NAMES.lower().split("|")
    covered: set[str] = set()
    for match in _MONTH_RANGE.finditer(text):
        ends = [name for name in match.groups() if name]
        first, last = names.index(ends[0].lower()), names.index(ends[1].lower())
        length = (last - first) % 12
        covered |= {names[(first + k) % 12] for k in range(length + 1)}
    return covered


def year_spans(text: str, *, short_only: bool = False) -> set[str]:
    """The years of `text` written as two years in a row (`_YEAR_SPAN`: "2025-26",
    "2025/2026"; the second the year after the first), each as "2025-26"; with
    `short_only`, only those whose second year has two digits ("2025-26": "between
    2019-2020" may name two calendar years)."""
    found = set()
    for match in _YEAR_SPAN.finditer(text):
        first, second = int(match.group(1)), int(match.group(2)[-2:])
        if (first + 1) % 100 == second and not (short_only and len(match.group(2)) > 2):
            found.add(f"{first}-{second:02d}")
    return found


def number_ranges(text: str) -> list[tuple[float, float]]:
    """The ranges of `text` ("9 to 12", "30-40 kg", "1 to 2 mg/L") as (low, high), for
    ranges narrower than MAX_RANGE of numbers below 1000 (not years) and not inside a
    date, a clock time or a code ("2020-10-22", "09:00-17:30", "1-800-555", "B12-15")."""
    found = []
    for match in _NUMBER_RANGE.finditer(text):
        low, high = float(match.group(1)), float(match.group(2))
        if 0 < high - low < MAX_RANGE:
            found.append((low, high))
    return found


def range_numbers(text: str) -> set[str]:
    """The whole numbers the ranges of whole numbers of `text` (`number_ranges`)
    cover ("9 to 12": 9, 10, 11, 12; "1.5-2.5" covers none)."""
    covered: set[str] = set()
    for low, high in number_ranges(text):
        if low.is_integer() and high.is_integer():
            covered |= {str(n) for n in range(int(low), int(high) + 1)}
    return covered


def missing_terms(question: str, texts: Iterable[str]) -> tuple[str, ...]:
    """Return the key terms of `question` that none of `texts` carries, in order,
    accents and in-word marks set aside on both sides (`folded`); a day of the month
    (`_DAY_OF_MONTH`) is carried by any day of the month the texts name, and a month's
    name by a span of months that covers it (`spanned_months`)."""
    joined = folded("\n".join(texts))
    numbers = set(_NUMBER.findall(joined)) | range_numbers(joined)
    spans = year_spans(joined)
    months = spanned_months(joined)
    if _DAY_OF_MONTH.search(joined):
        numbers |= set(_DAY_OF_MONTH.findall(question))
    present = set(words(joined))
    missing = []
    question = _IN_WORD_MARK.sub("", question)
    names = _names(question)
    for term in key_terms(question):
        plain = folded(term)
        if _YEAR_SPAN.fullmatch(plain):
            carried = plain in spans
        elif plain in months:  # "July" in "dogs on a lead between 1 May and 30 September"
            carried = True
        elif _CODE.fullmatch(plain):
            carried = plain in present
        elif plain[0].isdigit():
            carried = plain in numbers
        else:
            carried = carries(present, plain, derived=term not in names)
        if not carried:
            missing.append(term)
    return tuple(missing)
