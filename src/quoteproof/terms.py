"""Question text made well formed, its words that matter for matching, and the names
a document's title declares the same (pure functions, no dependencies)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_WORD = re.compile(r"\w+", re.UNICODE)
_SURROGATE = re.compile("[\ud800-\udfff]")

# Words too common to help ranking or matching.
STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has
    have having he her hers him his how i if in into is it its itself me more most my no nor
    not of off on once only or other our ours out over own same she should so some such than
    that the their theirs them then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your
    yours s""".split()
)


def well_formed(text: str) -> str:
    """Return `text` with every lone surrogate replaced by U+FFFD (the replacement
    character), so that tokenizers, databases and encoders all take it.

    Lone surrogates are what undecodable bytes of a command-line argument become
    (Python's surrogateescape), and what a JSON string holding half of a pair
    (`"\\ud83d"`) decodes to; text without them is returned as it is."""
    return _SURROGATE.sub("\ufffd", text)


def tokens(text: str) -> list[re.Match[str]]:
    """Return the word tokens of `text` (runs of letters, digits and `_`), in order,
    as matches: their case kept, with where each lies."""
    return list(_WORD.finditer(text))


def words(text: str) -> list[str]:
    """Return the lower-cased word tokens of `text`, in order."""
    return [w.lower() for w in _WORD.findall(text)]


def query_terms(text: str) -> list[str]:
    """Return the distinct, lower-cased content words of `text`, in first-seen order.

    Stopwords are dropped unless nothing else is left.
    """
    tokens = words(text)
    content = [w for w in tokens if w not in STOPWORDS] or tokens
    return list(dict.fromkeys(content))


_SIBILANT = ("s", "x", "z", "ch", "sh")
_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "two three four five six seven eight nine ten eleven twelve".split(), start=2
    )
}
"""Number words and their digits ("one" left out: more often a pronoun than a count)."""


def stem(word: str) -> str:
    """Return a crude English stem of a lower-cased word: a number word's digits ("five"
    and "5" match); else plural and verb endings off ("es" only after a sibilant, as in
    "boxes"; else "s", but not that of "class", "virus" or "analysis"), then a final
    silent "e", so that "cause", "causes", "caused" and "causing" share one stem
    ("caus"). At least three letters are kept."""
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    for suffix in ("ies", "ing", "es", "ed", "s"):
        if suffix == "es" and not word[:-2].endswith(_SIBILANT):
            continue
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            break  # "class", "virus", "analysis": no plural
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def stems(text: str) -> set[str]:
    """The stems (`stem`) of the words of `text`."""
    return {stem(w) for w in words(text)}


def query_stems(text: str) -> set[str]:
    """The stems (`stem`) of the content words of `text` (`query_terms`)."""
    return {stem(term) for term in query_terms(text)}


_DECLARED_NAME = re.compile(r"\b([A-Z][A-Z0-9-]{2,})\s*[®™]?\s*\(([a-z][a-z0-9-]{3,})\)")
"""A brand name declared with its generic name, as a drug label's title gives them:
"VEKLURY® (remdesivir)"."""


def declared_names(labels: Iterable[str]) -> dict[str, str]:
    """The names `labels` (document titles, passage labels) declare the same: each
    brand and generic name of a "BRAND® (generic)" pair, lower-cased, mapped to the
    other as written ({"veklury": "remdesivir", "remdesivir": "VEKLURY"})."""
    names: dict[str, str] = {}
    for label in labels:
        for brand, generic in _DECLARED_NAME.findall(label):
            names[brand.lower()] = generic
            names[generic.lower()] = brand
    return names


def renamed(text: str, names: Mapping[str, str]) -> str | None:
    """`text` with each word that `names` declares (`declared_names`) replaced by the
    other name of its pair, or None when it holds none ("dose of remdesivir" ->
    "dose of VEKLURY")."""
    found = False

    def other(word: re.Match[str]) -> str:
        nonlocal found
        name = names.get(word.group().lower())
        found = found or name is not None
        return name or word.group()

    text = _WORD.sub(other, text)
    return text if found else None
