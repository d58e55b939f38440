"""Reading the members of a ZIP archive without trusting the sizes it declares.

A ZIP member says how many bytes it inflates to, but nothing makes it keep its
word, and `zipfile.ZipFile.read` inflates all of a member's data in one call before
cutting it to the declared size: one small, lying member can make gigabytes. So
`check_members` inflates every member itself, `READ_CHUNK` bytes at a time, and
stops as soon as one produces more than it declares. An archive that passes holds
only members whose real sizes are the declared ones, which the caller has bounded
(see `ingest.docx`), so a library that reads it afterwards inflates no more.
"""

from __future__ import annotations

import copy
import zipfile

READ_CHUNK = 64 * 2**10
"""Most bytes inflated at a time while a member is checked."""

READABLE_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
"""Compression methods read: Office writes no other. (zipfile inflates bzip2 and
LZMA data without a bound on one call's output.)"""

_UNBOUNDED = 2**62
"""A declared size that never ends a read: the compressed data's own end does."""


class MemberProblem(Exception):
    """A member that is refused unread: `str()` says which and why; `bomb` is true
    when it inflates to more than it declares."""

    def __init__(self, message: str, *, bomb: bool) -> None:
        super().__init__(message)
        self.bomb = bomb


def size_text(count: int) -> str:
    """`count` bytes as "2.0 GiB" (in the largest unit below 1024 of it), for messages."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def inflated_size(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> int:
    """Return how many bytes `member` really inflates to, having produced at most
    `member.file_size + READ_CHUNK` of them, `READ_CHUNK` at a time.

    Raises `MemberProblem` when it produces more than `member.file_size` (it stops
    there), is encrypted or uses a method outside `READABLE_METHODS`; and what
    zipfile raises on damaged data (`BadZipFile`, `zlib.error`, `EOFError`).
    """
    if member.flag_bits & 0x1:
        raise MemberProblem(f"{member.filename} is encrypted", bomb=False)
    if member.compress_type not in READABLE_METHODS:
        raise MemberProblem(
            f"{member.filename} uses compression method {member.compress_type} "
            "(only stored and deflate are read)",
            bomb=False,
        )
    unbounded = copy.copy(member)
    unbounded.file_size = _UNBOUNDED  # read up to the end of the compressed data
    produced = 0
    with archive.open(unbounded) as stream:
        while piece := stream.read(READ_CHUNK):
            produced += len(piece)
            if produced > member.file_size:
                raise MemberProblem(
                    f"{member.filename} inflates to more than the "
                    f"{size_text(member.file_size)} it declares",
                    bomb=True,
                )
    return produced


def check_members(archive: zipfile.ZipFile) -> None:
    """Inflate every member of `archive` (`inflated_size`) and check that it makes
    exactly the bytes it declares; nothing inflated is kept.

    Raises `MemberProblem` (see `inflated_size`, and for a member shorter than it
    declares) and zipfile's errors on damaged data. O(inflated size), in memory
    O(`READ_CHUNK`).
    """
    for member in archive.infolist():
        produced = inflated_size(archive, member)
        if produced != member.file_size:
            raise MemberProblem(
                f"{member.filename} inflates to {size_text(produced)}, not the "
                f"{size_text(member.file_size)} it declares",
                bomb=False,
            )
