"""Quotable units of a passage: its sentences and list items, with what is not worth
quoting left out, for the extractive backend to choose from.

A chunk's text is split into paragraphs (lines), then each into sentences, each sentence
a unit; in a short paragraph (at most SHORT_PARAGRAPH_WORDS words) a sentence's unit is
the paragraph whole, scored on that sentence, and so is a short line of a paragraph
whose lines each end a sentence (a Word or web list's items without bullets,
`_item_lines`). Left out: fragments under MIN_WORDS words
(not counting cross-references such as "[see Warnings (5.1)]"), lines that read as
headings (no closing punctuation, and short or title-cased), table-of-contents lines,
table and figure captions, entries of reference lists (a line with a journal's
"2022;19(10):656", a DOI or an access date), form check boxes ("Yes No Yes No"),
sentences about the document rather than its subject ("This article focuses on...",
"The animation below shows..."), questions (not a statement that quotes one), and
front matter (citation, author and disclaimer lines). A heading run into
the start of a sentence in the source ("Antivirals and Other Treatments At the early
stage...") and stray closing brackets before it are left out of the sentence; so, in a
form laid out as text, are the answer-box lines of the item before ("Yes No", "Not
applicable") and a column header run into the line that opens the item ("K. ...").

A lead-in (the last sentence of a paragraph that ends with ":", or with an em dash over
a marked item, `ends_lead_in`: "Risk factors include:", "The officer is responsible
for\u2014" over "(a) ...",
at least MIN_LEAD_IN_WORDS words: a form's "Petitioner :" is none; the sentences before
it are units of their own) is never a unit alone: it is quoted with the list that
follows it (its item lines, or up to LIST_PARAGRAPHS paragraphs that fit in LIST_CHARS);
a lead-in with nothing after it in the text is left out. A short paragraph with a
sentence that announces the list after it with a full stop ("Only kettles with the
following model numbers are affected.", `_ANNOUNCES_LIST`) is quoted whole, and that
sentence with the list; its items keep the paragraph as their lead-in. In a short paragraph, the
sentences before a lead-in that depends on them (`_DEPENDENT_LEAD_IN`: "If consent is
given:", "These include:") are quoted with it and its list, as the paragraph is whole
("No pets without consent. If consent is given:" and the conditions). A list item keeps
its lead-in when both fit in CONTEXT_CHARS, so the quote reads on its own, and when the
whole list fits there too, the item is quoted with the lead-in and the whole list (a
quote cut after the item, "requires: Windows 11; 8 GB of RAM", would read as the
whole list). A table row whose
structure is known (its span given) is a unit of its own (without a form's answer boxes
at its end, "| Yes No |"), so a quote of a table is the rows that answer, not the table;
other text of a paragraph holding table rows (its header row, section lines) is not
quoted alone. So is each line of a table laid out by whitespace (a paragraph of at least
ROW_LINES lines, most of them with ROW_NUMBERS numbers or more), rather than the
paragraph as one sentence.

Paragraphs are split at blank lines, except where a paragraph stops mid-sentence
and the next starts in lower case (a sentence or list item wrapped across a blank
line); a list ends where an item with another kind of marker starts ("2." after
"a." to "f."), unless that item starts a sub-list ("a." to "c." under "1.", then
"2.").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from quoteproof.sentences import CLOSING, CONNECTORS, runs_on, sentence_bounds
from quoteproof.terms import STOPWORDS
from quoteproof.text.numbering import LIST_MARK, bare_number
from quoteproof.text.spans import trim_span

MIN_WORDS = 5
HEADING_WORDS = 12
CONTEXT_CHARS = 500
SHORT_PARAGRAPH_WORDS = 50
MIN_LEAD_IN_WORDS = 3
LIST_CHARS = 1200
LIST_PARAGRAPHS = 8
ROW_LINES = 3
FURNITURE_LINES = 4
ROW_NUMBERS = 3

_FULL_STOP = (".", "!", "?")
MAX_LABEL_CHARS = 80
_ANOTHER_COLON = re.compile(r"(?<!\d):|:(?!\d)")
"""A colon that is not inside a time ("09:00")."""
_VALUE_MARK = re.compile(r"[\d$€£¥₹]")
_CONTENTS = re.compile(r"(?:\b\d+(?:\.\d+)+\s+[A-Z][^\d]{2,}){2,}|\.{4,}|(?:\s\.){4,}")
_PRICED = re.compile(r"[$€£¥₹]\s?\d")
"""An amount of money: a line with one and dot leaders is a cost table's row, no
contents line ("AOA sensor system test ....... 40 work-hours × $85 per hour = $3,400.")."""
_CAPTION = re.compile(r"^(?:table|figure|fig\.|exhibit|chart)\s*[A-Z]?\d+", re.IGNORECASE)
_FRONT_MATTER = re.compile(
    r"^(?:suggested citation|corresponding author|author affiliations?|disclaimer|"
    r"the (?:findings|opinions) (?:and conclusions )?(?:in|expressed)|doi:|https?://|"
    r"copyright|all rights reserved|revised:|accessed|(?:source|retrieved from):?\s+https?://)",
    re.IGNORECASE,
)
_CITATION = re.compile(
    r"\b(?:1[89]|20)\d\d\s*;\s*\d+\s*(?:\([\w\s-]+\))?\s*:\s*[eS]?\d+|\bdoi:\s*10\.\d|"
    r"\bAccessed\s+(?:on\s+)?(?:\d{1,2}\s+)?[A-Z][a-z]+\.?\s+\d"
)
"""An entry of a reference list: a journal's year;volume(issue):pages, a DOI, or the
date a web page was accessed."""
_DEGREES = re.compile(r"\b(?:PhD|MD|MPH|MS|MSc|DrPH|RN|MBChB|BSN|MA|BA)\b")
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"(?<![\w.,])\d[\d,.]*(?![\w])")
_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_CHECK_BOXES = re.compile(r"\b(?:Yes\s+No|blank\s+blank)\b.*\b(?:Yes\s+No|blank\s+blank)\b", re.S)
OUT_OF_SCOPE = re.compile(
    r"\b(?:does|do|shall|will) not (?:apply|extend) to\b|\bnot (?:covered|governed) by "
    r"(?:this|these)\b|\band not by (?:this|these)\b|\b(?:is|are) (?:excluded|exempt(?:ed)?) "
    r"from (?:this|these|the scope)\b|\b(?:outside|beyond) (?:the )?scope\b|"
    r"\bnot (?:part|within the scope) of this\b|"
    r"\b(?:covered|governed|handled|managed|prepared|dealt with) (?:(?:by|in|under) "
    r"(?:a separate|another) (?:[\w-]+ )?(?:policy|procedure|SOP|protocol|guideline|terms|"
    r"agreement|contract|document|notice|plan|scheme)\b|"
    r"(?:by|under) (?-i:[A-Z]{2,}[A-Z0-9]*[-‑/][A-Z0-9/‑-]*\d)(?=\s*(?:[.,;:()]|and\b|or\b|$)))",
    re.IGNORECASE,
)
"""A sentence that puts something outside what the document covers ("Business customers
who buy under a trade account are covered by the Trade Terms of Supply and not by this
policy", "This policy does not apply to patients of the Neonatal Unit"), or leaves it
to another document ("PSURs are covered by PV-SOP-007.", "... are handled under a
separate procedure"; not "covered by COVID-19 relief funds", "managed by another
nurse"): about the document, and about its subject too, so it is quoted."""
_ABOUT_THE_DOCUMENT = re.compile(
    r"\b(?:this|the following|the next) "
    r"(?:article|section|chapter|page|document|fact sheet|video|animation)\b|"
    r"\b(?:animation|video|image|picture|diagram)s? (?:below|above)\b|"
    r"\b(?:below|above) (?:animation|video|image|picture|diagram)s?\b|"
    r"\b(?:watch|see|view|play|enlarge|reduce|replay|pause)\b(?:\s+[\w-]+){0,3}?\s+"
    r"(?:videos?|animations?)\b|\bin (?:the|this) (?:video|animation)\b|"
    r"\bclick\b|\bto learn more\b|\bsee the chapter\b",
    re.IGNORECASE,
)
"""A sentence about the page rather than its subject: "This article focuses on ...",
"The animation below shows ...", "Watch this short video", "In the video, a nurse
...", "click"; not one that only names a video ("... pivoted to an online video
forum")."""
_NOTE_MARK = r"^[a-z] (?=[A-Z])"
"""A table note's letter before its first word ("a Data were from ...")."""
_FOOTNOTE = re.compile(rf"^\s*(?:[a-z]\.|[*†‡§¶])\s|{_NOTE_MARK}")
_DEPENDENT_LEAD_IN = re.compile(
    r"(?:if|when|where|unless|otherwise|then|this|these|those|they|it|such|"
    r"in (?:that|this|such) cases?)\b",
    re.IGNORECASE,
)
"""The opening of a lead-in that rests on the sentence before it: a condition or a word
pointing back ("If consent is given:", "These include:")."""
_ANNOUNCES_LIST = re.compile(
    r"\b(?:the following(?!\s+(?:days?|weeks?|months?|years?|mornings?|afternoons?|"
    r"evenings?|nights?|weekends?|seasons?|terms?|semesters?|quarters?|spring|summer|"
    r"autumn|fall|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)|"
    r"as follows|(?:listed|set out|shown) below)\b",
    re.IGNORECASE,
)
"""Words by which a sentence that ends with a full stop announces the list after its
paragraph ("Only kettles with the following model numbers are affected."; "the
following day" is the next one, no list)."""
_LEADING_CLOSERS = ")]}.,;:"
_CROSS_REFERENCE = re.compile(
    r"\[\s*see\b[^\]]*\]|\(\s*see\b[^)]*\)|\(\d+(?:\.\d+)*(?:,\s*\d+(?:\.\d+)*)*\)",
    re.IGNORECASE,
)
"""A pointer to another place of the document ("[see Warnings and Precautions (5.1)]",
"(2.2, 2.4)"): not words of what the sentence says."""
_BOXES_AT_END = re.compile(r"[\s|]*\bYes\s+No(?:\s+Not applicable)?[\s|]*$")
"""A form's answer boxes closing a table row ("... if appropriate. | Yes No |"): one
cell that holds both "Yes" and "No" is a box to tick, not data."""
_BOX_LINE = re.compile(r"[ \t]*(?:(?:Yes|No|Not applicable|N/A)\b[ \t]*)+\n")
"""A line of a form laid out as text that holds only its answer boxes ("Yes No",
"Not applicable"), closing the item before the next one."""
_ITEM_LINE = re.compile(r"\n[ \t]*(?:[A-Z]|\d{1,2}|[a-z])[.)][ \t]+[A-Z]")
"""A line that opens a lettered or numbered item ("K. Devices are dried ...")."""


@dataclass(frozen=True)
class Unit:
    """A quotable span `text[start:end]` of a chunk's text; `core_start`/`core_end`
    is the sentence or item itself (without its lead-in), what it is scored on;
    `header` the span of the header line of a table laid out by whitespace, quoted
    before its row (None for any other unit); `columns` for a row of a table whose
    structure the index keeps, the span of the line above its first row in its
    paragraph that has words (the table's column names, when it has a header row),
    read with the row but not quoted (None for any other unit); `table`, for a table
    row, where the paragraph of its table starts (the rows of one table share it;
    None for any other unit)."""

    start: int
    end: int
    core_start: int
    core_end: int
    header: tuple[int, int] | None = None
    columns: tuple[int, int] | None = None
    table: int | None = None


_LINE = re.compile(r"[^\s](?:[^\n]*[^\s])?")
"""A line's text, without the spaces around it."""
_RECORD_VALUE = re.compile(
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\b\d+\.\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
)
"""An amount ("37,499.96", "618.00") or a date ("05/28/2019"): what a ledger's lines hold."""


_DASH_LEAD_IN = re.compile(r"[^\W\d_]\u2014$")
"""An em dash right after a word ending a line, as statutes end a lead-in ("The
officer is responsible for\u2014" over items "(a)", "(b)")."""


def ends_lead_in(line: str) -> bool:
    """Whether `line` (stripped) ends as a lead-in may: with a colon, or with an em dash
    right after a word (`_DASH_LEAD_IN`; "Children under 6 years: \u2013" and "10\u2014"
    end with no lead-in)."""
    return line.endswith(":") or _DASH_LEAD_IN.search(line) is not None


def _states_a_value(line: str) -> bool:
    """Whether `line` is an entry of a price list, a timetable or a form that gives a
    value after its label ("Ear wax removal (microsuction): £45 for one ear",
    "Saturday: 09:00 to 17:30"): a label of at most MAX_LABEL_CHARS characters, a
    colon and a space, then a number or an amount, and no other colon but inside a
    time ("Section 1: Demographics Section 2: Program" is a contents line). Such a
    line is no heading, however short and unpunctuated."""
    label, colon, value = line.strip().partition(":")
    if not colon or not 2 <= len(label) <= MAX_LABEL_CHARS or not value[:1].isspace():
        return False
    return _ANOTHER_COLON.search(value) is None and _VALUE_MARK.search(value) is not None


def inline_headings(text: str) -> list[tuple[int, int]]:
    """The spans of the lines of `text` that read as headings (a paragraph of at most
    HEADING_WORDS words ending with no closing punctuation, or in "?", that states no
    value after a label, `_states_a_value`), in order: the headings a chunk's text
    holds (a plain-text file has no others)."""
    return [
        (s, e)
        for s, e in _lines(text)
        if _words(text[s:e]) <= HEADING_WORDS
        and (text[e - 1] == "?" or not text[s:e].endswith(CLOSING))
        and not LIST_MARK.match(text[s:e])
        and not _states_a_value(text[s:e])
    ]


_NUMBERED_TITLE = re.compile(r"(\d{1,3})\.\s+[A-Z]")
"""A numbered section's title line ("11. Appeals and representations")."""


def _after_heading_line(text: str, start: int, end: int) -> int:
    """Where the paragraph `text[start:end]` goes on after a heading on its first line
    ("Purpose\nThis policy describes ...", as plain-text files write a heading over
    its paragraph): the first line of at most HEADING_WORDS words, opening with a
    capital or a digit, ending with no punctuation nor a function word, and followed
    by a line that opens with a capital, or a numbered section's title over its first
    clause ("11. Appeals and representations" over "11.1 A person who ..."); else
    `start`."""
    first_end = text.find("\n", start, end)
    if first_end < 0:
        return start
    first = text[start:first_end].rstrip()
    rest = text[first_end:end].lstrip()
    last_word = first.rsplit(None, 1)[-1].lower() if first else ""
    heading = (
        (first[:1].isupper() or first[:1].isdigit())
        and _words(first) <= HEADING_WORDS
        and not first.endswith((*CLOSING, ",", "-"))
    )
    numbered = _NUMBERED_TITLE.match(first)
    clause = numbered and re.match(rf"{numbered.group(1)}\.1(?!\d)\s+[A-Z]", rest)
    if clause and heading and last_word not in STOPWORDS:  # "11. Appeals" over "11.1 A ..."
        return end - len(rest)
    if heading and last_word not in STOPWORDS and rest[:1].isupper() and not LIST_MARK.match(first):
        return end - len(rest)
    return start


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def _lines(text: str) -> list[tuple[int, int]]:
    """The paragraphs of `text` (runs of lines between blank lines; a line break
    inside one is a soft wrap) as stripped `(start, end)` spans; a paragraph that
    stops mid-sentence and the next one, which starts in lower case, are one (a
    list item or sentence wrapped across a blank line, as PDF text often is)."""
    spans: list[tuple[int, int]] = []
    for match in re.finditer(r"\S(?:.|\n(?![ \t]*\n))*", text):
        line = match.group()
        if line.strip():
            lead = len(line) - len(line.lstrip())
            start, end = match.start() + lead, match.start() + len(line.rstrip())
            if spans and _continues(text[spans[-1][0] : spans[-1][1]], text[start:end]):
                start = spans.pop()[0]
            spans.append((start, end))
    return spans


def _asks(sentence: str) -> bool:
    """Whether `sentence` is a question: it ends with "?" (before closing quotes and
    brackets), unless that "?" closes a question the sentence quotes after words of
    its own ("... ascertained with the question, \u201cHas a doctor ever told you that
    you had diabetes?\u201d")."""
    text = sentence.rstrip()
    body = text.rstrip("\"')]\u201d\u2019")
    if not body.endswith("?"):
        return False
    if not {'"', "\u201d"} & set(text[len(body) :]):
        return True
    if body.rfind("\u201c") > body.rfind("\u201d"):
        opened = body.rfind("\u201c")
    elif body.count('"') % 2:  # an odd straight quote opens the quotation
        opened = body.rfind('"')
    else:  # the closing mark closes nothing the sentence opened
        return True
    return not body[:opened].strip()


def worth_quoting(sentence: str, line: str, *, in_list: bool = False) -> bool:
    """False for a sentence not worth quoting alone: a fragment (under MIN_WORDS
    words besides its cross-references: "Hypersensitivity reactions [see Warnings and
    Precautions (5.1)]."), a heading-like line
    (unless it is an item of a list, `in_list`), a contents line, a caption or front
    matter (also any sentence of a line that opens as a caption or front matter:
    "Table 2. Prevalence Ratios ...", "Source: https://..."), a sentence of an entry
    of a reference list (`_CITATION`), or a table note run on after other notes
    ("... beverage. a Data were from ..."), or a question (it asks, it does not
    answer: "Who Should Not Get the Vaccine?"). `line` is the line the sentence is in."""
    if _words(_CROSS_REFERENCE.sub(" ", sentence)) < MIN_WORDS:
        return False
    if _asks(sentence):
        return False
    stripped = line.strip()
    open_ended = not stripped.endswith(CLOSING)
    heading_like = open_ended and (_words(stripped) <= HEADING_WORDS or _title_case(stripped))
    heading_like = heading_like and not _states_a_value(stripped)
    if heading_like and not in_list and not LIST_MARK.match(stripped):
        return False
    contents = _CONTENTS.search(sentence) and not _PRICED.search(sentence)
    if contents or _CAPTION.match(sentence.strip()) or _CAPTION.match(stripped):
        return False
    if _CITATION.search(stripped) or re.match(_NOTE_MARK, sentence.strip()):
        return False
    if _CHECK_BOXES.search(sentence) or (
        _ABOUT_THE_DOCUMENT.search(sentence) and not OUT_OF_SCOPE.search(sentence)
    ):
        return False
    front_matter = _FRONT_MATTER.match(sentence.strip()) or _FRONT_MATTER.match(stripped)
    return not (front_matter or len(_DEGREES.findall(sentence)) >= 2)


def glued_heading(sentence: str) -> int:
    """The length of a heading run into the start of `sentence` ("Shingles Vaccine The
    vaccine is..." -> the length of "Shingles Vaccine "): two or more capitalised words
    (connectors such as "and" between them) followed by a capitalised function word
    that opens the sentence ("The", "At", "Most") and a lower-case word; 0 when there
    is none (a capitalised term that is the sentence's subject, "Respiratory
    Hygiene/Cough Etiquette is...", is no heading)."""
    tokens = list(re.finditer(r"\S+", sentence))
    run = 0
    while run < len(tokens) and (
        tokens[run].group()[0].isupper() or tokens[run].group() in CONNECTORS
    ):
        run += 1
    # the last two of the capitalised run start the sentence itself: "At the..."
    for k in range(run - 1, 1, -1):
        opener, follower = tokens[k].group(), tokens[k + 1].group() if k + 1 < len(tokens) else ""
        if (
            opener[0].isupper()
            and opener.lower() in STOPWORDS
            and follower[:1].islower()
            and tokens[k - 1].group()[0].isupper()
            and not tokens[k - 1].group().endswith((".", ":", ";", ","))
        ):
            return tokens[k].start()
    return 0


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The sentences of the paragraph `text[start:end]` as stripped spans of `text`
    (a blank line inside it, where `_lines` joined a wrapped sentence, is a space)."""
    line = _BLANK_LINE.sub(lambda blank: " " * len(blank.group()), text[start:end])
    spans = []
    for bound_start, bound_end in sentence_bounds("en", line):
        piece = line[bound_start:bound_end]
        s = start + bound_start + len(piece) - len(piece.lstrip())
        e = start + bound_start + len(piece.rstrip())
        while s < e and text[s] in _LEADING_CLOSERS:
            s += 1
        s += len(text[s:e]) - len(text[s:e].lstrip())
        s = _own_start(text, s, e)
        s += glued_heading(text[s:e])
        if e > s:
            spans.append((s, e))
    return spans


def _own_start(text: str, start: int, end: int) -> int:
    """Where the sentence `text[start:end]` itself starts, in a form laid out as text:
    after the answer-box lines of the item before it (`_BOX_LINE`), and after the
    header lines run into it, lines without closing punctuation before the line that
    opens its item ("Elements to be assessed Assessment Notes\nK. Devices are ...")."""
    while box := _BOX_LINE.match(text, start, end):
        start = box.end()
    item = _ITEM_LINE.search(text, start, end)
    if item is not None and not text[start : item.start()].rstrip().endswith(CLOSING):
        start = item.start() + len(item.group()) - len(item.group().lstrip())
    return start


def _title_case(line: str) -> bool:
    """True when every word of four or more letters starts with a capital (numbers,
    "2015" or a year with its footnote mark "2023b", are no words here)."""
    long_words = [w for w in _WORD.findall(line) if len(w) >= 4 and w[0].isalpha()]
    return bool(long_words) and all(w[0].isupper() for w in long_words)


def _is_item(line: str, after_lead_in: bool) -> bool:
    """True for a list item: a bulleted line, or (after a lead-in) a short line with
    no closing punctuation that is not a title-cased heading."""
    if LIST_MARK.match(line):
        return True
    short = _words(line) <= HEADING_WORDS and not line.endswith(CLOSING)
    return after_lead_in and short and not _title_case(line)


def _laid_out_rows(
    text: str, start: int, end: int
) -> tuple[list[tuple[int, int]], tuple[int, int] | None]:
    """The rows of the paragraph `text[start:end]` when it is a table laid out by
    whitespace (PDF text of a table without cell borders), and its header line (the
    paragraph's first line when it is no row; else None): at least ROW_LINES lines
    of which most hold ROW_NUMBERS numbers or more and do not end a sentence (a
    leaflet's "Children aged 6 to 8 years: 5 ml every 4 to 6 hours." is prose), each
    such line a row. No rows for any other paragraph."""
    lines = [(start + m.start(), start + m.end()) for m in re.finditer(r"[^\n]+", text[start:end])]
    rows = [
        (s, e)
        for s, e in lines
        if len(_NUMBER.findall(text[s:e])) >= ROW_NUMBERS and not text[s:e].endswith(_FULL_STOP)
    ]
    if len(rows) < ROW_LINES or 2 * len(rows) <= len(lines):
        return [], None
    return rows, None if lines[0] == rows[0] else lines[0]


def _marker(line: str) -> tuple[str, int] | None:
    """The kind of `line`'s list marker and its place in its sequence: ("digit", 2)
    for "2." or "(2)", ("letter", 2) for "b." or "(b)", ("bullet", 0) for "•" or "-";
    None when it has none."""
    found = LIST_MARK.match(line)
    if found is None:
        return None
    sign = found.group().strip().strip("().")
    if sign[:1].isdigit():
        return "digit", int(sign)
    if sign[:1].isalpha():
        return "letter", ord(sign[0].lower()) - ord("a") + 1
    return "bullet", 0


def list_goes_on(text: str, start: int, end: int) -> bool:
    """Whether the span `start`-`end` of `text` ends with an item of a list that goes
    on after it: the span ends at a line's end; its last line that opens with a marker
    (`_marker`: "(c)", "3.", "-", "•") comes after a lead-in (a line ending with ":")
    and only the item's own wrapped lines (indented or in lower case) follow it; and
    the next line with words after the span opens with the next marker of the same
    kind ("(d)", "4.", another bullet). A numbered or lettered item may come after up
    to FURNITURE_LINES lines that end no sentence (a page's footer and header between
    "(c)" and "(d)"). Numbered clauses without a lead-in ("5. Confidentiality ..."
    over "6. Security ...") are no list here. A quote that stops inside a list reads
    as the whole list unless it is told otherwise."""
    if text[end:].lstrip(" \t")[:1] not in ("", "\n"):
        return False
    lines = [line for line in text[start:end].splitlines() if line.strip()]
    marked = [i for i, line in enumerate(lines) if _marker(line.strip()) is not None]
    if not marked or not any(ends_lead_in(line.rstrip()) for line in lines[: marked[-1]]):
        return False  # no item, or no lead-in before it: a clause or heading, no list
    if any(not (line[:1].isspace() or line[:1].islower()) for line in lines[marked[-1] + 1 :]):
        return False  # text after the last item: the quote does not end with it
    last = _marker(lines[marked[-1]].strip())
    if last is None:
        return False
    after = [line.strip() for line in text[end : end + LIST_CHARS].splitlines() if line.strip()]
    for line in after[: 1 if last[0] == "bullet" else FURNITURE_LINES + 1]:
        marker = _marker(line)
        if marker is not None or line.endswith(CLOSING):  # an item, or text: no footer
            return marker is not None and marker[0] == last[0] and marker[1] in (0, last[1] + 1)
    return False


def _in_list(
    marker: tuple[str, int] | None,
    first: tuple[str, int] | None,
    last: int,
    nested: tuple[str, int] | None,
) -> bool:
    """Whether an item with `marker` goes on a list whose first item's marker is
    `first` and whose last item of that kind was number `last`: an item of the same
    kind, one without a marker, or a sub-list of another kind ("a." to "c." under
    "1.") that starts at its first place or follows the sub-list's `nested` last
    marker; an item of another kind that starts no sub-list ("2." after "a." to "f.")
    ends the list."""
    if marker is None or first is None or marker[0] == first[0]:
        return True
    if nested is not None and marker[0] == nested[0]:
        return marker[1] in (0, nested[1] + 1)
    return marker[1] <= 1 and last > 0


def _continues(before: str, line: str) -> bool:
    """True when the paragraph `line` carries on the paragraph `before` (`runs_on`:
    that one stops mid-sentence and `line` starts in lower case, or with a number or an
    amount after a word that cannot end a sentence: "... the average total cost per
    operator to be" over "$7,650 (90 work-hours ...)."), but not when `line` starts
    as a footnote does ("a Based on ...", `_FOOTNOTE`)."""
    return runs_on(before, line) and _FOOTNOTE.match(line) is None


def _list_after(lines: list[tuple[int, int]], i: int, text: str) -> int:
    """The end of the list led in by line `i`: its following item lines that fit in
    LIST_CHARS from its start, else (when the first line after it is no item) the
    paragraphs after it, up to LIST_PARAGRAPHS, that fit in LIST_CHARS and are not
    headings or lead-ins themselves (at least the first one, whatever its length), and
    when the first opens with "1 " (`bare_number`), only those numbered 1, 2, 3 on;
    the line's own end when nothing follows. A short paragraph without closing
    punctuation is a heading, but in a list of fragments (its first paragraph has no
    closing punctuation, a web page's items without their bullets) only over a
    sentence ("2 GB of free disk space" over "A screen resolution of 1366 x 768" is
    an item). The list never ends on an item that
    ends with ":" (a lead-in of a list of its own that did not fit)."""
    start, end = lines[i]
    following = lines[i + 1 :]
    ends = [end]
    if following and _is_item(text[following[0][0] : following[0][1]], True):
        first = _marker(text[following[0][0] : following[0][1]])
        last, nested = 0, None
        for s, e in following:
            line = text[s:e]
            marker = _marker(line)
            if e - start > LIST_CHARS or not _in_list(marker, first, last, nested):
                break  # too long, or an item of another list ("2." after "a." to "f.")
            if not _is_item(line, True):
                break
            if marker is not None and first is not None and marker[0] == first[0]:
                last, nested = marker[1], None
            elif marker is not None:
                nested = marker
            ends.append(e)
    elif following:
        paragraphs = following[:LIST_PARAGRAPHS]
        fragments = not text[paragraphs[0][0] : paragraphs[0][1]].endswith(CLOSING)
        numbered = bare_number(text[paragraphs[0][0] : paragraphs[0][1]]) == 1
        for k, (s, e) in enumerate(paragraphs):
            paragraph = text[s:e]
            if k and (e - start > LIST_CHARS or ends_lead_in(paragraph)):
                break
            if numbered and bare_number(paragraph) != k + 1:
                break  # "1 Stop ...", "2 Keep ...": the list ends with its numbers
            short = _words(paragraph) <= HEADING_WORDS and not _states_a_value(paragraph)
            after = following[k + 1] if k + 1 < len(following) else None
            over_text = after is not None and text[after[0] : after[1]].endswith(CLOSING)
            if not paragraph.endswith(CLOSING) and short and (over_text or not fragments):
                break  # a heading: the list ended before it
            ends.append(e)
    while len(ends) > 1 and ends_lead_in(text[: ends[-1]]):
        ends.pop()  # an item that leads in a list of its own, cut off: not quoted
    return ends[-1]


def _line_before(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span of the last line of `text[start:end]` that has words, stripped (None
    when none has): a Markdown table's "|---|---|" line is passed over."""
    lines = [line for line in _LINE.finditer(text, start, end) if _words(line.group())]
    return (lines[-1].start(), lines[-1].end()) if lines else None


def _row(text: str, start: int, end: int) -> Unit:
    """The unit of the table row `text[start:end]`, without a form's answer boxes at
    its end (`_BOXES_AT_END`) when words are left before them."""
    boxes = _BOXES_AT_END.search(text, start, end)
    if boxes is not None and _words(text[start : boxes.start()]):
        end = boxes.start()
    return Unit(start, end, start, end)


def _record_lines(text: str, start: int, end: int) -> list[Unit]:
    """The units of the paragraph `text[start:end]` when it holds records laid out in
    lines and no sentence (a ledger's PDF text: "DHAW20190031 05/28/2019 ...
    TRANSPORTATION 618.00", then "TRAIN FARE FOR SEN HAWLEY ..."): at least ROW_LINES
    lines, half of them or more with an amount or a date (`_RECORD_VALUE`). Each line
    of at least MIN_WORDS words that is no contents line or citation is a unit,
    scored on itself: alone when it holds a value, else with the line before it when
    that holds one (the record's first line), else with the line after it when that
    does. None for any other paragraph (a table of contents, a reference list, a page
    of headings)."""
    lines = [(start + m.start(), start + m.end()) for m in _LINE.finditer(text[start:end])]
    valued = [_RECORD_VALUE.search(text, s, e) is not None for s, e in lines]
    if len(lines) < ROW_LINES or 2 * sum(valued) < len(lines):
        return []
    units = []
    for i, (s, e) in enumerate(lines):
        line = text[s:e]
        if _words(line) < MIN_WORDS or _CONTENTS.search(line) or _CITATION.search(line):
            continue
        if valued[i]:
            units.append(Unit(s, e, s, e))
        elif i > 0 and valued[i - 1]:
            units.append(Unit(lines[i - 1][0], e, s, e))
        elif i + 1 < len(lines) and valued[i + 1]:
            units.append(Unit(s, lines[i + 1][1], s, e))
    return units


def _next_line(lines: Sequence[tuple[int, int]], i: int, text: str) -> str:
    """The text of the line after line `i` of `lines` (spans of `text`), without its
    indent; "" after the last."""
    return text[lines[i + 1][0] : lines[i + 1][1]].lstrip() if i + 1 < len(lines) else ""


def _announced_list(
    lines: list[tuple[int, int]], i: int, text: str, start: int, item: bool
) -> int | None:
    """The end of the list that the paragraph `text[start:lines[i][1]]` announces
    without a colon (a short paragraph, no list item itself, with a sentence that says
    "the following" or "listed below", `_ANNOUNCES_LIST`, over a line that reads as an
    item, `_is_item`): where `_list_after` ends it; None for any other paragraph."""
    line = text[start : lines[i][1]]
    if item or _words(line) > SHORT_PARAGRAPH_WORDS or not _ANNOUNCES_LIST.search(line):
        return None
    if not _is_item(_next_line(lines, i, text), True):
        return None
    list_end = _list_after(lines, i, text)
    return list_end if list_end > lines[i][1] else None


def quotable_units(text: str, rows: Sequence[tuple[int, int]] = ()) -> list[Unit]:
    """Return the units of `text` worth quoting, in text order (see the module
    docstring): sentences, a lead-in line with the list it leads in, each list item
    with its lead-in when they fit in CONTEXT_CHARS, and each of `rows` (spans of
    `text`: table body rows, in order) with a word in it, in place of the paragraph
    it lies in."""
    units = []
    lines = _lines(text)
    lead_in: tuple[int, int, int] | None = None  # its start and end, and its list's end
    for i, (start, end) in enumerate(lines):
        inside = [(lo, hi) for lo, hi in rows if lo < end and start < hi]
        if inside:
            columns = _line_before(text, start, inside[0][0])
            units += [
                replace(_row(text, lo, hi), columns=columns, table=start)
                for lo, hi in inside
                if _words(text[lo:hi])
            ]
            lead_in = None
            continue
        laid_out, header = _laid_out_rows(text, start, end)
        if laid_out:
            units += [Unit(lo, hi, lo, hi, header, table=start) for lo, hi in laid_out]
            lead_in = None
            continue
        start = _after_heading_line(text, start, end)
        line = text[start:end]
        item = _is_item(line, lead_in is not None)
        if not item:
            lead_in = None
        if lead_in is None and _FOOTNOTE.match(line):
            continue  # "a. Administered as a 30-minute infusion": a note, not a list item
        if line.endswith(":") or (ends_lead_in(line) and _marker(_next_line(lines, i, text))):
            # a lead-in: quoted with its list, never alone (a dash, over a marked item)
            lead = _sentences(text, start, end)
            first = lead[-1][0] if lead else start
            list_end = _list_after(lines, i, text)
            listed = list_end > end and _words(text[first:end]) >= MIN_LEAD_IN_WORDS
            whole = listed and _words(line) <= SHORT_PARAGRAPH_WORDS
            whole = whole and _DEPENDENT_LEAD_IN.match(text[first:end]) is not None
            units += [  # the sentences before a lead-in that depends on them: with it
                # and its list in a short paragraph (quoted whole), else their own
                Unit(start, list_end, s, e) if whole else Unit(s, e, s, e)
                for s, e in lead[:-1]
                if worth_quoting(text[s:e], line)
            ]
            if listed:
                units.append(Unit(start if whole else first, list_end, first, end))
            lead_in = (first, end, list_end)
            continue
        sentences = [
            (s, e)
            for s, e in _sentences(text, start, end)
            if worth_quoting(text[s:e], line, in_list=item)
        ]
        announced = _announced_list(lines, i, text, start, item) if sentences else None
        if announced is not None:  # quoted whole, and with the list its sentence announces
            units += [
                Unit(start, announced if _ANNOUNCES_LIST.search(text[s:e]) else end, s, e)
                for s, e in sentences
            ]
            lead_in = (start, end, announced)
            continue
        if not sentences:
            units += _record_lines(text, start, end)
        short = _words(line) <= SHORT_PARAGRAPH_WORDS and not item
        item_lines = [] if short else _item_lines(text, start, end)
        for s, e in sentences:
            if short:  # a short paragraph is quoted whole, scored on each sentence
                units.append(Unit(start, end, s, e))
            elif lead_in is not None and lead_in[2] - lead_in[0] <= CONTEXT_CHARS:
                units.append(Unit(lead_in[0], max(e, lead_in[2]), s, e))  # the whole list
            elif lead_in is not None and e - lead_in[0] <= CONTEXT_CHARS:
                units.append(Unit(lead_in[0], e, s, e))
            else:
                lo, hi = next(((lo, hi) for lo, hi in item_lines if lo <= s and e <= hi), (s, e))
                units.append(Unit(lo, hi, s, e))
    return units


def _item_lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The lines of the paragraph `text[start:end]` (trimmed spans) of
    SHORT_PARAGRAPH_WORDS words or fewer, when its lines are set apart: more than one,
    each opening with a capital or a digit and ending with a full stop, "!" or "?" (the
    items of a list without bullets: "Blood thinners such as warfarin: do not stop
    these yourself. The pre-assessment nurse will give you individual
    instructions."). A sentence of such a line is quoted with the line whole, as a
    short paragraph is. [] for any other paragraph."""
    lines = [
        trim_span(text, start + m.start(), start + m.end())
        for m in re.finditer(r"[^\n]+", text[start:end])
    ]
    apart = len(lines) > 1 and all(
        text[lo:hi].endswith(_FULL_STOP) and text[lo].isalnum() and not text[lo].islower()
        for lo, hi in lines
        if lo < hi
    )
    return (
        [(lo, hi) for lo, hi in lines if _words(text[lo:hi]) <= SHORT_PARAGRAPH_WORDS]
        if apart
        else []
    )


def pointable_units(text: str, rows: Sequence[tuple[int, int]] = ()) -> list[Unit]:
    """The `quotable_units` of `text` with distinct spans, in text order: the passages a
    model can point at (the sentences of a short paragraph share one span, the
    paragraph, and are one passage)."""
    seen: set[tuple[int, int]] = set()
    units = []
    for unit in quotable_units(text, rows):
        if (unit.start, unit.end) not in seen:
            seen.add((unit.start, unit.end))
            units.append(unit)
    return units
