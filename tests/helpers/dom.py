"""A small, strict DOM for checking the HTML the project renders (no third-party
parser): elements must close in order, attributes must not repeat."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = frozenset({"meta", "br", "img", "input", "link", "hr", "source", "wbr"})


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self) -> list[Node]:
        found = [self]
        for child in self.children:
            if isinstance(child, Node):
                found += child.iter()
        return found

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [n for n in self.iter() if n.tag == tag and (cls is None or cls in n.classes())]

    def by_id(self, ident: str) -> Node | None:
        return next((n for n in self.iter() if n.attrs.get("id") == ident), None)


class TreeBuilder(HTMLParser):
    """A strict little tree builder: every element must be closed in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]
        self.oddities: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = [name for name, _ in attrs]
        assert len(names) == len(set(names)), f"duplicate attribute in <{tag}>"
        node = Node(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)

    def handle_comment(self, data: str) -> None:
        self.oddities.append(f"comment {data!r}")

    def handle_decl(self, decl: str) -> None:
        if decl.lower() != "doctype html":
            self.oddities.append(f"declaration {decl!r}")

    def handle_pi(self, data: str) -> None:
        self.oddities.append(f"processing instruction {data!r}")

    def unknown_decl(self, data: str) -> None:
        self.oddities.append(f"unknown declaration {data!r}")


def parse(markup: str, *, strict: bool = True) -> Node:
    """Parse `markup`; every element must be closed in order. `strict`: no comments,
    declarations (other than the HTML doctype) or processing instructions either."""
    builder = TreeBuilder()
    builder.feed(markup)
    builder.close()
    assert builder.stack == [builder.root], "unclosed elements"
    assert not (strict and builder.oddities), builder.oddities
    return builder.root
