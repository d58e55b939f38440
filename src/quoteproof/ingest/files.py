"""Finding files to ingest and parsing one file by its suffix."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from quoteproof.errors import IngestError
from quoteproof.ingest.html import parse_html
from quoteproof.ingest.markdown import parse_markdown
from quoteproof.ingest.text import parse_text
from quoteproof.model import ParsedDocument

Parser = Callable[[bytes, str], ParsedDocument]
"""A format parser: `(file bytes, path for messages) -> ParsedDocument`."""

PARSERS: dict[str, Parser] = {
    ".htm": parse_html,
    ".html": parse_html,
    ".markdown": parse_markdown,
    ".md": parse_markdown,
    ".txt": parse_text,
}
"""The parser for each supported suffix (lower case, with the dot)."""

SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(sorted(PARSERS))
"""The file suffixes `discover` picks up in folders and `parse_file` accepts."""


def _absolute(path: Path) -> Path:
    """`path` made absolute and normalised (`..` removed), symbolic links kept."""
    return Path(os.path.abspath(path))


def _walk(folder: Path) -> list[Path]:
    """Supported, non-hidden files under `folder`, recursively (hidden folders skipped)."""
    found: list[Path] = []
    for directory, subdirs, files in os.walk(folder):
        subdirs[:] = [name for name in subdirs if not name.startswith(".")]
        for name in files:
            if not name.startswith(".") and Path(name).suffix.lower() in PARSERS:
                found.append(Path(directory, name))
    return found


def discover(paths: Sequence[Path]) -> list[Path]:
    """Return the files to ingest for `paths`: absolute, de-duplicated and sorted.

    A file named directly is kept whatever its suffix (`parse_file` then says if it
    is unsupported). A folder is walked recursively for files whose suffix is in
    `SUPPORTED_SUFFIXES` (any case), skipping hidden files and folders (names that
    start with "."). Raises `IngestError(path, "no such file or directory")` for a
    path that does not exist.
    """
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(_absolute(file) for file in _walk(path))
        elif path.exists():
            found.add(_absolute(path))
        else:
            raise IngestError(str(path), "no such file or directory")
    return sorted(found)


def parser_for(path: Path) -> Parser:
    """Return the parser for `path`'s suffix (any case).

    Raises `IngestError(path, "unsupported file type '.xyz' (supported: ...)")`.
    """
    suffix = path.suffix.lower()
    parser = PARSERS.get(suffix)
    if parser is None:
        shown = f"'{suffix}'" if suffix else "'' (no suffix)"
        supported = ", ".join(SUPPORTED_SUFFIXES)
        raise IngestError(str(path), f"unsupported file type {shown} (supported: {supported})")
    return parser


def read_file(path: Path) -> bytes:
    """Return the bytes of `path`; raise `IngestError` with the OS's reason if it fails."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise IngestError(str(path), exc.strerror or str(exc)) from exc


def parse_bytes(raw: bytes, path: Path) -> ParsedDocument:
    """Parse the bytes `raw` of the file `path` with the parser for its suffix.

    Raises `IngestError` naming `path` when the suffix is not supported, the bytes
    cannot be decoded, or the document has no text to index ("empty document: no
    text to index").
    """
    document = parser_for(path)(raw, str(path))
    if not any(document.text[b.start : b.end].strip() for b in document.blocks):
        raise IngestError(str(path), "empty document: no text to index")
    return document


def parse_file(path: Path) -> ParsedDocument:
    """Read and parse one file: `parse_bytes(read_file(path), path)`.

    The suffix is checked before the file is read. Raises `IngestError` naming
    `path` for an unsupported suffix, an unreadable file (the OS's reason),
    undecodable bytes, or a document with no text to index.
    """
    parser_for(path)
    return parse_bytes(read_file(path), path)
