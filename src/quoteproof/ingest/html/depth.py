"""How deep and how large a parsed HTML page is, checked before it is read.

The reading of a page (`ingest.html.parse`) walks its tree, and trafilatura recurses
into it: a page must not nest deeper than `MAX_DEPTH`. A page whose markup makes the
HTML5 tree builder re-open unclosed formatting elements again and again holds many
more elements than tags, and reading them costs time for nothing:
`MAX_ELEMENTS_PER_TAG`. Both are measured exactly on the parsed tree.

What the parser itself spends (time in the square of the depth on a page nested
100,000 deep; hundreds of bytes per byte on re-opened formatting elements) is
bounded by the limits of the process that parses the file (`ingest.parse_limits`),
not here.
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from quoteproof.errors import IngestError

MAX_DEPTH = 512
"""Deepest nesting of elements a page may have (browsers stop nesting about here)."""

MAX_ELEMENTS_PER_TAG = 4
"""Most elements a parsed page may hold per tag of its markup, on average (the
parser adds re-opened formatting elements, table rows and row groups)."""

_TOO_DEEP = f"HTML nested more than {MAX_DEPTH} elements deep (the limit)"


def check_parsed(tree: LexborHTMLParser, html: str, path: str) -> None:
    """Refuse a parsed page nested more than `MAX_DEPTH` deep (`<html>` and `<body>`
    not counted), or holding more than `MAX_ELEMENTS_PER_TAG` elements per tag of
    `html`. Raises `IngestError` naming the limit. O(elements)."""
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
    if deepest - 2 > MAX_DEPTH:
        raise IngestError(path, _TOO_DEEP)
    if elements > MAX_ELEMENTS_PER_TAG * html.count("<") + MAX_DEPTH:
        raise IngestError(
            path,
            f"HTML makes the parser build more than {MAX_ELEMENTS_PER_TAG} elements per "
            "tag (the limit): unclosed formatting tags such as <b> or <font> re-opened "
            "again and again",
        )
