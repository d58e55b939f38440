"""The safety check of a DOCX archive, before python-docx reads it: a file that is
not a ZIP, lacks `word/document.xml`, declares that it would expand beyond
`MAX_UNCOMPRESSED_BYTES` (a zip bomb) or holds an encrypted member, or one
compressed by a method Office does not write, is refused without decompressing
anything."""

from __future__ import annotations

import io
import zipfile

from quoteproof.errors import IngestError

MAX_UNCOMPRESSED_BYTES = 512 * 2**20
"""Most bytes all members of a DOCX archive may declare together, uncompressed."""

MAX_COMPRESSION_RATIO = 100
"""Highest uncompressed/compressed ratio allowed for a member above `RATIO_CHECK_BYTES`."""

RATIO_CHECK_BYTES = 50 * 2**20
"""Members that expand to more than this must respect `MAX_COMPRESSION_RATIO`."""

OLE_SIGNATURE = b"\xd0\xcf\x11\xe0"
"""First bytes of an OLE compound file: a legacy .doc, or an encrypted .docx."""

DOCUMENT_PART = "word/document.xml"
"""The archive member holding a DOCX file's body."""


def size_text(count: int) -> str:
    """`count` bytes as "2.0 GiB" (in the largest unit below 1024 of it), for messages."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def _limit(count: int) -> str:
    """A power-of-two limit as "512 MiB", for messages."""
    return size_text(count).replace(".0 ", " ")


def _bomb_cause(members: list[zipfile.ZipInfo]) -> str | None:
    """Why an archive with these members is a zip bomb, or None if it is not.

    Uses only the sizes the archive declares. O(members).
    """
    prefix = "DOCX rejected as a zip bomb"
    total = sum(member.file_size for member in members)
    if total > MAX_UNCOMPRESSED_BYTES:
        largest = max(members, key=lambda member: member.file_size)
        if largest.file_size > MAX_UNCOMPRESSED_BYTES:
            expands = f"{largest.filename} would expand to {size_text(largest.file_size)}"
        else:
            expands = f"its {len(members)} members would expand to {size_text(total)}"
        return f"{prefix}: {expands} (limit {_limit(MAX_UNCOMPRESSED_BYTES)})"
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > RATIO_CHECK_BYTES and ratio > MAX_COMPRESSION_RATIO:
            return (
                f"{prefix}: {member.filename} would expand to {size_text(member.file_size)}, "
                f"{ratio:.0f} times its compressed size (limit {MAX_COMPRESSION_RATIO} "
                f"above {_limit(RATIO_CHECK_BYTES)})"
            )
    return None


READABLE_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
"""Compression methods read: Office writes no other."""


def _member_cause(members: list[zipfile.ZipInfo]) -> str | None:
    """Why a member of an archive with these members cannot be read (encrypted, or
    compressed by a method outside `READABLE_METHODS`), or None. O(members)."""
    for member in members:
        if member.flag_bits & 0x1:
            return f"DOCX rejected: {member.filename} is encrypted"
        if member.compress_type not in READABLE_METHODS:
            return (
                f"DOCX rejected: {member.filename} uses compression method "
                f"{member.compress_type} (only stored and deflate are read)"
            )
    return None


def check_docx_archive(raw: bytes, path: str) -> None:
    """Refuse bytes that are not a safe DOCX archive, before python-docx reads them.

    Raises `IngestError(path, cause)` with cause "encrypted or legacy Word file (OLE
    container), not DOCX"; "not a DOCX file (not a ZIP archive)"; "corrupt DOCX:
    damaged ZIP archive (...)" (it starts like a ZIP but cannot be read as one);
    "not a DOCX file (no word/document.xml)"; "DOCX rejected as a zip bomb: ..."
    (the declared sizes exceed `MAX_UNCOMPRESSED_BYTES` or `MAX_COMPRESSION_RATIO`,
    judged without decompressing); "DOCX rejected: ..." for a member that is
    encrypted or compressed by a method other than stored or deflate. O(members);
    nothing is decompressed.
    """
    if raw.startswith(OLE_SIGNATURE):
        raise IngestError(path, "encrypted or legacy Word file (OLE container), not DOCX")
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        if raw.startswith(b"PK"):
            raise IngestError(path, f"corrupt DOCX: damaged ZIP archive ({exc})") from None
        raise IngestError(path, "not a DOCX file (not a ZIP archive)") from None
    with archive:
        members = archive.infolist()
        if all(member.filename != DOCUMENT_PART for member in members):
            raise IngestError(path, f"not a DOCX file (no {DOCUMENT_PART})")
        cause = _bomb_cause(members) or _member_cause(members)
        if cause is not None:
            raise IngestError(path, cause)
