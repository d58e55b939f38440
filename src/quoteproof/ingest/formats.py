"""The document formats ingest reads: one `Format` line each in `FORMATS`.

A format is a parser, `parse(raw: bytes, path: str, **options) -> ParsedDocument`
in a module of its own, and one line here naming it: the suffixes its files have,
the name people see, what its first bytes may be (`ingest.sniff` checks that a
file is what its name says), which `ParseOptions` its parser takes, and whether the
file's bytes are kept beside the text. Everything that lists or dispatches on
formats reads this table: parsing a file (`ingest.files`), folder walks and
uploads (the supported suffixes), the mislabel check (`ingest.sniff`), the ingest
pipeline (originals kept) and the web page's upload field and help. So a new
format is its module and its line (docs/formats.md).

This module loads no parser: a format's module is imported by name when a file of
that format is parsed, so listing the formats (for help, or an upload check) costs
nothing.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from quoteproof.model import ParsedDocument

__all__ = [
    "FORMATS",
    "SUPPORTED_SUFFIXES",
    "TEXTUAL",
    "ContentKind",
    "Format",
    "ParseOptions",
    "format_for",
    "format_names",
]

ContentKind = Literal["pdf", "zip", "ole", "html", "xml", "text", "binary"]
"""What `ingest.sniff.sniff` tells a file's first bytes to be."""

TEXTUAL: frozenset[ContentKind] = frozenset({"html", "xml", "text", "binary"})
"""The content a text format's parser is handed: it reports undecodable bytes itself."""


@dataclass(frozen=True)
class ParseOptions:
    """Settings that change how files are parsed: `ocr` runs Tesseract on PDF pages
    without a text layer. A format's parser takes those its `Format.options` names,
    as keyword arguments."""

    ocr: bool = False


@dataclass(frozen=True)
class Format:
    """One document format: `name` as people read it ("Word (.docx)"), the file
    `suffixes` (lower case, with the dot), the `parser` as `module:function`, the
    `content` kinds its files may sniff as (`ContentKind`), the `ParseOptions`
    fields its parser takes (`options`), and whether the file itself is stored
    (`keep_original`: PDF character boxes are read from it)."""

    name: str
    suffixes: tuple[str, ...]
    parser: str
    content: frozenset[ContentKind] = TEXTUAL
    options: tuple[str, ...] = ()
    keep_original: bool = False

    def parse(self, raw: bytes, path: str, options: ParseOptions) -> ParsedDocument:
        """Parse `raw`, the bytes of the file `path` (as messages name it), with this
        format's parser (imported now) and the `options` it takes."""
        module, _, function = self.parser.partition(":")
        parser = getattr(importlib.import_module(module), function)
        document: ParsedDocument = parser(
            raw, path, **{name: getattr(options, name) for name in self.options}
        )
        return document


FORMATS: tuple[Format, ...] = (
    Format(
        "PDF",
        (".pdf",),
        "quoteproof.ingest.pdf.parse:parse_pdf",
        content=frozenset({"pdf"}),
        options=("ocr",),
        keep_original=True,
    ),
    Format(
        "Word (.docx)",
        (".docx",),
        "quoteproof.ingest.office.docx:parse_docx",
        content=frozenset({"zip", "ole"}),  # the parser explains an OLE container
    ),
    Format("HTML", (".html", ".htm"), "quoteproof.ingest.html.parse:parse_html"),
    Format("Markdown", (".md", ".markdown"), "quoteproof.ingest.plain.markdown:parse_markdown"),
    Format("text", (".txt",), "quoteproof.ingest.plain.text:parse_text"),
    Format(
        "FDA SPL XML",
        (".xml",),
        "quoteproof.ingest.html.spl:parse_spl",
        content=frozenset({"xml", "text"}),
    ),
    Format("CSV", (".csv",), "quoteproof.ingest.plain.tables:parse_csv"),
    Format("TSV", (".tsv",), "quoteproof.ingest.plain.tables:parse_csv"),  # tabs, by suffix
    Format("JSON", (".json",), "quoteproof.ingest.plain.tables:parse_json"),
)
"""The formats, in the order people are told them."""

_BY_SUFFIX = {suffix: entry for entry in FORMATS for suffix in entry.suffixes}

SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(sorted(_BY_SUFFIX))
"""The file suffixes folder walks pick up and ingest accepts."""


def format_for(suffix: str) -> Format | None:
    """The format of files with `suffix` (`.pdf`, any case); None when no format has
    it."""
    return _BY_SUFFIX.get(suffix.lower())


def format_names() -> str:
    """The formats' names as a sentence's list: "PDF, Word (.docx), … or JSON"."""
    names = [entry.name for entry in FORMATS]
    return ", ".join(names[:-1]) + " or " + names[-1]
