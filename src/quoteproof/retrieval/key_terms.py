"""Key terms of a question: the specific words (drug and condition names, codes,
numbers) that a passage must carry to answer it.

A question about acetaminophen is not answered by passages about remdesivir however
much vocabulary they share. A question's numbers are key terms, and so are its content
words that are not general English: not in the bundled word list
(`common_words.txt`), even allowing for a changed ending ("diagnose" is general
because "diagnosis" is listed). A key term is *carried* by a passage that has a word
beginning with the term less its last two letters (at least four), so "diagnosed"
carries "diagnose"; a number is carried by the same number ("3.5", not "3" and "5").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib.resources import files

from quoteproof.terms import query_terms, words

SHORTEST_KEY = 3
SHARED_PREFIX = 5  # an unlisted word is general when a listed one shares its stem this long
CARRIED_PREFIX = 4
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@cache
def _common_words() -> tuple[frozenset[str], frozenset[str]]:
    """The bundled general-English words, and every prefix of them of SHARED_PREFIX
    or more letters."""
    text = files("quoteproof.retrieval").joinpath("common_words.txt").read_text("utf-8")
    listed = frozenset(line for line in text.split() if not line.startswith("#"))
    prefixes = frozenset(word[:n] for word in listed for n in range(SHARED_PREFIX, len(word) + 1))
    return listed, prefixes


def _general(word: str) -> bool:
    listed, prefixes = _common_words()
    if word in listed:
        return True
    return len(word) >= SHARED_PREFIX and word[: max(SHARED_PREFIX, len(word) - 2)] in prefixes


def key_terms(question: str) -> list[str]:
    """Return the key terms of `question` (lower-cased, in first-seen order): its
    numbers ("3.5" whole), and words of SHORTEST_KEY or more letters that are not
    general English."""
    found = _NUMBER.findall(question)
    for term in query_terms(question):
        has_digit = any(ch.isdigit() for ch in term)
        if not has_digit and len(term) >= SHORTEST_KEY and not _general(term):
            found.append(term)
    return list(dict.fromkeys(found))


def missing_terms(question: str, texts: Iterable[str]) -> tuple[str, ...]:
    """Return the key terms of `question` that none of `texts` carries, in order."""
    joined = "\n".join(texts)
    numbers = set(_NUMBER.findall(joined))
    present = set(words(joined))
    missing = []
    for term in key_terms(question):
        if term[0].isdigit():
            carried = term in numbers
        else:
            stem = term[: max(CARRIED_PREFIX, len(term) - 2)]
            carried = any(word.startswith(stem) for word in present)
        if not carried:
            missing.append(term)
    return tuple(missing)
