"""HTML ingest: extract the main content of a page as blocks of clean text.

The canonical text of an HTML file is *built*, not copied: the text of each block
(whitespace collapsed, except inside `<pre>` and between table rows) joined by
`"\\n\\n"`. The same bytes always give the same text. Parsing uses selectolax's
lexbor backend, which follows the HTML5 parsing algorithm, so malformed markup never
fails: only undecodable bytes do.

A page with a content root (`<main>`, `[role=main]`, `<article>`) is read from that
root (the fast path). A page without one is a generic web page: trafilatura tells
which element holds its main content (leaving menus, sidebars and footers out), and
the block walker reads that element of the page itself; if trafilatura finds no
article, the whole body is read. On every path, site chrome (`REMOVED_TAGS`,
`REMOVED_SELECTORS`, `CHROME_LINES`) is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath

from selectolax.lexbor import LexborHTMLParser, LexborNode

from quoteproof.ingest.blocks import (
    BLOCK_SEPARATOR,
    CELL_SEPARATOR,
    BlockBuilder,
    RowCells,
    collapse_whitespace,
)
from quoteproof.ingest.html.chrome import is_byline, is_chrome_line
from quoteproof.ingest.html.decode import decode_html
from quoteproof.ingest.html.depth import check_parsed
from quoteproof.model import BlockKind, ParsedDocument

__all__ = [
    "BLOCK_SEPARATOR",
    "CELL_SEPARATOR",
    "collapse_whitespace",
    "decode_html",
    "is_byline",
    "is_chrome_line",
    "parse_html",
]

CONTENT_ROOTS = ("main", "[role=main]", "article")
"""CSS selectors tried in order; the first match is the part of the page indexed."""

REMOVED_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "button",
    "iframe",
)
"""Elements dropped with all their content before text is extracted."""

REMOVED_SELECTORS = (
    "[hidden]",
    '[aria-hidden="true"]',
    '[role="navigation"]',
    '[role="banner"]',
    '[role="contentinfo"]',
    '[role="complementary"]',
    ".sr-only",
    ".visually-hidden",
    ".breadcrumb",
    ".breadcrumbs",
    ".skip-link",
    ".share",
    ".page-share",
    ".social-share",
    ".last-reviewed",
)
"""Elements matching these are dropped too: hidden, landmarks of the removed tags,
screen-reader-only labels ("pdf icon"), and class names sites give their chrome
(breadcrumbs, share bars, "Last reviewed: ... Source: ..." lines)."""

CONTENTS_MIN_LINKS = 3
"""An element with this many in-page links and little other text is a contents box."""

CONTENTS_MAX_OTHER_CHARS = 40
"""Most characters of non-link text a contents box may hold ("On This Page", ...)."""

ANCHOR_MIN_CHARS = 40
"""Shortest paragraph of trafilatura's output used to locate the main content."""

MAIN_CONTENT_MIN_CHARS = 250
"""Below this many anchored characters, trafilatura found no article: read the body."""

MAIN_CONTENT_SHARE = 0.95
"""The main-content root is the deepest element holding this share of anchored text."""

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Elements that end the run of inline text before them; the value is the kind of
# block their own loose text becomes.
_CONTAINERS: dict[str, BlockKind] = {
    **dict.fromkeys(("li", "dt", "dd"), "list"),
    **dict.fromkeys(
        (
            "address",
            "article",
            "blockquote",
            "body",
            "caption",
            "center",
            "details",
            "dialog",
            "div",
            "dl",
            "fieldset",
            "figcaption",
            "figure",
            "hgroup",
            "hr",
            "html",
            "legend",
            "main",
            "menu",
            "ol",
            "p",
            "section",
            "summary",
            "ul",
        ),
        "paragraph",
    ),
}

_CONTENT_IN_FORM = "p, h1, h2, h3, h4, h5, h6"
# Elements whose text may equal a paragraph of trafilatura's XML output (and its tags).
_ANCHOR_SELECTOR = "p, li, dd, dt, td, th, pre, blockquote, h1, h2, h3, h4, h5, h6"
_ANCHOR_XML = ("p", "head", "item", "cell", "quote", "code")
# Elements a main-content root may be: an anchor's nearest one of these is used.
_ROOT_TAGS = frozenset({"article", "body", "center", "div", "form", "main", "section"})
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*")


def _children(node: LexborNode) -> Iterator[LexborNode]:
    return node.iter(include_text=True)


def _inline_text(node: LexborNode, *, pre: bool = False) -> str:
    """All the text under `node` in document order.

    `<br>` gives a line break in `pre` mode, a space otherwise; block-level elements
    are set apart by spaces. Whitespace is collapsed unless `pre`.
    """
    parts: list[str] = []
    stack: list[LexborNode | str] = list(reversed(list(_children(node))))
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        tag = item.tag
        if tag == "-text":
            parts.append(item.text_content or "")
        elif tag == "br":
            parts.append("\n" if pre else " ")
        elif tag is not None and not tag.startswith(("-", "!")):
            spacer = (
                " " if (tag in _CONTAINERS or tag in _HEADINGS or tag in ("td", "th", "tr")) else ""
            )
            stack.append(spacer)
            stack.extend(reversed(list(_children(item))))
            stack.append(spacer)
    text = "".join(parts)
    return text.strip() if pre else collapse_whitespace(text)


def _table_rows(table: LexborNode) -> list[RowCells]:
    """A table's own rows (not those of a nested table, whose text is inside a cell
    already), each its cells' texts; a row in `<thead>`, or of `<th>` cells only,
    is a header row."""
    rows: list[RowCells] = []
    for row in table.css("tr"):
        if not _same_node(_nearest_table(row), table):
            continue
        cells = [cell for cell in _children(row) if cell.tag in ("td", "th")]
        in_head = row.parent is not None and row.parent.tag == "thead"
        header = in_head or (bool(cells) and all(cell.tag == "th" for cell in cells))
        merged = any(_span(cell, "colspan") > 1 or _span(cell, "rowspan") > 1 for cell in cells)
        rows.append(RowCells([_inline_text(cell) for cell in cells], header, merged))
    return rows


def _span(cell: LexborNode, name: str) -> int:
    """A cell's `colspan` or `rowspan` (1 when absent or not a number)."""
    value = (cell.attributes.get(name) or "1").strip()
    return int(value) if value.isdigit() else 1


def _same_node(first: LexborNode | None, second: LexborNode) -> bool:
    """Whether two wrappers stand for the same DOM node (wrappers are not unique)."""
    return first is not None and first.mem_id == second.mem_id


def _nearest_table(node: LexborNode) -> LexborNode | None:
    parent = node.parent
    while parent is not None and parent.tag != "table":
        parent = parent.parent
    return parent


@dataclass
class _Builder(BlockBuilder):
    """A `BlockBuilder` that also gathers the loose inline text of the walk.

    Blocks whose whole text is site chrome (`is_chrome_line`) are never added.
    """

    # Inline text gathered since the last block ended; True marks the text of an
    # in-page link (`<a href="#...">`: "Top", "Print", a table of contents entry).
    loose: list[tuple[str, bool]] = field(default_factory=list)

    def add(self, kind: BlockKind, text: str) -> bool:
        return not is_chrome_line(text) and super().add(kind, text)

    def heading(self, level: int, title: str) -> bool:
        return not is_chrome_line(title) and super().heading(level, title)

    def flush(self, kind: BlockKind) -> None:
        """Turn the loose inline text gathered so far into one block of `kind`.

        Text made only of in-page links is navigation, not content: it is dropped.
        """
        if any(not link and not text.isspace() for text, link in self.loose):
            self.add(kind, collapse_whitespace("".join(text for text, _ in self.loose)))
        self.loose.clear()


class _LinkEnd:
    """Work item marking the end of an in-page link in `_walk`."""


_LINK_END = _LinkEnd()


def _is_in_page_link(node: LexborNode) -> bool:
    return node.tag == "a" and (node.attributes.get("href") or "").startswith("#")


def _walk(root: LexborNode, builder: _Builder) -> None:
    """Emit the blocks under `root` in document order (iterative: no recursion limit)."""
    # Work items: a node to enter, the kind of a container being left, or a link's end.
    kinds: list[BlockKind] = ["paragraph"]
    links = 0  # how many in-page links the walk is inside
    stack: list[LexborNode | BlockKind | _LinkEnd] = list(reversed(list(_children(root))))
    while stack:
        item = stack.pop()
        if isinstance(item, _LinkEnd):
            links -= 1
            continue
        if isinstance(item, str):
            builder.flush(kinds.pop())
            continue
        tag = item.tag
        if tag == "-text":
            builder.loose.append((item.text_content or "", links > 0))
        elif tag is None or tag.startswith(("-", "!")):
            continue
        elif tag == "br":
            builder.loose.append((" ", links > 0))
        elif tag in _HEADINGS:
            builder.flush(kinds[-1])
            text = _inline_text(item)
            if is_byline(text):
                builder.add("paragraph", text)
            else:
                builder.heading(_HEADINGS[tag], text)
        elif tag == "pre":
            builder.flush(kinds[-1])
            builder.add("code", _inline_text(item, pre=True))
        elif tag == "table":
            builder.flush(kinds[-1])
            caption = item.css_first("caption")
            if caption is not None and _same_node(_nearest_table(caption), item):
                builder.add("paragraph", _inline_text(caption))
            builder.add_table(_table_rows(item))
        elif tag in _CONTAINERS:
            builder.flush(kinds[-1])
            kinds.append(_CONTAINERS[tag])
            stack.append(_CONTAINERS[tag])
            stack.extend(reversed(list(_children(item))))
        else:
            if _is_in_page_link(item):
                links += 1
                stack.append(_LINK_END)
            stack.extend(reversed(list(_children(item))))
    builder.flush(kinds[-1])


def _content_root(tree: LexborHTMLParser) -> LexborNode | None:
    """The first of `CONTENT_ROOTS` present in `tree`, or None."""
    for selector in CONTENT_ROOTS:
        node = tree.css_first(selector)
        if node is not None:
            return node
    return None


def _trafilatura_paragraphs(html: str) -> set[str]:
    """The texts (whitespace collapsed) of the paragraphs, headings, list items and
    table cells trafilatura keeps as the main content of `html`, if at least
    `ANCHOR_MIN_CHARS` long; empty if it keeps nothing."""
    # Imported here: trafilatura takes ~0.2 s to import and only pages without a
    # content root need it.
    import trafilatura
    from lxml import etree

    extracted = trafilatura.extract(  # its default precision/recall balance
        html,
        output_format="xml",
        include_tables=True,
        include_formatting=True,
        include_comments=False,
        include_images=False,
        include_links=False,
        deduplicate=False,  # deterministic: no cache shared between calls
    )
    if not extracted:
        return set()
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    tree = etree.fromstring(extracted, parser)
    texts = (collapse_whitespace("".join(node.itertext())) for node in tree.iter(*_ANCHOR_XML))
    return {text for text in texts if len(text) >= ANCHOR_MIN_CHARS}


def _anchor_weights(body: LexborNode, paragraphs: set[str]) -> tuple[dict[int, int], int]:
    """Characters of `paragraphs` under each element of `body` (by mem_id), and in all.

    An anchor is the first element (`_ANCHOR_SELECTOR`) whose whole text is one of
    `paragraphs`; its length counts for it and for every ancestor up to `body`.
    """
    weights: dict[int, int] = {}
    seen: set[str] = set()
    for node in body.css(_ANCHOR_SELECTOR):
        text = collapse_whitespace(node.text(deep=True))
        if text not in paragraphs or text in seen:
            continue
        seen.add(text)
        ancestor: LexborNode | None = node
        while ancestor is not None and not _same_node(ancestor, body):
            weights[ancestor.mem_id] = weights.get(ancestor.mem_id, 0) + len(text)
            ancestor = ancestor.parent
    return weights, sum(len(text) for text in seen)


def _main_content_root(body: LexborNode, html: str) -> LexborNode:
    """The element of `body` that holds the main content trafilatura finds in `html`.

    trafilatura only *chooses*: the walker then reads that element of the original
    page, so headings, tables and text are the page's own (trafilatura's own output
    drops headings on some pages and glues words on others). The root is the deepest
    element holding `MAIN_CONTENT_SHARE` of the anchored text (see `_anchor_weights`),
    widened to its nearest container (`_ROOT_TAGS`); `body` when trafilatura anchors
    less than `MAIN_CONTENT_MIN_CHARS`.
    """
    weights, total = _anchor_weights(body, _trafilatura_paragraphs(html))
    if total < MAIN_CONTENT_MIN_CHARS:
        return body
    root = body
    for node in body.traverse():
        if weights.get(node.mem_id, 0) >= MAIN_CONTENT_SHARE * total:
            root = node  # traversal is depth-first: a later qualifying node is deeper
    while root.tag not in _ROOT_TAGS and root.parent is not None:
        root = root.parent
    return root


def _remove_hidden_and_chrome(root: LexborNode) -> None:
    """Drop `REMOVED_TAGS` and `REMOVED_SELECTORS` matches under `root`, with content.

    A `form` that holds paragraphs or headings is kept (ASP.NET-style pages wrap the
    whole page in one form). Nodes are dropped deepest first, so no node is touched
    after an ancestor of it was freed.
    """
    selector = ", ".join((*REMOVED_TAGS, *REMOVED_SELECTORS))
    for node in reversed(list(root.css(selector))):
        if node.tag == "form" and node.css_first(_CONTENT_IN_FORM) is not None:
            continue
        node.decompose()


def _drop_contents_boxes(root: LexborNode) -> None:
    """Drop "table of contents" boxes under `root`: navigation inside the page.

    A box is the outermost element holding at least `CONTENTS_MIN_LINKS` in-page
    links (`href="#..."`), at most `CONTENTS_MAX_OTHER_CHARS` characters of other
    text (a caption such as "On This Page" or "Contents"), and more than twice as
    many characters of link text as of other text (so a short paragraph with
    footnote links stays). O(number of nodes).
    """
    # Per element (by mem_id): [in-page links, characters of link text, other characters].
    counts: dict[int, list[int]] = {}
    order: list[LexborNode] = []  # elements, parents before children
    stack = [child for child in _children(root) if child.is_element_node]
    while stack:
        node = stack.pop()
        order.append(node)
        if not _is_in_page_link(node):
            stack.extend(child for child in _children(node) if child.is_element_node)
    for node in reversed(order):  # children before parents
        if _is_in_page_link(node):
            counts[node.mem_id] = [1, len(_inline_text(node)), 0]
            continue
        total = [0, 0, 0]
        for child in _children(node):
            if child.is_element_node:
                for index, value in enumerate(counts.get(child.mem_id, (0, 0, 0))):
                    total[index] += value
            elif child.tag == "-text":
                total[2] += len(collapse_whitespace(child.text_content or ""))
        counts[node.mem_id] = total
    stack = [child for child in _children(root) if child.is_element_node]
    while stack:
        node = stack.pop()
        links, link_chars, other_chars = counts.get(node.mem_id, (0, 0, 0))
        if (
            links >= CONTENTS_MIN_LINKS
            and other_chars <= CONTENTS_MAX_OTHER_CHARS
            and link_chars > 2 * other_chars
        ):
            node.decompose()
        elif links > 0:
            stack.extend(child for child in _children(node) if child.is_element_node)


def _language(tree: LexborHTMLParser) -> str:
    """The page's `<html lang>` when it is a well-formed language tag, else "en"."""
    html = tree.css_first("html")
    lang = (html.attributes.get("lang") or "").strip() if html is not None else ""
    return lang if _LANGUAGE_TAG.fullmatch(lang) else "en"


def _page_root(tree: LexborHTMLParser, html: str) -> LexborNode | None:
    """The part of a page that is read (see `parse_html`)."""
    root = _content_root(tree)
    if root is not None or tree.body is None:
        return root
    _remove_hidden_and_chrome(tree.body)  # so that anchors' texts hold no script text
    return _main_content_root(tree.body, html)


def parse_html(raw: bytes, path: str) -> ParsedDocument:
    """Parse an HTML page into blocks of clean text and the canonical text they make.

    Decodes with `decode_html`. The part of the page read is the first of
    `CONTENT_ROOTS` present; on a page with none of them, the element holding the
    main content trafilatura finds (see `_main_content_root`), or the whole body if
    trafilatura finds none. Under it, `REMOVED_TAGS` and `REMOVED_SELECTORS` matches are
    dropped (a `form` holding p or headings is kept), then in-page contents boxes
    (see `_drop_contents_boxes`); a block whose only text is in-page links
    (`href="#..."`: "Top", "Print") or whose whole text is one of `CHROME_LINES` is
    dropped too. Scripts, styles, templates and comments never reach the text.

    Blocks, in document order: h1-h6 ("heading"; they set the section path by
    level; an author list in a heading, `is_byline`, is a "paragraph"), p,
    blockquote, figcaption, caption and loose text in other containers such as div
    ("paragraph"), leaf-level li, dt and dd ("list"), pre ("code", its
    line breaks kept) and whole tables ("table": rows joined by "\n", cells by
    `CELL_SEPARATOR`). Inside a block, whitespace runs become one space and the ends
    are stripped (except in pre). Canonical text = block texts joined by
    `BLOCK_SEPARATOR`; each block is `text[block.start:block.end]`. The title is
    `head > title` (whitespace collapsed), else the first h1, else the file stem;
    the language is `<html lang>` when set, else "en". Raises `IngestError` if the
    bytes cannot be decoded, or the parsed page is nested more than
    `depth.MAX_DEPTH` deep or holds too many elements per tag
    (`depth.check_parsed`). What the HTML5 parser spends on hostile markup is
    bounded by the parsing process's limits (`ingest.parse_limits`). O(len(raw))
    on the fast path; trafilatura costs more.
    """
    html = decode_html(raw, path)
    tree = LexborHTMLParser(html)
    check_parsed(tree, html, path)
    title_node = tree.css_first("head > title")
    title = collapse_whitespace(title_node.text()) if title_node is not None else ""
    root = _page_root(tree, html)
    builder = _Builder()
    if root is not None:
        _remove_hidden_and_chrome(root)
        _drop_contents_boxes(root)
        _walk(root, builder)
    if not title:
        h1 = root.css_first("h1") if root is not None else None
        title = _inline_text(h1) if h1 is not None else ""
    return builder.build(
        title=title or PurePath(path).stem, format="html", language=_language(tree)
    )
