"""Finding files to ingest, and reading and parsing one file by its suffix (the
format registry, `ingest.formats`, says which parser reads it)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quoteproof.defaults import DEFAULT_MAX_FILE_MB as DEFAULT_MAX_FILE_MB
from quoteproof.errors import IngestError
from quoteproof.ingest.formats import SUPPORTED_SUFFIXES, Format, ParseOptions, format_for
from quoteproof.ingest.sniff import mislabel_cause
from quoteproof.model import ParsedDocument

FOLDER_NOTES = frozenset(
    "authors changelog changes code_of_conduct contributing copying history licence "
    "license notice readme security source sources".split()
)
"""Names (before the first dot, any case) of the files that describe a folder rather
than belong to it: README.md, LICENSE, SOURCES.md... A folder walk skips them."""


@dataclass(frozen=True)
class Skipped:
    """A file a folder walk found and left out, and why (one line)."""

    path: Path
    reason: str


@dataclass(frozen=True)
class Discovery:
    """What `discover_files` found: the files to ingest, and those it left out."""

    files: list[Path]
    skipped: list[Skipped]


def _absolute(path: Path) -> Path:
    """`path` made absolute and normalised (`..` removed), symbolic links kept."""
    return Path(os.path.abspath(path))


def source_name(path: Path | str) -> str:
    """The name a file is stored and shown under: its path, with each byte of it that
    is not UTF-8 (a name from another system's encoding) written as `\\xNN`, so that
    the index can hold it ("caf\\xe9.txt")."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(path: Path, mode: int) -> str:
    """Why `path`, whose (followed) mode is `mode`, is not read: "not a regular file:
    a named pipe (FIFO)", naming a symbolic link's target."""
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    if path.is_symlink():
        with contextlib.suppress(OSError):
            kind += f" (symbolic link to {os.readlink(path)})"
    return f"not a regular file: {kind}"


def _skip_reason(path: Path) -> str | None:
    """Why a folder walk leaves out the file `path`, or None to ingest it (a broken
    link too: `read_file` then says why it cannot be read)."""
    suffix = path.suffix.lower()
    if format_for(suffix) is None:
        return (
            f"unsupported file type '{suffix}'" if suffix else "unsupported file type (no suffix)"
        )
    if path.name.lower().split(".")[0] in FOLDER_NOTES:
        return "notes about the folder (README-type name): name the file to ingest it"
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else _not_regular(path, mode)


def _walk(folder: Path) -> tuple[list[Path], list[Skipped]]:
    """Walk `folder` recursively (hidden files and folders left out unseen; links to
    folders not followed): the files to ingest, every folder that could not be
    listed (`read_file` then says why), and the files left out with their reason."""
    found: list[Path] = []
    skipped: list[Skipped] = []

    def unlisted(error: OSError) -> None:
        if error.filename is not None:
            found.append(Path(error.filename))

    for directory, subdirs, files in os.walk(folder, onerror=unlisted):
        subdirs[:] = [name for name in subdirs if not name.startswith(".")]
        for name in subdirs:
            if Path(directory, name).is_symlink():
                skipped.append(Skipped(Path(directory, name), "link to a folder (not followed)"))
        for name in files:
            if name.startswith("."):
                continue
            path = Path(directory, name)
            reason = _skip_reason(path)
            if reason is None:
                found.append(path)
            else:
                skipped.append(Skipped(path, reason))
    return found, skipped


def discover_files(paths: Sequence[Path]) -> Discovery:
    """The files to ingest for `paths` (absolute, de-duplicated and sorted), and the
    files found in folders and left out (sorted, each with its reason).

    A file named directly is kept whatever it is (`read_file` and `parse_file` then
    say if it cannot be ingested). A folder is walked recursively; hidden files and
    folders (names that start with ".") are not looked at, links to folders are not
    followed (so a link loop is never walked; each is listed as left out). Of the
    files found, those left out are: those whose suffix is not in
    `SUPPORTED_SUFFIXES` (any case), those named like a folder's notes
    (`FOLDER_NOTES`: README.md, SOURCES.md...), and those that are not regular files
    (a named pipe, a device, a link to one), which could never be read or would
    never end. Kept for `read_file` to fail on with its cause: a broken or looping
    symbolic link, a folder that cannot be listed. Raises `IngestError(path, "no
    such file or directory")` for a path named directly that does not exist.
    """
    found: set[Path] = set()
    skipped: dict[Path, Skipped] = {}
    for path in paths:
        if path.is_dir():
            files, left_out = _walk(path)
            found.update(_absolute(file) for file in files)
            skipped.update(
                (_absolute(s.path), Skipped(_absolute(s.path), s.reason)) for s in left_out
            )
        elif path.exists() or path.is_symlink():
            found.add(_absolute(path))
        else:
            raise IngestError(source_name(path), "no such file or directory")
    return Discovery(
        sorted(found),
        sorted((s for p, s in skipped.items() if p not in found), key=lambda s: s.path),
    )


def discover(paths: Sequence[Path]) -> list[Path]:
    """The files to ingest for `paths`: `discover_files(paths).files`."""
    return discover_files(paths).files


def format_of(path: Path) -> Format:
    """Return the format of `path`'s suffix (any case), whose parser reads it.

    Raises `IngestError(path, "unsupported file type '.xyz' (supported: ...)")`.
    """
    suffix = path.suffix.lower()
    found = format_for(suffix)
    if found is None:
        shown = f"'{suffix}'" if suffix else "'' (no suffix)"
        supported = ", ".join(SUPPORTED_SUFFIXES)
        raise IngestError(
            source_name(path), f"unsupported file type {shown} (supported: {supported})"
        )
    return found


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


def _over_limit(size: str, max_file_mb: float) -> str:
    return f"file is {size}, over the {max_file_mb:g} MB limit (raise it with --max-file-mb)"


def read_file(path: Path, max_file_mb: float = DEFAULT_MAX_FILE_MB) -> bytes:
    """Return the bytes of `path`, a regular file (or a link to one), reading at
    most `max_file_mb` megabytes.

    Raises `IngestError` naming `path` (`source_name`) with the OS's reason when it
    cannot be read (a broken or looping symbolic link is named as one, with its
    target; a folder as "Is a directory", or "cannot read folder: ..." when it
    cannot be listed); "not a regular file: a named pipe (FIFO)" (a device, a
    socket...: refused unopened, so that a pipe never blocks and a device such as
    /dev/zero, whose size says 0, is never read); "empty file (0 bytes)"; and a
    message giving both sizes when it is larger than `max_file_mb` megabytes
    (checked before reading, and again by reading one byte past the limit).
    """
    name = source_name(path)
    limit = int(max_file_mb * 1_000_000)
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            os.listdir(path)  # the OS's reason when it cannot be listed
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise IngestError(name, _not_regular(path, mode))
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe swapped in: no wait
        with open(descriptor, "rb") as file:
            opened = os.fstat(descriptor)
            if not stat.S_ISREG(opened.st_mode):
                raise IngestError(name, _not_regular(path, opened.st_mode))
            if opened.st_size > limit:
                raise IngestError(
                    name, _over_limit(f"{opened.st_size / 1_000_000:,.1f} MB", max_file_mb)
                )
            raw = file.read(limit + 1)
    except OSError as exc:
        raise IngestError(name, _unreadable_cause(path, exc)) from exc
    if len(raw) > limit:
        raise IngestError(name, _over_limit("larger than it said", max_file_mb))
    if not raw:
        raise IngestError(name, "empty file (0 bytes)")
    return raw


def parse_bytes(raw: bytes, path: Path, options: ParseOptions | None = None) -> ParsedDocument:
    """Parse the bytes `raw` of the file `path` with the parser for its suffix.

    The parser is given `path` as `source_name` writes it (a title taken from the
    file name can be stored). Raises `IngestError` naming `path` when the suffix is
    not supported, the content is another kind of file than the suffix says
    ("named .pdf but the content is HTML"), the parser rejects it (corrupt,
    encrypted, undecodable...) or fails on it in any other way, or the document has
    no text to index ("empty document: no text to index"); MemoryError as raised.
    """
    parser = format_of(path)
    name = source_name(path)
    cause = mislabel_cause(raw, path.suffix.lower())
    if cause is not None:
        raise IngestError(name, cause)
    try:
        document = parser.parse(raw, name, options or ParseOptions())
    except (IngestError, MemoryError):  # out of memory: the parse's limit says so
        raise
    except Exception as exc:  # a parser library's own failure on a hostile file
        raise IngestError(name, f"cannot parse: {type(exc).__name__}: {exc}") from exc
    if not any(
        document.text[b.start : b.end].strip() for b in document.blocks if b.kind != "furniture"
    ):
        raise IngestError(name, "empty document: no text to index")
    return document


def parse_file(
    path: Path, options: ParseOptions | None = None, max_file_mb: float = DEFAULT_MAX_FILE_MB
) -> ParsedDocument:
    """Read and parse one file: `parse_bytes(read_file(path, max_file_mb), path, options)`.

    The suffix is checked before the file is read. Raises `IngestError` naming
    `path` for every reason `read_file` and `parse_bytes` give.
    """
    format_of(path)
    return parse_bytes(read_file(path, max_file_mb), path, options)
