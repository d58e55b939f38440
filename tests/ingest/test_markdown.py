"""Tests of Markdown ingest: the file is the canonical text; blocks come from tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from quoteproof.errors import IngestError
from quoteproof.ingest.files import parse_file
from quoteproof.ingest.plain.markdown import front_matter_lines, parse_markdown
from quoteproof.model import ParsedDocument

SOURCE = """---
title: Front matter title
tags: [a, b]
---
# Intro

Para one with **bold**
and a lazy line.

## Dosage

- item a
  more of a

  - nested under a
- item b

> quoted para
> continues
>
> second quoted

| Drug | Dose |
|------|------|
| A    | 5 mg |

```python
print("hi")
```

    indented code

### Deep `x`

Text under deep.

Setext Top
==========

<!-- a comment -->

<div>raw html</div>

Last para.
"""


def _parse(source: str, path: str = "docs/guide.md") -> ParsedDocument:
    return parse_markdown(source.encode("utf-8"), path)


def _view(doc: ParsedDocument) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(b.kind, doc.text[b.start : b.end], b.section) for b in doc.blocks]


def test_canonical_text_is_the_file() -> None:
    doc = _parse(SOURCE)
    assert doc.text == SOURCE
    assert doc.format == "markdown"


def test_blocks_sections_and_offsets() -> None:
    doc = _parse(SOURCE)
    intro, dosage = ("Intro",), ("Intro", "Dosage")
    deep = ("Intro", "Dosage", "Deep x")
    assert _view(doc) == [
        ("heading", "# Intro", intro),
        ("paragraph", "Para one with **bold**\nand a lazy line.", intro),
        ("heading", "## Dosage", dosage),
        ("list", "- item a\n  more of a\n\n  - nested under a", dosage),
        ("list", "- item b", dosage),
        ("paragraph", "> quoted para\n> continues", dosage),
        ("paragraph", "> second quoted", dosage),
        ("table", "| Drug | Dose |\n|------|------|\n| A    | 5 mg |", dosage),
        ("code", '```python\nprint("hi")\n```', dosage),
        ("code", "indented code", dosage),
        ("heading", "### Deep `x`", deep),
        ("paragraph", "Text under deep.", deep),
        ("heading", "Setext Top\n==========", ("Setext Top",)),
        ("paragraph", "<div>raw html</div>", ("Setext Top",)),
        ("paragraph", "Last para.", ("Setext Top",)),
    ]


def test_title_is_first_h1_else_stem() -> None:
    assert _parse(SOURCE).title == "Intro"
    assert _parse("## Only h2\n\ntext\n", "a/readme.markdown").title == "readme"
    assert _parse("Some *emph* text.\n\n# The *Real* Title\n").title == "The Real Title"


def test_front_matter_is_not_a_block_but_stays_in_text() -> None:
    doc = _parse("---\na: 1\n---\nBody text.\n")
    assert doc.text == "---\na: 1\n---\nBody text.\n"
    assert _view(doc) == [("paragraph", "Body text.", ())]
    assert front_matter_lines("---\na: 1\n...\nx") == 3
    assert front_matter_lines("text\n---\na\n---\n") == 0
    assert front_matter_lines("---\nno closing line\n") == 0


def test_crlf_offsets_point_into_normalised_text() -> None:
    doc = parse_markdown(b"# T\r\n\r\nfirst\r\nline\r\n\r\nsecond\r", "x.md")
    assert doc.text == "# T\n\nfirst\nline\n\nsecond\n"
    assert [doc.text[b.start : b.end] for b in doc.blocks] == ["# T", "first\nline", "second"]


def test_heading_levels_pop_sections() -> None:
    doc = _parse("# A\n\n### C\n\nc\n\n## B\n\nb\n\n# D\n\nd\n")
    sections = {doc.text[b.start : b.end]: b.section for b in doc.blocks}
    assert sections == {
        "# A": ("A",),
        "### C": ("A", "C"),
        "c": ("A", "C"),
        "## B": ("A", "B"),
        "b": ("A", "B"),
        "# D": ("D",),
        "d": ("D",),
    }


def test_empty_heading_is_skipped() -> None:
    doc = _parse("# Title\n\n##\n\ntext\n")
    assert _view(doc) == [("heading", "# Title", ("Title",)), ("paragraph", "text", ("Title",))]


def test_invalid_utf8_raises() -> None:
    with pytest.raises(
        IngestError,
        match=r"^bad\.md: not valid UTF-8 \(byte offset 2: 0xC3, line 1\); .*ingest it again$",
    ):
        parse_markdown(b"# \xc3\x28", "bad.md")


def test_blocks_are_ordered_and_trimmed() -> None:
    doc = _parse(SOURCE)
    previous_end = 0
    for block in doc.blocks:
        piece = doc.text[block.start : block.end]
        assert piece and piece == piece.strip()
        assert block.start >= previous_end
        previous_end = block.end


@pytest.mark.parametrize("depth", [20, 120])
def test_quotes_nested_past_the_parser_limit_keep_their_text(depth: int) -> None:
    source = f"# Deep\n\nIntro.\n\n{'>' * depth} Deep words here.\n{'>' * depth} More.\n\nAfter.\n"
    doc = parse_markdown(source.encode(), "deep.md")
    texts = [(b.kind, doc.text[b.start : b.end]) for b in doc.blocks]
    assert texts[:2] == [("heading", "# Deep"), ("paragraph", "Intro.")]
    assert texts[2][0] == "paragraph" and texts[2][1].startswith("Deep words here.\n")
    assert texts[2][1].endswith(" More.")
    assert texts[3:] == [("paragraph", "After.")]


def test_a_file_of_only_deeply_nested_quotes_is_indexed(tmp_path: Path) -> None:
    path = tmp_path / "deep.md"
    path.write_text(">" * 150 + " Only this.\n")
    doc = parse_file(path)
    assert [doc.text[b.start : b.end] for b in doc.blocks] == ["Only this."]
