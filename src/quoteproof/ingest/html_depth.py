"""How deep and how costly an HTML page is to parse, found before it is parsed.

An HTML5 tree builder looks through its stack of open elements on most tags, so a
page that nests 100,000 elements costs time in the square of that depth (minutes);
one that makes it re-open many unclosed formatting elements (`<p>` with 300
`<b id=N>`, then `<p>x</p>` after `<p>x</p>`) builds hundreds of elements per tag.
`scan_nesting` reads the markup once and replays the HTML5 rules that decide
nesting on a model of the tree builder's state:

- an end tag closes its element when it is open within the same limits (scope,
  special elements, tables, `<select>`) as for the tree builder (`</form>` takes
  the form alone off the stack); `<p>`, `<li>`, `<dt>`, `<dd>`, headings, options
  and table parts close what the tree builder closes first, and a table gets the
  row group and row it would add; a formatting element's end tag runs the
  adoption agency (the element moves inside the first special element in it);
- formatting elements (`<b>`, `<a>`, `<font>`...) closed by other tags are kept
  and re-opened by text and most start tags, at most 3 alike (same start tag),
  until the cell, caption, object or template end tag that clears them;
- void elements never nest, nor self-closing tags in SVG or MathML; the text of
  `<script>` (with its `<!--` escapes), `<style>`, `<textarea>`, `<title>` and the
  like is not markup; an HTML tag inside SVG or MathML closes the SVG or MathML
  elements open.

Each element the model opens has its depth in the tree; an element taken off the
stack from under others leaves them as deep as they were. On real pages the depth
it finds is the parser's (checked on 500 pages); on generated tag soup it errs
upwards, except where formatting elements meet tables, `<select>`, `<button>` or
`<template>` in ways the model leaves out (foster parenting, the select and
template modes): there it can find less, so `check_parsed` measures the parsed
tree too. Its `work` (open elements looked at, formatting elements re-opened) is
what the parser does at least. `<html>`, `<head>` and `<body>` are not counted.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from dataclasses import dataclass
from functools import lru_cache

from selectolax.lexbor import LexborHTMLParser

from quoteproof.errors import IngestError

MAX_DEPTH = 512
"""Deepest nesting of elements a page may have (browsers stop nesting about here)."""

MAX_WORK_PER_TAG = 64
"""Most work the parser may do per tag of a page, on average: open elements it looks
through and formatting elements it re-opens (see `scan_nesting`)."""

MAX_ELEMENTS_PER_TAG = 4
"""Most elements a parsed page may hold per tag of its markup, on average (the
parser adds re-opened formatting elements, table rows and row groups)."""

MAX_ATTRIBUTES = 256
"""Most attributes one tag may have (the parsers compare each with all before it)."""

_LONG_TAG = 512  # shorter tags cannot hold MAX_ATTRIBUTES attributes

VOID = frozenset(
    "area base basefont bgsound br col embed frame hr image img input keygen link meta "
    "param source track wbr".split()
)
"""Elements that never have content (and so never nest)."""

RAW_TEXT = frozenset("iframe noembed noframes script style textarea title xmp".split())
"""HTML elements whose content is text up to their end tag, not markup."""

FORMATTING = frozenset("a b big code em font i nobr s small strike strong tt u".split())
"""Elements the tree builder re-opens after they were closed implicitly."""

MARKERS = frozenset("applet caption marquee object td template th".split())
"""Elements whose end forgets the formatting elements opened inside them."""

_FOREIGN_SCOPE = frozenset(
    "math:mi math:mn math:mo math:ms math:mtext math:annotation-xml svg:foreignobject "
    "svg:desc svg:title".split()
)

SCOPE = _FOREIGN_SCOPE | frozenset(
    "applet caption html marquee object select table td template th".split()
)
"""Elements a closing tag does not look past for its element (HTML5 "in scope"; and
`<select>`, whose content takes no other closing tags). SVG and MathML elements are
named `svg:name` and `math:name`."""

SPECIAL = SCOPE | frozenset(
    "address area article aside base basefont bgsound blockquote body br button center "
    "col colgroup dd details dialog dir div dl dt embed fieldset figcaption figure footer "
    "form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr iframe img input keygen "
    "li link listing main menu meta nav noembed noframes noscript ol p param plaintext pre "
    "script search section select source style summary tbody textarea tfoot thead title tr "
    "track ul wbr xmp".split()
)
"""HTML5's special elements (with SVG's and MathML's): an unknown end tag does not
look past them."""

CLOSES_P = frozenset(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption "
    "figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li dd dt listing main menu nav ol "
    "p pre search section summary ul xmp".split()
)
"""Start tags that close an open `<p>` first."""

BREAKOUT = frozenset(
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr "
    "i img li listing menu meta nobr ol p pre ruby s small span strong strike sub sup "
    "table tt u ul var".split()
)
"""Start tags that are HTML inside SVG or MathML (and `<font>` with `color`, `face`
or `size`)."""

_FOREIGN_ROOTS = frozenset({"svg", "math"})
_INTEGRATION_POINTS = {
    "svg": frozenset({"foreignobject", "desc", "title"}),
    "math": frozenset({"mi", "mn", "mo", "ms", "mtext"}),
}
_MATH_TEXT = frozenset({"math:mi", "math:mn", "math:mo", "math:ms", "math:mtext"})
_HTML_ANNOTATION = re.compile(
    r"""\sencoding\s*=\s*["']?(?:text/html|application/xhtml\+xml)["'\s/>]""", re.I
)
_FONT_BREAKOUT = re.compile(r"\s(?:color|face|size)[\s/=>]", re.I)
_SELF_CLOSING = re.compile(  # possessive: an unquoted value takes a "/" that follows it
    r"""<[^\s/>]+(?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]++))?)*\s*/>"""
)
_NOT_COUNTED = frozenset({"html", "head", "body"})
_HEADINGS = frozenset("h1 h2 h3 h4 h5 h6".split())
_TABLE_PARTS = frozenset("caption colgroup tbody td tfoot th thead tr".split())
_TABLE_STOPS = frozenset({"table", "template", "html"})
_ITEM_STOPS = SPECIAL - {"address", "div", "p"}
_BLOCK_ENDS = frozenset(
    "address applet article aside blockquote button center details dialog dir div dl "
    "fieldset figcaption figure footer header hgroup listing main marquee menu nav object "
    "ol pre search section select summary template ul".split()
)

# Start tag -> (the open elements it closes, the open elements that stop the search).
_SIBLINGS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "li": (frozenset({"li"}), _ITEM_STOPS - {"li"}),
    "dt": (frozenset({"dt", "dd"}), _ITEM_STOPS - {"dt", "dd"}),
    "dd": (frozenset({"dt", "dd"}), _ITEM_STOPS - {"dt", "dd"}),
}

# Start tag -> the elements it closes when they are the current element, in turn.
_CLOSES_CURRENT: dict[str, tuple[frozenset[str], ...]] = {
    **{heading: (_HEADINGS,) for heading in _HEADINGS},
    "option": (frozenset({"option"}),),
    "optgroup": (frozenset({"option"}),),
}

_NO_REOPEN = (CLOSES_P - {"xmp"}) | frozenset(
    "base basefont bgsound body caption col colgroup frame frameset head html iframe link "
    "meta noembed noframes param rb rp rt rtc script source style table tbody td template "
    "textarea tfoot th thead title tr track".split()
)
"""HTML start tags before which the tree builder re-opens no formatting element."""

_P = frozenset({"p"})
_ROW_GROUPS = frozenset({"tbody", "thead", "tfoot"})
_TABLE_ENDS = frozenset({"table", "tbody", "thead", "tfoot", "tr"})
_CELLS = frozenset({"td", "th", "caption"})
_IMPLIED_END = frozenset("dd dt li optgroup option p rb rp rt rtc".split())
_TRUE_SCOPE = SCOPE - {"select"}
_TABLE_CONTEXT = frozenset({"table", "tbody", "thead", "tfoot", "tr"})
_MODE_ANCHORS = frozenset({"td", "th", "caption", "template", "html", "select"})
_BUTTON_SCOPE = SCOPE | {"button"}
# A comment, or a start or end tag up to its first ">" (which ends it for this scan).
_MARKUP = re.compile(r"<(?:(!--)|(/?)([A-Za-z][^\t\n\f\r />]*)[^>]*>)")
_COMMENT_END = re.compile(r"--!?>")
_ATTRIBUTE = re.compile(r"""[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]*))?""")
# In a script: "<!--" (opening an escape unless "-->" follows at once), "-->", or
# "<script" / "</script" (group 1: the slash).
_SCRIPT_MARKS = re.compile(r"<!--(?!-*>)|-->|<(/?)script[\t\n\f\r />]", re.IGNORECASE)
_RAW_TEXT_END = {name: re.compile(rf"</{name}[\t\n\f\r />]", re.IGNORECASE) for name in RAW_TEXT}


@lru_cache(maxsize=256)
def _end_tag_stops(name: str) -> frozenset[str]:
    """What an end tag `</name>` does not look past for its element."""
    if name == "table":
        return frozenset({"template", "html"})
    if name == "template":
        return frozenset()  # it closes whatever is open inside it
    if name in _TABLE_PARTS:
        return _TABLE_STOPS
    if name == "p":
        return _BUTTON_SCOPE
    if name == "li":
        return SCOPE | {"ol", "ul"}
    if name in _BLOCK_ENDS or name in ("dd", "dt"):
        return SCOPE - {name}
    return SPECIAL  # formatting elements and any other


class _Entry:
    """A formatting element the tree builder keeps for re-opening: its start tag as
    written, its name, and its place in the list of kept elements."""

    __slots__ = ("kept", "key", "name", "serial")

    def __init__(self, key: str, name: str, serial: int, kept: _Kept) -> None:
        self.key, self.name, self.serial, self.kept = key, name, serial, kept


class _Kept:
    """The formatting elements kept since one marker: by start tag (in order, for
    the at-most-3-alike rule), and those whose element is closed (to re-open)."""

    __slots__ = ("alike", "closed")

    def __init__(self) -> None:
        self.alike: dict[str, deque[_Entry]] = {}
        self.closed: dict[_Entry, None] = {}

    def has(self, entry: _Entry) -> bool:
        return entry in self.alike.get(entry.key, ())  # at most 3 alike

    def forget(self, entry: _Entry) -> None:
        if self.has(entry):
            self.alike[entry.key].remove(entry)
        self.closed.pop(entry, None)


class _Model:
    """The tree builder's stack of open elements, as parallel lists (name, name as
    in `SCOPE`, depth in the tree, the namespace of its content, its formatting
    entry), and its list of kept formatting elements, split at markers."""

    __slots__ = (
        "content",
        "depths",
        "entries",
        "form_set",
        "html",
        "kept",
        "marks",
        "names",
        "open",
        "serial",
        "work",
    )

    def __init__(self) -> None:
        self.names: list[str] = []
        self.marks: list[str] = []  # names as in `SCOPE` and `SPECIAL`
        # How deep in the tree each open element is: one more than the element that
        # was current when it opened (an element taken off the stack from under
        # others leaves them where they are in the tree).
        self.depths: list[int] = []
        # The namespace of each element's content ("svg", "math"; "" for HTML);
        # [0]: outside every element.
        self.content: list[str] = [""]
        self.entries: list[_Entry | None] = []
        self.open: Counter[str] = Counter()
        # Per marker: a marker is set when a cell, caption, object, applet, marquee
        # or template opens, and cleared by its end tag or when a table closes the
        # cell or caption (not when it leaves the stack otherwise).
        self.kept: list[_Kept] = [_Kept()]
        self.html = True  # whether the last start tag was an HTML element
        self.form_set = False  # the tree builder's form element pointer is set
        # Open elements looked at and formatting elements re-opened so far: the tree
        # builder does at least this much.
        self.work = 0
        self.serial = 0

    def depth(self) -> int:
        """The depth of the current element, plus the formatting elements that text
        would re-open under it."""
        return (self.depths[-1] if self.depths else 0) + len(self.kept[-1].closed)

    def in_foreign(self) -> bool:
        """Whether the current element's content is SVG or MathML."""
        return bool(self.content[-1])

    # Opening and closing elements.

    def _push(self, name: str, mark: str | None = None, content: str = "") -> None:
        self.depths.append((self.depths[-1] if self.depths else 0) + 1)
        self.names.append(name)
        self.marks.append(mark or name)
        self.content.append(content)
        self.entries.append(None)
        self.open[mark or name] += 1
        if name in MARKERS and mark is None:
            self.kept.append(_Kept())

    def _push_formatting(self, name: str, key: str) -> None:
        """Open HTML formatting element `name` and keep it (at most 3 alike kept: a
        fourth pushes out the first, which stays open if it is)."""
        kept = self.kept[-1]
        alike = kept.alike.setdefault(key, deque())
        if len(alike) >= 3:
            first = alike.popleft()
            if first in kept.closed:
                del kept.closed[first]
            else:
                self.entries[self._entry_position(first)] = None
        self.serial += 1
        entry = _Entry(key, name, self.serial, kept)
        alike.append(entry)
        self._push(name)
        self.entries[-1] = entry

    def _entry_position(self, entry: _Entry) -> int:
        for position in range(len(self.entries) - 1, -1, -1):
            self.work += 1
            if self.entries[position] is entry:
                return position
        raise ValueError("entry not open")

    def reopen(self) -> None:
        """Re-open the kept formatting elements closed since the last marker."""
        closed = self.kept[-1].closed
        if closed:
            for entry in sorted(closed, key=lambda entry: entry.serial):
                self._push(entry.name)
                self.entries[-1] = entry
                self.work += 1
            closed.clear()

    def _closed(self, entry: _Entry | None) -> None:
        """Note that the element of `entry` left the stack (it stays kept)."""
        if entry is not None and entry.kept.has(entry):
            entry.kept.closed[entry] = None

    def _clear_marker(self) -> None:
        """Forget the formatting elements kept since the last marker, and it."""
        if len(self.kept) > 1:
            self.kept.pop()

    def _pop_to(self, position: int) -> bool:
        """Pop the elements from `position` up (their kept entries stay, closed);
        return whether a cell or caption was among them."""
        cell = False
        for index in range(len(self.names) - 1, position - 1, -1):
            mark = self.marks[index]
            self.open[mark] -= 1
            self._closed(self.entries[index])
            cell = cell or mark in _CELLS
        del self.names[position:], self.marks[position:], self.depths[position:]
        del self.entries[position:], self.content[position + 1 :]
        return cell

    def _forget(self, entry: _Entry | None) -> None:
        """Stop keeping `entry` (its element was closed by its own end tag)."""
        if entry is not None:
            entry.kept.forget(entry)

    def _remove(self, position: int) -> None:
        """Take the element at `position` off the stack, leaving those above it."""
        self.open[self.marks[position]] -= 1
        self._closed(self.entries[position])
        del self.names[position], self.marks[position], self.depths[position]
        del self.entries[position], self.content[position + 1]

    def _insert(self, position: int, name: str, entry: _Entry | None) -> None:
        """Put HTML element `name` on the stack just above `position`, as the parent
        of the elements open above it."""
        depths = self.depths
        self.work += len(depths) - position
        for index in range(position + 1, len(depths)):
            depths[index] += 1
        depths.insert(position + 1, depths[position] + 1)
        self.names.insert(position + 1, name)
        self.marks.insert(position + 1, name)
        self.content.insert(position + 2, "")
        self.entries.insert(position + 1, entry)
        self.open[name] += 1
        if entry is not None:
            entry.kept.closed.pop(entry, None)

    def _nearest(self, targets: frozenset[str], stops: frozenset[str] | None) -> int | None:
        """The position of the nearest open element in `targets` with none of `stops`
        above it (`stops` None: only the current element), or None."""
        if not any(self.open[name] for name in targets):
            return None
        marks = self.marks
        top = len(marks) - 1
        for position in range(top, top - 1 if stops is None else -1, -1):
            self.work += 1
            if marks[position] in targets:
                return position
            if stops is not None and marks[position] in stops:
                return None
        return None

    def close(self, targets: frozenset[str], stops: frozenset[str] | None) -> bool | None:
        """Pop down to and including the nearest open element in `targets` (see
        `_nearest`); return what `_pop_to` does, or None when there is none."""
        position = self._nearest(targets, stops)
        return None if position is None else self._pop_to(position)

    def _table_mode(self) -> int | None:
        """The position of the table, row group or row whose content the current
        element is (put before the table by the tree builder, "in table" mode), or
        None when the current element is in a cell, a caption or outside tables."""
        position = self._nearest(_TABLE_CONTEXT | _MODE_ANCHORS, frozenset())
        return position if position is not None and self.marks[position] in _TABLE_CONTEXT else None

    def _break_out(self) -> None:
        """Close SVG and MathML elements up to HTML content, as an HTML tag does."""
        while self.content[-1]:
            self._pop_to(len(self.names) - 1)

    # The adoption agency.

    def _find_formatting(self, name: str) -> int | None:
        """The position of the nearest open formatting element `name` kept since the
        last marker, or None."""
        marks, entries, kept = self.marks, self.entries, self.kept[-1]
        for position in range(len(marks) - 1, -1, -1):
            self.work += 1
            entry = entries[position]
            if marks[position] == name and entry is not None and entry.kept is kept:
                return position
        return None

    def adopt(self, name: str) -> bool:
        """The adoption agency for the end of formatting element `name`: return False
        when none is open since the last marker (the tag is then an ordinary end
        tag). A formatting element with a special element inside is moved into it
        (up to 8 times), then closed with what is open inside it."""
        entry = self.entries[-1] if self.entries else None
        if self.marks[-1] == name and entry is not None and entry.kept is self.kept[-1]:
            self._pop_to(len(self.marks) - 1)  # the current element: nothing to adopt
            self._forget(entry)
            return True
        for attempt in range(8):
            position = self._find_formatting(name)
            if position is None:
                return attempt > 0
            inside = range(position + 1, len(self.marks))
            self.work += 2 * len(inside)
            if any(self.marks[index] in SCOPE for index in inside):
                return True  # not in scope: ignored
            block = next((index for index in inside if self.marks[index] in SPECIAL), None)
            entry = self.entries[position]
            if block is None:
                self._pop_to(position)
                self._forget(entry)
                return True
            for index in range(block - 1, position, -1):
                if self.entries[index] is None:  # not kept: leaves the stack
                    self._remove(index)
                    block -= 1
            self._remove(position)
            self._insert(block - 1, name, entry)
        return True

    # Tags.

    def text(self, whitespace: bool) -> None:
        """Apply text (only `whitespace`): in HTML content it re-opens the kept
        formatting elements, except whitespace in a table."""
        if (
            self.kept[-1].closed
            and not self.content[-1]
            and not (whitespace and self._table_mode() is not None)
        ):
            self.reopen()

    def start(self, name: str, tag: str) -> int:
        """Apply the start tag `tag` (as written) of element `name`; return the depth
        of the element it adds to the tree (open or not)."""
        foreign = self.content[-1]
        if name in ("mglyph", "malignmark") and self.marks and self.marks[-1] in _MATH_TEXT:
            foreign = "math"  # MathML even in MathML text
        if foreign and (
            name in BREAKOUT or (name == "font" and _FONT_BREAKOUT.search(tag) is not None)
        ):
            self._break_out()
            foreign = ""
        self.html = not foreign
        if not foreign:
            if (
                name in _NOT_COUNTED
                or (name == "form" and self.form_set and not self.open["template"])
                or (name in _TABLE_PARTS and not self.open["table"] and not self.open["template"])
            ):
                return self.depth()  # the tree builder ignores it
            if self._closes_own_kind(name):
                return self.depth()
            self._close_siblings(name)
            if name not in _NO_REOPEN:
                self.reopen()
        if name == "col":
            return self.depth() + 2  # inside a <colgroup> the tree builder may add
        if (not foreign and name in VOID) or (
            (foreign or name in _FOREIGN_ROOTS)
            and tag.endswith("/>")
            and _SELF_CLOSING.fullmatch(tag) is not None
        ):
            return self.depth() + 1
        if name in _FOREIGN_ROOTS and (
            not foreign or (name == "svg" and self.marks[-1] == "math:annotation-xml")
        ):
            foreign = content = name  # an <svg> or <math> element of its own
        elif not foreign or name in _INTEGRATION_POINTS[foreign]:
            content = ""
        elif name == "annotation-xml" and foreign == "math":
            content = "" if _HTML_ANNOTATION.search(tag) else foreign
        else:
            content = foreign
        if foreign:
            self._push(name, f"{foreign}:{name}", content)
        elif name in FORMATTING:
            self._push_formatting(name, tag)
        else:
            self._push(name)
            if name == "form" and not self.open["template"]:
                self.form_set = True
        return self.depth()

    def _closes_own_kind(self, name: str) -> bool:
        """Close what the HTML start tag `name` closes of its own kind (a `<table>`
        in a table, a `<select>`, `<a>` or `<nobr>` inside one); return whether
        the tag opens nothing."""
        if name == "table" and self._table_mode() is not None:
            self.close(frozenset({"table"}), frozenset({"template", "html"}))
        elif name in ("select", "input", "keygen") and self.open["select"]:
            return self.close(frozenset({"select"}), _TRUE_SCOPE) is not None and name == "select"
        elif name in ("a", "nobr") and self.open[name]:
            self.adopt(name)
            position = self._find_formatting(name)
            if position is not None:
                entry = self.entries[position]
                self._remove(position)
                self._forget(entry)
        return False

    def _close_siblings(self, name: str) -> None:
        """Close what the HTML start tag `name` closes before it opens."""
        if name in CLOSES_P and self.open["p"]:
            self.close(_P, _BUTTON_SCOPE)
        for closed in _CLOSES_CURRENT.get(name, ()):
            self.close(closed, None)
        if name in ("option", "optgroup") and self.open["select"]:
            implied = _IMPLIED_END if name == "optgroup" else _IMPLIED_END - {"optgroup"}
            while self.marks and self.marks[-1] in implied:
                self._pop_to(len(self.marks) - 1)
        if name in _SIBLINGS:
            self.close(*_SIBLINGS[name])
        elif name in _TABLE_PARTS and self.open["table"]:
            self._table_start(name)

    def _table_start(self, name: str) -> None:
        """Open table part `name` (caption, row group, row, cell) where the tree
        builder puts it: after closing the open cell or caption and the elements the
        table holds above the part's parent, adding a missing row group and row."""
        table = self._nearest(frozenset({"table"}), frozenset({"template", "html"}))
        if table is None:
            return
        marks = self.marks
        inside = range(len(marks) - 1, table, -1)
        group = next((i for i in inside if marks[i] in _ROW_GROUPS), None)
        row = next((i for i in inside if marks[i] == "tr"), None)
        if name in ("td", "th") and row is not None:
            self._pop_above_table_part(row)
        elif name in ("td", "th", "tr") and group is not None:
            self._pop_above_table_part(group)
            if name != "tr":
                self._push("tr")
        else:
            self._pop_above_table_part(table)
            if name in ("td", "th", "tr"):
                self._push("tbody")
                if name != "tr":
                    self._push("tr")

    def _pop_above_table_part(self, position: int) -> None:
        """Pop what is open above the table, row group or row at `position`; a cell
        or caption closed so clears its marker."""
        if position + 1 < len(self.names) and self._pop_to(position + 1):
            self._clear_marker()

    def end(self, name: str) -> None:
        """Apply the end tag of element `name`."""
        if name in ("p", "br") and self.content[-1]:
            self._break_out()
        if name in _TABLE_PARTS and not self.open["table"]:
            return  # outside a table the tree builder ignores it
        if self.marks and ":" in self.marks[-1] and self._close_foreign(name):
            return
        if name in FORMATTING and self.open[name] and self.adopt(name):
            return
        if name == "form":
            self.form_set = False
            position = self._nearest(frozenset({"form"}), SCOPE)
            if position is not None:
                self._remove(position)
        elif name in _HEADINGS:
            self.close(_HEADINGS, SCOPE)
        elif self.open[name]:
            if self.marks[-1] == name:  # the current element: every rule closes it
                popped: bool | None = self._pop_to(len(self.names) - 1)
            else:
                popped = self.close(frozenset({name}), _end_tag_stops(name))
            if popped is not None and (name in MARKERS or (name in _TABLE_ENDS and popped)):
                self._clear_marker()

    def _close_foreign(self, name: str) -> bool:
        """Close the nearest SVG or MathML element `name` above any HTML one; return
        whether one was closed."""
        marks = self.marks
        for position in range(len(marks) - 1, -1, -1):
            self.work += 1
            if ":" not in marks[position]:
                return False
            if self.names[position] == name:
                self._pop_to(position)
                return True
        return False


def _raw_text_end(html: str, name: str, position: int) -> int:
    """Where the text of raw-text element `name` that starts at `position` ends: at
    its end tag (for `<script>`, one outside `<!-- <script>` escapes); else at the
    end of `html`."""
    if name != "script":
        found = _RAW_TEXT_END[name].search(html, position)
        return found.start() if found is not None else len(html)
    escaped = double = False
    for mark in _SCRIPT_MARKS.finditer(html, position):
        text = mark[0]
        if text == "<!--":
            escaped = escaped or not double
        elif text == "-->":
            escaped = double = False
        elif mark[1]:  # </script
            if not double:
                return mark.start()
            double = False
        elif escaped:
            double = True
    return len(html)


@dataclass(frozen=True)
class Nesting:
    """What `scan_nesting` found: the deepest an element may be in the tree, the
    work the tree builder does at least (see the module docstring), the start tags
    read, and the most attributes one of them has (counted in long tags only)."""

    depth: int
    work: int
    start_tags: int
    attributes: int = 0


def scan_nesting(html: str, max_depth: int, work_per_tag: int) -> Nesting:
    """Scan `html` as the HTML5 tree builder would read it (see the module
    docstring). The scan stops as soon as the depth passes `max_depth` or the work
    passes `work_per_tag` per start tag read plus `max_depth`: it costs at most
    that much per tag, O(len(html)) in all."""
    model = _Model()
    deepest = tags = attributes = 0
    position = 0
    end = html.rfind(">") + 1  # every tag the scan finds ends by here
    while True:
        resume = None
        for match in _MARKUP.finditer(html, position, end):
            if match[1]:  # a comment
                close = _COMMENT_END.search(html, match.start() + 2)
                resume = close.end() if close is not None else len(html)
                break
            if match.start() > position:
                model.text(html[position : match.start()].isspace())
            position = match.end()
            name = match[3].lower()
            if match[2]:
                if name in ("p", "br"):  # may add an element (`</p>` alone, `</br>`)
                    deepest = max(deepest, model.depth() + 1)
                model.end(name)
                continue
            tags += 1
            if len(match[0]) > _LONG_TAG:
                attributes = max(attributes, len(_ATTRIBUTE.findall(match[0], len(name) + 1)))
            deepest = max(deepest, model.start(name, match[0]))
            if deepest > max_depth or model.work > work_per_tag * tags + max_depth:
                return Nesting(deepest, model.work, tags, attributes)
            if not model.html:
                continue
            if name in RAW_TEXT:
                resume = _raw_text_end(html, name, position)
                break
            if name == "plaintext":
                resume = len(html)
                break
        if resume is None:
            break
        position = resume
    return Nesting(max(deepest, model.depth()), model.work, tags, attributes)


def check_unparsed(html: str, path: str) -> None:
    """Refuse, before parsing, a page the HTML5 parser would spend more than linear
    time on (see `scan_nesting`): nested more than `MAX_DEPTH` deep, making it do
    more than `MAX_WORK_PER_TAG` steps per tag, or with a tag of more than
    `MAX_ATTRIBUTES` attributes. Raises `IngestError` naming the limit."""
    found = scan_nesting(html, MAX_DEPTH, MAX_WORK_PER_TAG)
    if found.depth > MAX_DEPTH:
        raise IngestError(path, _TOO_DEEP)
    if found.work > MAX_WORK_PER_TAG * found.start_tags + MAX_DEPTH:
        raise IngestError(
            path,
            f"HTML would make the parser do more than {MAX_WORK_PER_TAG} steps per tag "
            "(the limit): unclosed formatting tags such as <b> or <font> re-opened "
            "again and again, or tags closed through deeply nested ones",
        )
    if found.attributes > MAX_ATTRIBUTES:
        raise IngestError(
            path, f"an HTML tag has more than {MAX_ATTRIBUTES} attributes (the limit)"
        )


def check_parsed(tree: LexborHTMLParser, html: str, path: str) -> None:
    """Refuse a parsed page nested more than `MAX_DEPTH` deep, or holding more than
    `MAX_ELEMENTS_PER_TAG` elements per tag of `html`: what `check_unparsed` cannot
    foresee (the HTML5 rules it leaves out), found exactly, before any work that
    grows with the depth. O(elements)."""
    root = tree.root
    deepest = elements = 0
    stack = [(root, 1)] if root is not None else []
    while stack:
        node, depth = stack.pop()
        elements += 1
        deepest = max(deepest, depth)
        child = node.child
        while child is not None:
            if child.is_element_node:
                stack.append((child, depth + 1))
            child = child.next
    if deepest - 2 > MAX_DEPTH:  # not counting <html> and <body>, as `scan_nesting`
        raise IngestError(path, _TOO_DEEP)
    if elements > MAX_ELEMENTS_PER_TAG * html.count("<") + MAX_DEPTH:
        raise IngestError(
            path,
            f"HTML makes the parser build more than {MAX_ELEMENTS_PER_TAG} elements per "
            "tag (the limit): unclosed formatting tags such as <b> or <font> re-opened "
            "again and again",
        )


_TOO_DEEP = f"HTML nested more than {MAX_DEPTH} elements deep (the limit)"
