"""How deeply an HTML page nests its elements, estimated before it is parsed.

An HTML5 tree builder looks through its stack of open elements on most tags, so a
page that nests 100,000 elements costs time in the square of that depth (minutes),
and one that makes it re-open many formatting elements (`<p><b id=1></p><p><b
id=2></p>...`) costs more still. `nesting_depth` scans the markup once and replays
the HTML5 rules that decide nesting on a model of that stack:

- an end tag closes its element when it is open within the same limits (scope,
  special elements, tables, `<select>`) as for the tree builder, `</form>` only
  when it is the current element; `<p>`, `<li>`, `<dt>`, `<dd>`, headings, options,
  and inside a table its rows, cells and row groups, close their open sibling as
  the tree builder does;
- formatting elements (`<b>`, `<a>`, `<font>`...) that were left open are counted
  as the tree builder keeps them for re-opening: at most 3 alike (same start tag),
  forgotten when the table cell, caption, object or template that holds them closes;
- void elements never nest, nor self-closing tags in SVG or MathML; the text of
  `<script>`, `<style>`, `<textarea>`, `<title>` and the like is not markup; an
  HTML tag inside SVG or MathML closes the SVG or MathML elements open.

Each rule the model follows closes no more than the tree builder would; where a rule
would look through more than `LOOKBACK` open elements, or the tree builder would do
something the model leaves out (foster parenting, the adoption agency), the model
keeps elements open. So its depth errs upwards: a page it finds within a limit is
parsed without the squared cost. `<html>`, `<head>` and `<body>` are not counted.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

LOOKBACK = 64
"""Most open elements a rule looks through for the element it closes."""

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
_ROW_PARENTS = {"td": frozenset({"tr"}), "th": frozenset({"tr"}), "tr": frozenset({"tbody", "thead", "tfoot"})}
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
_TABLE_SIBLINGS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "td": (frozenset({"td", "th"}), frozenset({"tr", "select"}) | _TABLE_STOPS),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "select"}) | _TABLE_STOPS),
    "tr": (frozenset({"tr"}), frozenset({"tbody", "thead", "tfoot", "select"}) | _TABLE_STOPS),
    **dict.fromkeys(
        ("tbody", "thead", "tfoot"),
        (frozenset({"tbody", "thead", "tfoot"}), frozenset({"select"}) | _TABLE_STOPS),
    ),
}

# Start tag -> the elements it closes when they are the current element, in turn.
_CLOSES_CURRENT: dict[str, tuple[frozenset[str], ...]] = {
    **{heading: (_HEADINGS,) for heading in _HEADINGS},
    "option": (frozenset({"option"}),),
    "optgroup": (frozenset({"option"}),),
}

_P = frozenset({"p"})
_TRUE_SCOPE = SCOPE - {"select"}
_TABLE_CONTEXT = frozenset({"table", "tbody", "thead", "tfoot", "tr"})
_MODE_ANCHORS = frozenset({"td", "th", "caption", "template", "html", "select"})
_BUTTON_SCOPE = SCOPE | {"button"}
# A comment, or a start or end tag up to its first ">" (which ends it for this scan).
_MARKUP = re.compile(r"<(?:(!--)|(/?)([A-Za-z][^\t\n\f\r />]*)[^>]*>)")
_COMMENT_END = re.compile(r"--!?>")
# In a script: "<!--" (opening an escape unless "-->" follows at once), "-->", or
# "<script" / "</script" (group 1: the slash).
_SCRIPT_MARKS = re.compile(r"<!--(?!-*>)|-->|<(/?)script[\t\n\f\r />]", re.IGNORECASE)
_RAW_TEXT_END = {
    name: re.compile(rf"</{name}[\t\n\f\r />]", re.IGNORECASE) for name in RAW_TEXT
}


@lru_cache(maxsize=256)
def _end_tag_stops(name: str) -> frozenset[str]:
    """What an end tag `</name>` does not look past for its element."""
    if name == "table":
        return frozenset({"template", "html"})
    if name in _TABLE_PARTS:
        return _TABLE_STOPS
    if name == "p":
        return _BUTTON_SCOPE
    if name == "li":
        return SCOPE | {"ol", "ul"}
    if name in _BLOCK_ENDS or name in ("dd", "dt"):
        return SCOPE - {name}
    return SPECIAL  # formatting elements and any other


class _Formatting:
    """The formatting elements kept for re-opening since the last marker: how many
    of each start tag (at most 3 alike), and in all."""

    __slots__ = ("alike", "size")

    def __init__(self) -> None:
        self.alike: dict[str, int] = {}
        self.size = 0

    def add(self, key: str) -> int:
        """Keep one more `key`; return by how many the kept elements grew."""
        count = self.alike.get(key, 0)
        if count >= 3:  # a fourth alike pushes out the first
            return 0
        self.alike[key] = count + 1
        self.size += 1
        return 1

    def remove(self, key: str) -> int:
        """Forget one `key`; return by how many the kept elements shrank."""
        count = self.alike.get(key, 0)
        if count == 0:
            return 0
        self.alike[key] = count - 1
        self.size -= 1
        return 1


class _Model:
    """The stack of open elements (parallel lists: names, formatting keys, whether
    the element's content is SVG or MathML) and the formatting elements kept for
    re-opening, per marker."""

    __slots__ = (
        "names", "marks", "depths", "keys", "foreign", "open", "kept", "kept_total", "html"
    )

    def __init__(self) -> None:
        self.names: list[str] = []
        self.marks: list[str] = []  # names as in `SCOPE` and `SPECIAL`
        # How deep in the tree each open element is: one more than the element that
        # was current when it opened (an element taken off the stack from under
        # others leaves them where they are in the tree).
        self.depths: list[int] = []
        self.keys: list[str | None] = []
        # The namespace of each element's content ("svg", "math"; "" for HTML); [0]:
        # outside every element.
        self.foreign: list[str] = [""]
        self.open: Counter[str] = Counter()
        self.kept: list[_Formatting] = [_Formatting()]
        self.kept_total = 0
        self.html = True  # whether the last start tag was an HTML element

    def depth(self) -> int:
        """The depth of the current element, plus every kept formatting element it
        may re-open."""
        return (self.depths[-1] if self.depths else 0) + self.kept_total

    def in_foreign(self) -> bool:
        """Whether the current element's content is SVG or MathML."""
        return bool(self.foreign[-1])

    def start(self, name: str, tag: str) -> int:
        """Apply the start tag `tag` (as written) of element `name`; return the depth
        of the element it adds to the tree (open or not)."""
        foreign = self.foreign[-1]
        if name in ("mglyph", "malignmark") and self.marks and self.marks[-1] in _MATH_TEXT:
            foreign = "math"  # MathML even in MathML text
        if foreign and (
            name in BREAKOUT or (name == "font" and _FONT_BREAKOUT.search(tag) is not None)
        ):
            self._break_out()
            foreign = ""
        if not foreign:
            if name in _NOT_COUNTED or (name == "form" and self.open["form"]):
                return self.depth()  # the tree builder ignores it
            if self._reopens(name):
                return self.depth()
            self._close_siblings(name)
        self.html = not foreign
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
            foreign = content_foreign = name  # an <svg> or <math> element of its own
        elif not foreign or name in _INTEGRATION_POINTS[foreign]:
            content_foreign = ""
        elif name == "annotation-xml" and foreign == "math":
            content_foreign = "" if _HTML_ANNOTATION.search(tag) else foreign
        else:
            content_foreign = foreign
        key = tag if name in FORMATTING and not foreign else None
        self._push(name, key, content_foreign, f"{foreign}:{name}" if foreign else name)
        return self.depth()

    def _reopens(self, name: str) -> bool:
        """Close what the HTML start tag `name` closes of its own kind (a `<table>`
        in a table, a `<select>`, `<a>` or `<nobr>` inside one); return whether
        the tag opens nothing."""
        top = self.marks[-1] if self.marks else ""
        if name == "table" and self._table_mode() is not None:
            self.close(frozenset({"table"}), frozenset({"template", "html"}))
        elif name in ("select", "input", "keygen") and self.open["select"]:
            return self.close(frozenset({"select"}), _TRUE_SCOPE) and name == "select"
        elif name in ("a", "nobr") and self.open[name]:
            self.adopt(name)
            position = self._find_formatting(name)
            if position is not None:
                self._remove(position, own_end=True)
        return False

    def _find_formatting(self, name: str) -> int | None:
        """The position of the nearest open formatting element `name` since the last
        marker, or None."""
        marks, keys = self.marks, self.keys
        for position in range(len(marks) - 1, max(-1, len(marks) - 1 - LOOKBACK), -1):
            mark = marks[position]
            if mark == name and keys[position] is not None:
                return position
            if mark in MARKERS:
                return None
        return None

    def adopt(self, name: str) -> bool:
        """The adoption agency for the end of formatting element `name`: return False
        when none is open since the last marker (the tag is then an ordinary end
        tag). A formatting element with a special element inside is moved into it
        (up to 8 times), then closed with what is open inside it."""
        for _ in range(8):
            position = self._find_formatting(name)
            if position is None:
                return _ > 0
            inside = range(position + 1, len(self.marks))
            if any(self.marks[index] in _TRUE_SCOPE for index in inside):
                return True  # not in scope: ignored
            block = next((index for index in inside if self.marks[index] in SPECIAL), None)
            if block is None:
                self._pop_to(position, own_end=True)
                return True
            key = self.keys[position]
            for index in range(block - 1, position, -1):
                if self.keys[index] is None:  # not kept for re-opening: leaves the stack
                    self._remove(index)
                    block -= 1
            self._remove(position)
            self._insert(block - 1, name, key)
        return True

    def _remove(self, position: int, own_end: bool = False) -> None:
        """Take the element at `position` off the stack, leaving those above it."""
        name, key = self.names[position], self.keys[position]
        self.open[name] -= 1
        del self.names[position], self.marks[position], self.keys[position]
        del self.depths[position]
        del self.foreign[position + 1]
        if own_end and key is not None:
            self.kept_total -= self.kept[-1].remove(key)

    def _insert(self, position: int, name: str, key: str | None) -> None:
        """Put HTML element `name` on the stack just above `position`, as the parent
        of the elements open above it."""
        depths = self.depths
        for index in range(position + 1, len(depths)):
            depths[index] += 1
        depths.insert(position + 1, depths[position] + 1)
        self.names.insert(position + 1, name)
        self.marks.insert(position + 1, name)
        self.keys.insert(position + 1, key)
        self.foreign.insert(position + 2, "")
        self.open[name] += 1

    def _break_out(self) -> None:
        """Close SVG and MathML elements up to HTML content, as an HTML tag does."""
        while self.foreign[-1]:
            self._pop_to(len(self.names) - 1, own_end=False)

    def _push(
        self, name: str, key: str | None, content_foreign: str = "", mark: str | None = None
    ) -> None:
        self.depths.append((self.depths[-1] if self.depths else 0) + 1)
        self.names.append(name)
        self.marks.append(mark or name)
        self.keys.append(key)
        self.foreign.append(content_foreign)
        self.open[name] += 1
        if key is not None:
            self.kept_total += self.kept[-1].add(key)
        elif name in MARKERS and not self.foreign[-2]:
            self.kept.append(_Formatting())

    def _push_implied(self, name: str) -> None:
        """Open the row group and row the tree builder adds for a cell or row."""
        if self.names[-1] not in ("tbody", "thead", "tfoot", "tr"):
            self._push("tbody", None)
        if name != "tr" and self.names[-1] != "tr":
            self._push("tr", None)

    def _close_siblings(self, name: str) -> None:
        """Close what the HTML start tag `name` closes before it opens."""
        if name in CLOSES_P and self.open["p"]:
            self.close(_P, _BUTTON_SCOPE)
        for closed in _CLOSES_CURRENT.get(name, ()):
            self.close(closed, None)
        if name == "optgroup" and self.open["select"]:
            self.close(frozenset({"optgroup"}), None)
        if name in _SIBLINGS:
            self.close(*_SIBLINGS[name])
        elif name in _TABLE_PARTS and self.open["table"]:
            anchor = self._table_mode()
            if anchor is not None:  # what was put before the table closes
                if name in ("caption", "colgroup"):  # and so do its row groups
                    anchor = self._nearest(frozenset({"table"}), _TABLE_STOPS)
                self._pop_above(anchor)
            if name in _TABLE_SIBLINGS:
                self.close(*_TABLE_SIBLINGS[name])
            top = self.names[-1] if self.names else ""
            if name in ("td", "th", "tr") and top not in _ROW_PARENTS[name]:
                self._push_implied(name)

    def end(self, name: str) -> None:
        """Apply the end tag of element `name`."""
        if name in ("p", "br") and self.foreign[-1]:
            self._break_out()
        if name in _TABLE_PARTS and not self.open["table"]:
            return  # outside a table the tree builder ignores it
        if self.marks and ":" in self.marks[-1] and self._close_foreign(name):
            return
        if name in FORMATTING and self.open[name] and self.adopt(name):
            return
        if name == "form":
            self._close_form()
        elif self.marks and self.marks[-1] == name:
            self._pop_to(len(self.names) - 1)  # the current element: every rule closes it
        elif name in _HEADINGS:
            self.close(_HEADINGS, SCOPE)
        elif self.open[name]:
            self.close(frozenset({name}), _end_tag_stops(name), own_end=True)

    def _close_form(self) -> None:
        """`</form>`: take the nearest form in scope off the stack, leaving what is
        open inside it."""
        marks = self.marks
        for position in range(len(marks) - 1, max(-1, len(marks) - 1 - LOOKBACK), -1):
            if marks[position] == "form":
                self._remove(position)
                return
            if marks[position] in SCOPE:
                return

    def _close_foreign(self, name: str) -> bool:
        """Close the nearest SVG or MathML element `name` above any HTML one; return
        whether one was closed."""
        marks = self.marks
        for position in range(len(marks) - 1, max(-1, len(marks) - 1 - LOOKBACK), -1):
            if ":" not in marks[position]:
                return False
            if self.names[position] == name:
                self._pop_to(position, own_end=False)
                return True
        return False

    def _table_mode(self) -> int | None:
        """The position of the table, row group or row whose content the current
        element is (put before the table by the tree builder, "in table" mode), or
        None when the current element is in a cell, a caption or outside tables."""
        marks = self.marks
        for position in range(len(marks) - 1, max(-1, len(marks) - 1 - LOOKBACK), -1):
            if marks[position] in _TABLE_CONTEXT:
                return position
            if marks[position] in _MODE_ANCHORS:
                return None
        return None

    def _nearest(self, targets: frozenset[str], stops: frozenset[str]) -> int | None:
        """The position of the nearest open element in `targets` with none of `stops`
        above it, within `LOOKBACK`; else None."""
        marks = self.marks
        for position in range(len(marks) - 1, max(-1, len(marks) - 1 - LOOKBACK), -1):
            if marks[position] in targets:
                return position
            if marks[position] in stops:
                return None
        return None

    def _pop_above(self, position: int | None) -> None:
        """Pop the elements open above `position` (None: none)."""
        if position is not None and position + 1 < len(self.names):
            self._pop_to(position + 1, own_end=False)

    def close(
        self, targets: frozenset[str], stops: frozenset[str] | None, own_end: bool = False
    ) -> bool:
        """Pop down to and including the nearest open element named in `targets`,
        unless one of `stops` or more than `LOOKBACK` elements lie above it (`stops`
        None: only when it is the current element); `own_end` as for `_pop_to`.
        Return whether it closed one."""
        if not any(self.open[name] for name in targets):
            return False
        marks = self.marks
        top = len(marks) - 1
        lowest = top if stops is None else max(0, top + 1 - LOOKBACK)
        for position in range(top, lowest - 1, -1):
            if marks[position] in targets:
                self._pop_to(position, own_end)
                return True
            if stops is not None and marks[position] in stops:
                return False
        return False

    def _pop_to(self, position: int, own_end: bool = True) -> None:
        """Pop the elements from `position` up; `own_end`: the one at `position` is
        closed by its own end tag (a formatting element is then no longer kept)."""
        key = self.keys[position]
        for index in range(len(self.names) - 1, position - 1, -1):
            name = self.names[index]
            self.open[name] -= 1
            if name in MARKERS and not self.foreign[index]:
                self.kept_total -= self.kept.pop().size
        del self.names[position:], self.marks[position:], self.keys[position:]
        del self.depths[position:]
        del self.foreign[position + 1 :]
        if own_end and key is not None:
            self.kept_total -= self.kept[-1].remove(key)


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


def nesting_depth(html: str, limit: int) -> int:
    """How deeply the HTML5 tree builder may nest the elements of `html` (see the
    module docstring): never less than it does. The scan stops as soon as the depth
    passes `limit` and returns that depth. O(len(html))."""
    model = _Model()
    deepest = 0
    position = 0
    end = html.rfind(">") + 1  # every tag the scan finds ends by here
    while deepest <= limit:
        resume = None
        for match in _MARKUP.finditer(html, position, end):
            if match[1]:  # a comment
                close = _COMMENT_END.search(html, match.start() + 2)
                resume = close.end() if close is not None else len(html)
                break
            name = match[3].lower()
            if match[2]:
                if name in ("p", "br"):  # may add an element (`</p>` alone, `</br>`)
                    deepest = max(deepest, model.depth() + 1)
                model.end(name)
                continue
            deepest = max(deepest, model.start(name, match[0]))
            if deepest > limit:
                return deepest
            if not model.html:
                continue
            if name in RAW_TEXT:
                resume = _raw_text_end(html, name, match.end())
                break
            if name == "plaintext":
                resume = len(html)
                break
        if resume is None:
            break
        position = resume
    return max(deepest, model.depth())
