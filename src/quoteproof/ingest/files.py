"""Finding files to ingest, and reading and parsing one file by its suffix."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from quoteproof.defaults import DEFAULT_MAX_FILE_MB as DEFAULT_MAX_FILE_MB
from quoteproof.errors import IngestError
from quoteproof.ingest.html import parse_html
from quoteproof.ingest.markdown import parse_markdown
from quoteproof.ingest.sniff import mislabel_cause
from quoteproof.ingest.tables import parse_csv, parse_json
from quoteproof.ingest.text import parse_text
from quoteproof.model import ParsedDocument
from quoteproof.pdfium_lock import pdfium


@dataclass(frozen=True)
class ParseOptions:
    """Settings that change how files are parsed: `ocr` runs Tesseract on PDF pages
    without a text layer."""

    ocr: bool = False


Parser = Callable[[bytes, str, ParseOptions], ParsedDocument]
"""A format parser: `(file bytes, path for messages, options) -> ParsedDocument`."""


def _text_parser(parse: Callable[[bytes, str], ParsedDocument]) -> Parser:
    """Adapt a parser that takes no options."""

    def parser(raw: bytes, path: str, options: ParseOptions) -> ParsedDocument:
        return parse(raw, path)

    return parser


def _parse_pdf(raw: bytes, path: str, options: ParseOptions) -> ParsedDocument:
    from quoteproof.ingest.pdf import parse_pdf  # PDFium loads only when needed

    with pdfium():  # PDFium is not thread-safe (the server ingests in a thread)
        return parse_pdf(raw, path, ocr=options.ocr)


def _parse_docx(raw: bytes, path: str, options: ParseOptions) -> ParsedDocument:
    from quoteproof.ingest.docx import parse_docx

    return parse_docx(raw, path)


def _parse_spl(raw: bytes, path: str, options: ParseOptions) -> ParsedDocument:
    from quoteproof.ingest.spl import parse_spl

    return parse_spl(raw, path)


def _parse_tsv(raw: bytes, path: str, options: ParseOptions) -> ParsedDocument:
    return parse_csv(raw, path, delimiter="\t")


PARSERS: dict[str, Parser] = {
    ".csv": _text_parser(parse_csv),
    ".docx": _parse_docx,
    ".htm": _text_parser(parse_html),
    ".html": _text_parser(parse_html),
    ".json": _text_parser(parse_json),
    ".markdown": _text_parser(parse_markdown),
    ".md": _text_parser(parse_markdown),
    ".pdf": _parse_pdf,
    ".tsv": _parse_tsv,
    ".txt": _text_parser(parse_text),
    ".xml": _parse_spl,
}
"""The parser for each supported suffix (lower case, with the dot)."""

SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(sorted(PARSERS))
"""The file suffixes `discover` picks up in folders and `parse_file` accepts."""


def _absolute(path: Path) -> Path:
    """`path` made absolute and normalised (`..` removed), symbolic links kept."""
    return Path(os.path.abspath(path))


def _walk(folder: Path) -> list[Path]:
    """Supported, non-hidden files under `folder`, recursively (hidden folders skipped),
    and every folder that could not be listed (`read_file` then says why).

    Links to folders are not followed, so a link loop is never walked.
    """
    found: list[Path] = []

    def unlisted(error: OSError) -> None:
        if error.filename is not None:
            found.append(Path(error.filename))

    for directory, subdirs, files in os.walk(folder, onerror=unlisted):
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
    start with "."); links to folders are not followed. What cannot be ingested is
    kept, for `read_file` to fail on with its cause: a broken or looping symbolic
    link, a folder that cannot be listed. Raises `IngestError(path, "no such file
    or directory")` for a path named directly that does not exist.
    """
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(_absolute(file) for file in _walk(path))
        elif path.exists() or path.is_symlink():
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


def _unreadable_cause(path: Path, error: OSError) -> str:
    """Why `path` cannot be read, from the OS `error`: named as a broken link or a
    folder where it is one."""
    reason = error.strerror or str(error)
    if path.is_symlink():
        try:
            target = os.readlink(path)
        except OSError:
            return f"symbolic link cannot be followed: {reason}"
        return f"symbolic link to {target} cannot be followed: {reason}"
    if path.is_dir() and not isinstance(error, IsADirectoryError):
        return f"cannot read folder: {reason}"
    return reason


def read_file(path: Path, max_file_mb: float = DEFAULT_MAX_FILE_MB) -> bytes:
    """Return the bytes of `path`.

    Raises `IngestError` naming `path` with the OS's reason when it cannot be read
    (a broken or looping symbolic link is named as one, with its target; a folder
    that cannot be listed as "cannot read folder: ..."), "empty file (0 bytes)" for
    an empty file, and a message giving both sizes when it is larger than
    `max_file_mb` megabytes (checked before reading).
    """
    try:
        size = path.stat().st_size
        if size > max_file_mb * 1_000_000:
            raise IngestError(
                str(path),
                f"file is {size / 1_000_000:,.1f} MB, over the {max_file_mb:g} MB limit "
                "(raise it with --max-file-mb)",
            )
        if path.is_dir():
            os.listdir(path)  # the OS's reason when it cannot be listed
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(str(path), _unreadable_cause(path, exc)) from exc
    if not raw:
        raise IngestError(str(path), "empty file (0 bytes)")
    return raw


def parse_bytes(raw: bytes, path: Path, options: ParseOptions | None = None) -> ParsedDocument:
    """Parse the bytes `raw` of the file `path` with the parser for its suffix.

    Raises `IngestError` naming `path` when the suffix is not supported, the content
    is another kind of file than the suffix says ("named .pdf but the content is
    HTML"), the parser rejects it (corrupt, encrypted, undecodable...) or fails
    on it in any other way, or the document has no text to index ("empty
    document: no text to index").
    """
    parser = parser_for(path)
    cause = mislabel_cause(raw, path.suffix.lower())
    if cause is not None:
        raise IngestError(str(path), cause)
    try:
        document = parser(raw, str(path), options or ParseOptions())
    except (IngestError, MemoryError):  # out of memory: the parse's limit says so
        raise
    except Exception as exc:  # a parser library's own failure on a hostile file
        raise IngestError(str(path), f"cannot parse: {type(exc).__name__}: {exc}") from exc
    if not any(
        document.text[b.start : b.end].strip() for b in document.blocks if b.kind != "furniture"
    ):
        raise IngestError(str(path), "empty document: no text to index")
    return document


def parse_file(
    path: Path, options: ParseOptions | None = None, max_file_mb: float = DEFAULT_MAX_FILE_MB
) -> ParsedDocument:
    """Read and parse one file: `parse_bytes(read_file(path, max_file_mb), path, options)`.

    The suffix is checked before the file is read. Raises `IngestError` naming
    `path` for every reason `read_file` and `parse_bytes` give.
    """
    parser_for(path)
    return parse_bytes(read_file(path, max_file_mb), path, options)
