"""Finding a PDF's headings: from its outline (bookmarks), else from fonts.

Pure functions over `PdfLine`s. Each line has a role; the functions here turn body
lines into ("heading", group) and return each group's level (smaller is outer).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from quoteproof.ingest.pdf.content import PageContent
from quoteproof.ingest.pdf.page import PdfLine

HEADING_SIZE_RATIO = 1.15
"""A line at least this much larger than the body size (and 1 pt larger) may be a heading."""

MAX_SHORT_HEADING_WORDS = 20
"""Most words in a bold or coloured heading at about body size; longer is emphasis."""

MAX_LARGE_HEADING_WORDS = 40
"""Most words in a heading set in a larger font."""

MIN_BOLD_HEADING_RATIO = 0.6
"""Bold lines smaller than this share of the body size (notes, labels) are no headings."""

MIN_COLOR_DISTANCE = 96
"""How far (sum of RGB differences) a colour must be from the body text's to stand out."""

TITLE_PAGE_LEVEL = 1000
"""Added to the level of heading styles seen only on page 1 (of 3+ pages): a cover's
title lines do not become the parent section of the whole document."""

Role = tuple[str, int]
"""How a line is used: ("body", 0), ("furniture", 0), ("table", n) or ("heading", group)."""

BODY: Role = ("body", 0)

Style = tuple[float, int]
"""A heading style: (size key, cue), cue 2 = bold, 1 = coloured, 0 = only larger."""

_BOLD, _COLORED, _PLAIN = 2, 1, 0
_ENUMERATOR = re.compile(r"(?:\d{1,2}|[a-zA-Z])[.)]\s")
_BULLET_CATEGORIES = ("So", "Co")  # symbols and private-use glyphs (Wingdings bullets)
_BULLET_CHARS = frozenset("•◦▪▫■□●○‣⁃∙·*›»→➔➜–—-")
_NUMBERING = re.compile(r"(\d{1,3}(?:\.\d{1,3}){0,7})\.?\s")
_LEADING_NUMBER = re.compile(
    r"^\s*(?:\d+(?:[.\-]\d+)*(?:[.):]\s*|\s+)|[IVXLCivxlc]+[.)]\s*|[A-Za-z][.)]\s+)"
)
_LETTER = re.compile(r"[^\W\d_]")
_ENUMERATORS = re.compile(
    r"^(?:\s*(?:(?:\d{1,3}|[IVXLCivxlc]{1,6}|[A-Za-z])[.)]|\(\s*[\dA-Za-z]{1,4}\s*\)|\d+(?=\s)))+\s*"
)
"""Leading enumerators, however many: "12.3. ", "(a) ", "XI.a. ", "100 " (a number)."""
_CAPTION = re.compile(r"(?:table|figure|fig\.|exhibit|chart)\s*[A-Z]?\d+\b", re.IGNORECASE)
_DANGLING = frozenset(
    "a an and as at but by for from in into nor of on or per than that the to via with".split()
)
"""Words a heading does not end with, nor its next line start with: a sentence goes on."""
_CARRYING_ON = _DANGLING - {"a", "an", "the"}
"""`_DANGLING` words that carry a line on; an article may start a new sentence
("WARNINGS" / "THE DRUG MAY ...")."""
_UNITS = frozenset("cm dl g iu kg l mcg mcl meq mg ml mm mmhg mmol mol ng nm pg μg μl μm".split())
"""Casefolded units: a word such as "mL" or "µg" is a quantity's, not a sentence's."""
_WORD = re.compile(r"[^\W\d_]+")
_TERMINAL = (".", ":", ";", "?", "!")
_NOT_ALNUM = re.compile(r"[\W_]+")
_UNNUMBERED_DEPTH = 9
_DIVISION = re.compile(
    r"(?:schedule|appendix|annex(?:ure)?|exhibit|attachment|part|chapter)\s+"
    r"(?:\d{1,3}|(?-i:[A-Z]|[IVXLC]{1,6}))(?=$|[\s.:—–-])",
    re.IGNORECASE,
)
"""A heading that names a top-level division of a document ("Schedule 1", "Appendix
B", "Part IV"): at the depth of a heading numbered "1", not under the numbered
heading before it."""
_MAX_TITLE_LINES = 6


@dataclass(frozen=True)
class Bookmark:
    """One outline entry: nesting `level` (0 = top), `title`, 0-based `page_index`."""

    level: int
    title: str
    page_index: int


def size_key(size: float) -> float:
    """Font size rounded to half a point: sizes that differ less are the same style."""
    return round(size * 2) / 2


def is_list_start(text: str) -> bool:
    """Whether a (stripped) line starts a list item: a bullet character or symbol
    followed by text, or an enumerator such as "1." "a)" followed by a space."""
    if _ENUMERATOR.match(text):
        return True
    first = text[:1]
    if not first or len(text) < 2:
        return False
    if first in _BULLET_CHARS:
        return text[1].isspace() or first not in "*-–—"
    return unicodedata.category(first) in _BULLET_CATEGORIES


@dataclass(frozen=True)
class LineStats:
    """Document-wide typography: the body size and colour (the most common, weighted
    by characters; sizes in half points) and the usual baseline-to-baseline distance
    between consecutive lines of each size."""

    body_size: float
    body_color: int | None
    pitches: dict[float, float]

    def close_below(self, above: PdfLine, below: PdfLine) -> bool:
        """Whether `below` follows `above` at about the usual pitch (no paragraph gap)."""
        usual = self.pitches.get(size_key(above.size), 1.2 * above.size)
        pitch = above.y0 - below.y0
        return 0 < pitch <= 1.3 * usual + 0.5


def line_stats(pages: Sequence[PageContent]) -> LineStats:
    """Measure `LineStats` in one pass over the lines."""
    sizes: dict[float, int] = {}
    colors: dict[int, int] = {}
    pitches: dict[float, dict[float, int]] = {}
    for page in pages:
        previous_key, previous_y0 = -1.0, 0.0
        for line in page.lines:
            key = round(line.size * 2) / 2
            sizes[key] = sizes.get(key, 0) + len(line.text)
            if line.color is not None:
                colors[line.color] = colors.get(line.color, 0) + len(line.text)
            pitch = previous_y0 - line.y0
            if key == previous_key and 0.8 * key < pitch < 3 * key:
                counts = pitches.setdefault(key, {})
                rounded = round(pitch * 2) / 2
                counts[rounded] = counts.get(rounded, 0) + 1
            previous_key, previous_y0 = key, line.y0
    return LineStats(
        _most_common(sizes) or 0.0,
        _most_common(colors),
        {key: _most_common(counts) or 0.0 for key, counts in pitches.items()},
    )


def _most_common(counts: dict[Any, int]) -> Any:
    """The key with the largest count (the first seen of equals), or None if empty."""
    return max(counts, key=counts.__getitem__) if counts else None


def large_size(body: float) -> float:
    """The smallest size that counts as clearly larger than body text of size `body`."""
    return max(body * HEADING_SIZE_RATIO, body + 1.0)


def _color_distance(a: int, b: int) -> int:
    return sum(abs(((a >> shift) & 255) - ((b >> shift) & 255)) for shift in (16, 8, 0))


def _is_phrase(text: str) -> bool:
    """Two or more words, no "/" or "@" (a coloured line of one word or a path is a link)."""
    return len(text.split()) >= 2 and "/" not in text and "@" not in text


def _letters(text: str) -> int:
    return len(_LETTER.findall(text))


@dataclass(frozen=True)
class _FontProfile:
    body_size: float
    body_color: int | None
    large_from: float

    def style(self, line: PdfLine, role: Role) -> Style | None:
        """The heading style of a candidate line, or None when it is no candidate."""
        text = line.text.strip()
        if role != BODY or len(text) > 200 or _LETTER.search(text) is None:
            return None
        key = size_key(line.size)
        cue = _BOLD if line.bold else _PLAIN
        if cue == _PLAIN and self._stands_out(line.color) and _is_phrase(text):
            cue = _COLORED
        if key >= self.large_from:
            return (key, cue)
        if cue == _PLAIN or is_list_start(text):
            return None
        floor = MIN_BOLD_HEADING_RATIO * self.body_size if cue == _BOLD else self.body_size - 0.5
        return (key, cue) if key >= floor else None

    def _stands_out(self, color: int | None) -> bool:
        if color is None or self.body_color is None:
            return False
        return _color_distance(color, self.body_color) >= MIN_COLOR_DISTANCE


def is_caption(text: str) -> bool:
    """Whether a heading's text is a table's or figure's caption ("Table 12 …",
    "Figure 3 …"): its section covers the table and its notes, not what follows."""
    return _CAPTION.match(text) is not None


def _first_word(text: str) -> str:
    """The run of letters from the first letter of `text` ("mg" of "100 mg/vial")."""
    match = _WORD.search(text)
    return match.group() if match else ""


def _is_latin(letter: str) -> bool:
    return unicodedata.name(letter, "").startswith("LATIN")


def _starts_in_lower_case(text: str) -> bool:
    """Whether `text`'s first word reads as a sentence's lower-case word: it starts
    with a lower-case letter and is a unit ("mg", "mL") or a Latin word in lower
    case throughout ("injection"); not "eGFR", "mRNA", "pH" or "β-Blockers"."""
    word = _first_word(text)
    if not word or not word[0].islower():
        return False
    if word.casefold() in _UNITS:
        return True
    return word.islower() and _is_latin(word[0])


def _ends_dangling(word: str) -> bool:
    """Whether a heading's last `word` leaves it unfinished: a `_DANGLING` word in lower
    case ("and") or in capitals ("AND"), not one in title case ("Who Is It For") nor a
    single capital letter ("Vitamin A", "Appendix A")."""
    if word.casefold() not in _DANGLING:
        return False
    return word.islower() or (word.isupper() and len(word) > 1)


def _reads_as_heading(text: str, following: str | None) -> bool:
    """Whether `text` reads as a heading rather than a piece of a sentence or a label
    panel's fragment: after any leading number its first word is no lower-case word
    (`_starts_in_lower_case`: "100 mg/vial", "(remdesivir) injection"), it does not
    end in a comma or a dangling word (`_ends_dangling`), and the body line
    `following` it does not carry the sentence on: it does not start with a plain
    lower-case word (a unit or "mL", "iPhone" may start a line under a heading)
    after a heading without final punctuation, nor, in capitals, with a `_DANGLING`
    word other than an article ("KEEP OUT OF THE REACH" / "OF CHILDREN")."""
    unnumbered = _ENUMERATORS.sub("", text, count=1)
    if _LETTER.search(unnumbered) is None or _starts_in_lower_case(unnumbered):
        return False
    if text.endswith(",") or _ends_dangling(text.split()[-1]):
        return False
    if following is None:
        return True
    if not text.endswith(_TERMINAL) and _carries_on_in_lower_case(following):
        return False
    next_word = following.split()[0].casefold()
    return not (following.isupper() and next_word in _CARRYING_ON)


def _carries_on_in_lower_case(line: str) -> bool:
    """Whether `line` starts with a plain lower-case word: Latin letters in lower case
    throughout, no unit ("further diluted", not "mL per kg", "mg", "iPhone")."""
    word = _first_word(line)
    return (
        line.startswith(word)
        and word.islower()
        and _is_latin(word[0])
        and word.casefold() not in _UNITS
    )


def _is_heading_text(lines: list[str], *, large: bool, following: str | None = None) -> bool:
    """Few words (more for a "Table 12"/"Figure 3" caption, which may run long); no
    final period; short ones also no line ending in "." or ":"; and
    `_reads_as_heading` given the body line `following` it."""
    text = " ".join(lines)
    if not _reads_as_heading(text, following):
        return False
    if large or is_caption(text):
        return len(text.split()) <= MAX_LARGE_HEADING_WORDS and not text.endswith(".")
    return (
        len(text.split()) <= MAX_SHORT_HEADING_WORDS
        and _letters(text) >= 2
        and not any(line.endswith((".", ":")) for line in lines)
    )


def _numbering_depth(text: str) -> int:
    """How deep a heading's leading number puts it ("5" 1, "5.1" 2, up to 8); a
    division's name (`_DIVISION`: "Schedule 1") 1; an unnumbered heading
    `_UNNUMBERED_DEPTH`, under the numbered ones of its style."""
    match = _NUMBERING.match(text.strip() + " ")
    if match:
        return min(match.group(1).count(".") + 1, 8)
    return 1 if _DIVISION.match(text.strip()) else _UNNUMBERED_DEPTH


def _candidate_groups(
    pages: Sequence[PageContent],
    roles: list[list[Role]],
    profile: _FontProfile,
    stats: LineStats,
) -> list[tuple[int, list[int], Style]]:
    """Runs of consecutive candidate lines of one style at the usual line pitch."""
    groups: list[tuple[int, list[int], Style]] = []
    for page_index, page in enumerate(pages):
        previous: Style | None = None
        for index, line in enumerate(page.lines):
            style = profile.style(line, roles[page_index][index])
            if (
                style is not None
                and previous == style
                and stats.close_below(page.lines[index - 1], line)
            ):
                groups[-1][1].append(index)
            elif style is not None:
                groups.append((page_index, [index], style))
            previous = style
    return groups


def _body_text_at(page: PageContent, roles: list[Role], index: int) -> str | None:
    """The stripped text of line `index` of `page` when it is a body line, else None."""
    if index >= len(page.lines) or roles[index] != BODY:
        return None
    return page.lines[index].text.strip() or None


def font_heading_roles(
    pages: Sequence[PageContent], roles: list[list[Role]], stats: LineStats
) -> dict[int, int]:
    """Mark headings found by font size, weight and colour; return each group's level.

    Candidates are body lines with letters, at most 200 characters: lines at least
    `HEADING_SIZE_RATIO` times (and 1 pt) larger than the body size, or, not starting
    like a list item, bold lines, or lines at body size or larger in a colour far from
    the body colour (phrases of two or more words without "/" or "@", not links).
    Consecutive candidates of one style at the usual line pitch form a group; a group
    is a heading if `_is_heading_text` (given the body line after it); a failing
    group whose first line is in capitals keeps that line as a heading when it
    passes alone. Levels: style rank (larger size first, then bold, coloured,
    plain), then the depth of a leading number ("5" before "5.1", unnumbered after
    numbered, a division such as "Schedule 1" as "1": `_numbering_depth`);
    `TITLE_PAGE_LEVEL` is added for styles seen only on page 1 of a document of 3+
    pages.
    """
    profile = _FontProfile(stats.body_size, stats.body_color, large_size(stats.body_size))
    accepted: list[tuple[int, list[int], Style, str]] = []
    for page_index, indexes, style in _candidate_groups(pages, roles, profile, stats):
        texts = [pages[page_index].lines[i].text.strip() for i in indexes]
        after = _body_text_at(pages[page_index], roles[page_index], indexes[-1] + 1)
        for count in (len(texts), 1):
            text = " ".join(texts[:count])
            large = style[0] >= profile.large_from
            following = texts[count] if count < len(texts) else after
            if _is_heading_text(texts[:count], large=large, following=following) and (
                count == len(texts) or text.isupper()
            ):
                accepted.append((page_index, indexes[:count], style, text))
                break
    ranks = {
        style: rank for rank, style in enumerate(sorted({a[2] for a in accepted}, reverse=True))
    }
    elsewhere = {style for page_index, _, style, _ in accepted if page_index > 0}
    title_page = len(pages) >= 3
    levels: dict[int, int] = {}
    for group, (page_index, indexes, style, text) in enumerate(accepted):
        level = ranks[style] * 10 + _numbering_depth(text)
        levels[group] = level + (TITLE_PAGE_LEVEL if title_page and style not in elsewhere else 0)
        for index in indexes:
            roles[page_index][index] = ("heading", group)
    return levels


def _normalized(text: str, *, strip_number: bool) -> str:
    """Letters and digits only, casefolded; without a leading number if asked."""
    if strip_number:
        text = _LEADING_NUMBER.sub("", text, count=1)
    return _NOT_ALNUM.sub("", text.casefold())


class _TitleFinder:
    """Finds bookmark titles among lines; each line is normalised at most once."""

    def __init__(self, pages: Sequence[PageContent], roles: list[list[Role]]) -> None:
        self.pages = pages
        self.roles = roles
        self.taken: set[tuple[int, int]] = set()
        self._norms: dict[tuple[int, int, bool], str] = {}

    def _norm(self, page_index: int, index: int, strip_number: bool) -> str:
        key = (page_index, index, strip_number)
        if key not in self._norms:
            text = self.pages[page_index].lines[index].text
            self._norms[key] = _normalized(text, strip_number=strip_number)
        return self._norms[key]

    def _free(self, page_index: int, index: int) -> bool:
        role = self.roles[page_index][index][0]
        return role in ("body", "table") and (page_index, index) not in self.taken

    def find(self, page_index: int, target: str) -> range | None:
        """The first free run of lines on the page whose normalised text is `target`.

        A line much longer than the title (more than 4 characters per title character,
        plus 40) cannot start it and is not normalised.
        """
        lines = self.pages[page_index].lines
        longest = 4 * len(target) + 40
        for first, line in enumerate(lines):
            if len(line.text) > longest or not self._free(page_index, first):
                continue
            text = self._norm(page_index, first, True)
            if not text or not target.startswith(text):
                continue
            last = first
            while text != target and last + 1 < len(lines) and last - first < _MAX_TITLE_LINES - 1:
                if not self._free(page_index, last + 1):
                    break
                following = self._norm(page_index, last + 1, False)
                if not target.startswith(text + following):
                    break
                text += following
                last += 1
            if text == target:
                found = range(first, last + 1)
                self.taken.update((page_index, index) for index in found)
                return found
        return None


def outline_heading_roles(
    pages: Sequence[PageContent], roles: list[list[Role]], bookmarks: Sequence[Bookmark]
) -> dict[int, int] | None:
    """Mark the lines the outline's bookmarks point at as headings; None if it does not fit.

    Each bookmark is looked for on its destination page (then the next page): the
    first run of up to `_MAX_TITLE_LINES` consecutive body or table lines (a heading
    inside a ruled box stays a heading) whose letters and digits, casefolded and
    without a leading number ("1.2", "1.", "IV.", "a)"), equal the title's. The outline is
    used when at least one bookmark and at least half of them are found; the roles
    are then changed, else left alone. Returns each heading group's level (the
    bookmark's nesting level).
    """
    finder = _TitleFinder(pages, roles)
    found: list[tuple[int, range, int]] = []
    for bookmark in bookmarks:
        target = _normalized(bookmark.title, strip_number=True)
        for page_index in (bookmark.page_index, bookmark.page_index + 1):
            lines = finder.find(page_index, target) if target and page_index < len(pages) else None
            if lines is not None:
                found.append((page_index, lines, bookmark.level))
                break
    if not found or 2 * len(found) < len(bookmarks):
        return None
    levels: dict[int, int] = {}
    for group, (page_index, lines, level) in enumerate(found):
        levels[group] = level
        for index in lines:
            roles[page_index][index] = ("heading", group)
    return levels
