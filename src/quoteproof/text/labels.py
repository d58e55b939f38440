"""Human-readable chunk labels: `Veklury label › 5.1 Hypersensitivity › p. 4`.

A label names the document, the section path and the page(s), in full (a part is
cut only past `LABEL_PART_CHARS`, against runaway headings). Labels stay unique:
a document whose title another document already uses gets the shortest distinct
tail of its path (`Guide (2016/guide.pdf)`), a later version gets `v2`, `v3`...,
and chunks of one document that would share a label (windows of a long section,
a repeated "Introduction") are numbered `(1/3)`, `(2/3)`... The short key (the
ref) is separate and stays short.

Shown labels: `with_pages` puts a quote's own pages in place of its chunk's (the
page is shown once), and `fit_label` shortens a label to an output's width from the
middle, keeping the start of the title, the deepest section and the page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import PurePath

LABEL_SEPARATOR = " › "
LABEL_PART_CHARS = 200
"""A stored label's title or section longer than this is cut (a runaway heading)."""

ELLIPSIS = "…"
MIN_TITLE_CHARS = 20
"""`fit_label` cuts the title no shorter than this before it cuts the deepest section."""
WORD_SLACK = 8
"""How many characters a cut may give up to end after a whole word."""
MIN_SECTION_CHARS = 12
"""`fit_label` cuts the deepest section no shorter than this; past that it gives way."""

_PAGE_PART = re.compile(r"pp?\. \d+(?:–\d+)?")
_NUMBERING = re.compile(r" \(\d+/\d+\)$")
_NOT_ALNUM = re.compile(r"[\W_]+")


def shorten(part: str, limit: int = LABEL_PART_CHARS) -> str:
    """Return `part` cut to `limit` characters with an ellipsis when longer."""
    if len(part) <= limit:
        return part
    return part[: limit - 1].rstrip() + "…"


def page_part(pages: Sequence[int] | None) -> str | None:
    """`p. 4` for one page, `pp. 4–6` for a range, None when there are no pages."""
    if not pages:
        return None
    if len(pages) == 1:
        return f"p. {pages[0]}"
    return f"pp. {min(pages)}–{max(pages)}"


def make_label(
    title: str,
    section: tuple[str, ...],
    pages: Sequence[int] | None = None,
    *,
    shown_title: str | None = None,
) -> str:
    """Return the label for a chunk of the document `title` in `section` on `pages`.

    The label starts with `shown_title` (see `display_title`) or else `title`.
    Leading sections that repeat the document title are skipped (`repeats_title`:
    an h1, or a cover's heading lines, would otherwise show the title twice), and
    so is a later one that restates the whole title (`restates_title`: a school's
    name over the policy's own heading); an empty title is left out; each section
    part is cut to `LABEL_PART_CHARS` characters. A chunk with no title, section or
    page is labelled `(untitled)`.
    """
    first = shown_title or title
    parts = [first] if first else []
    skipping = True
    for name in section:
        skipping = skipping and repeats_title(name, title)
        if not skipping and not restates_title(name, title):
            parts.append(shorten(name))
    page = page_part(pages)
    if page is not None:
        parts.append(page)
    return LABEL_SEPARATOR.join(parts) or "(untitled)"


_TITLE_PARTS = re.compile(r"\s*(?:[:;|–—]|\s-\s)\s*")


def _words(text: str) -> list[str]:
    return [word for word in _NOT_ALNUM.split(text.casefold()) if word]


def repeats_title(section: str, title: str) -> bool:
    """Whether the section name `section` repeats the document `title` or most of it.

    Words compared casefolded, letters and digits only. The title counts as a whole
    and, when ":", ";", "|", a dash or " - " divides it, as each of its parts. The
    section repeats the title when its words are those of the title or of a part,
    or start or end one and are more than half of its words ("GUIDE TO INFECTION
    PREVENTION" under "Guide to Infection Prevention for Outpatient Settings:
    Minimum Expectations"), not one topic word ("Hypertension" under "Hypertension
    in Adults: Diagnosis and Management").
    """
    name = _words(section)
    if not name:
        return False
    units = [_words(title), *(_words(part) for part in _TITLE_PARTS.split(title))]
    return any(
        2 * len(name) > len(unit) and (unit[: len(name)] == name or unit[-len(name) :] == name)
        for unit in units
    )


RESTATED_SHARE = 0.8
"""`restates_title`: the share of the longer of a section name's and a title's words
that both hold."""


def restates_title(section: str, title: str) -> bool:
    """Whether `section` names the whole document `title` again, perhaps with a word
    changed ("Product Safety Recall: BrewMate KT-17 Cordless Electric Kettles" under
    "Product Safety Recall: BrewMate KT-17 Electric Kettles"): two words or more, and
    RESTATED_SHARE of the longer one's distinct words (casefolded, letters and digits)
    in both, none of the others a number or a code ("KT-19" or "2022" names another
    thing than "KT-17" or "2023")."""
    name, whole = set(_words(section)), set(_words(title))
    shared = len(name & whole)
    if any(any(ch.isdigit() for ch in word) for word in name ^ whole):
        return False
    return shared >= 2 and shared >= RESTATED_SHARE * max(len(name), len(whole))


def number_duplicates(labels: Sequence[str]) -> list[str]:
    """Append `(i/n)` to each of the `n` > 1 labels that are equal, in order."""
    totals = Counter(labels)
    seen: Counter[str] = Counter()
    numbered = []
    for label in labels:
        if totals[label] == 1:
            numbered.append(label)
            continue
        seen[label] += 1
        numbered.append(f"{label} ({seen[label]}/{totals[label]})")
    return numbered


def _distinct_tail(path: str, others: Iterable[str]) -> str:
    """The fewest trailing components of `path` that no path in `others` ends with."""
    parts = PurePath(path).parts
    other_parts = [PurePath(other).parts for other in others]
    for size in range(1, len(parts) + 1):
        tail = parts[-size:]
        if all(other[-size:] != tail for other in other_parts):
            return "/".join(tail)
    return path


def display_title(
    title: str, source_path: str, version: int, same_title_paths: Iterable[str]
) -> str:
    """The title part of labels for version `version` of the document at `source_path`.

    `same_title_paths` are the source paths of other stored documents with the same
    title; when there are any, the shortest distinct tail of `source_path` is added
    in parentheses. Versions after the first get ` v2`, ` v3`...
    """
    others = [path for path in same_title_paths if path != source_path]
    shown = shorten(title) if title else PurePath(source_path).name
    if others:
        shown = f"{shown} ({_distinct_tail(source_path, others)})"
    if version > 1:
        shown = f"{shown} v{version}"
    return shown


def _split(label: str) -> tuple[list[str], str]:
    """The parts before the page, and the page part with any `(i/n)` numbering
    ("" when the label names no page)."""
    parts = label.split(LABEL_SEPARATOR)
    if len(parts) > 1 and _PAGE_PART.fullmatch(_NUMBERING.sub("", parts[-1])):
        return parts[:-1], parts[-1]
    return parts, ""


def with_pages(label: str, pages: Sequence[int] | None) -> str:
    """`label` (a chunk's) naming `pages` (a quote's own) as its page part instead of
    the chunk's pages and `(i/n)` numbering; `label` unchanged when `pages` is empty
    or None. The page is then named once: renderers add no other page note."""
    page = page_part(pages)
    if page is None:
        return label
    parts, _ = _split(_NUMBERING.sub("", label))
    return LABEL_SEPARATOR.join([*parts, page])


def _cut_end(text: str, limit: int) -> str:
    """`text` in at most `limit` characters: cut at its end, after a whole word when
    that loses at most `WORD_SLACK` characters, with an ellipsis, when longer."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    kept = text[: limit - 1]
    space = kept.rfind(" ")
    if space > 0 and space >= len(kept) - WORD_SLACK:
        kept = kept[:space]
    return kept.rstrip(" ,;:") + ELLIPSIS


def fit_label(label: str, width: int | None) -> str:
    """`label` in at most `width` characters (unchanged when it fits or `width` is None).

    Shortened from the middle: the outer sections go first (an ellipsis part stands
    for them, the deeper ones are kept while they fit), then the title is cut from
    its end (not below `MIN_TITLE_CHARS`), then the deepest section (not below
    `MIN_SECTION_CHARS`), then the deepest section gives way to the ellipsis too;
    the page part is kept whole. A width too small even for that gets the label cut
    at its end. At 60: `VEKLURY® (remdesivi… › … › Table 5 Summary of… › p. 9`.
    """
    if width is None or len(label) <= width:
        return label
    parts, page = _split(label)
    end = [page] if page else []
    if len(parts) == 1:
        room = width - _joined_len(end) - (len(LABEL_SEPARATOR) if end else 0)
        if room >= MIN_SECTION_CHARS or (room > 0 and not end):
            return LABEL_SEPARATOR.join([_cut_end(parts[0], room), *end])
        return _cut_end(label, width)
    title, middle, deepest = parts[0], parts[1:-1], parts[-1]
    for dropped in range(1, len(middle) + 1):
        candidate = LABEL_SEPARATOR.join([title, ELLIPSIS, *middle[dropped:], deepest, *end])
        if len(candidate) <= width:
            return candidate
    rest = [ELLIPSIS] if middle else []
    tail = [*rest, deepest, *end]
    room = width - _joined_len(tail) - len(LABEL_SEPARATOR)
    if room >= MIN_TITLE_CHARS:
        return LABEL_SEPARATOR.join([_cut_end(title, room), *tail])
    room = width - _joined_len([_cut_end(title, MIN_TITLE_CHARS), *rest, *end])
    room -= len(LABEL_SEPARATOR)
    if room >= MIN_SECTION_CHARS:
        tail = [*rest, _cut_end(deepest, room), *end]
        title_room = width - _joined_len(tail) - len(LABEL_SEPARATOR)
        return LABEL_SEPARATOR.join([_cut_end(title, title_room), *tail])
    room = width - _joined_len([ELLIPSIS, *end]) - len(LABEL_SEPARATOR)
    if room >= MIN_SECTION_CHARS:
        return LABEL_SEPARATOR.join([_cut_end(title, room), ELLIPSIS, *end])
    return _cut_end(label, width)


def _joined_len(parts: Sequence[str]) -> int:
    """The length of `parts` joined with `LABEL_SEPARATOR`."""
    return len(LABEL_SEPARATOR.join(parts))
