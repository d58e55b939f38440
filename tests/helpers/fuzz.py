"""Hostile inputs for the fuzz tests: byte-level mutations of a valid seed,
re-zipping an archive with one member changed (a DOCX with hostile XML inside), and
a member declaring another size than it has."""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Callable

from hypothesis import strategies as st

Mutation = Callable[[bytes], bytes]


@st.composite
def _mutation(draw: st.DrawFn, size: int) -> Mutation:
    """One edit of a byte string of about `size` bytes: flip bits of a byte, cut the
    tail, insert bytes, delete a range, or repeat a range."""
    kind = draw(st.sampled_from(["flip", "truncate", "insert", "delete", "repeat"]))
    at = draw(st.integers(0, max(size - 1, 0)))
    if kind == "flip":
        bits = draw(st.integers(1, 255))
        return lambda raw: raw[:at] + bytes([raw[at] ^ bits]) + raw[at + 1 :] if raw[at:] else raw
    if kind == "truncate":
        return lambda raw: raw[:at]
    if kind == "insert":
        extra = draw(st.binary(min_size=1, max_size=16))
        return lambda raw: raw[:at] + extra + raw[at:]
    length = draw(st.integers(1, 64))
    if kind == "delete":
        return lambda raw: raw[:at] + raw[at + length :]
    times = draw(st.integers(2, 8))
    return lambda raw: raw[:at] + raw[at : at + length] * times + raw[at + length :]


@st.composite
def mutated(draw: st.DrawFn, seed: bytes, max_edits: int = 4) -> bytes:
    """`seed` after 1 to `max_edits` random edits (see `_mutation`)."""
    raw = seed
    for _ in range(draw(st.integers(1, max_edits))):
        raw = draw(_mutation(len(raw)))(raw)
    return raw


def rezip(archive: bytes, member: str, data: bytes) -> bytes:
    """`archive` (a ZIP) written again with `member`'s bytes replaced by `data`."""
    source = zipfile.ZipFile(io.BytesIO(archive))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info, data if info.filename == member else source.read(info))
    return buffer.getvalue()


def zip_member(archive: bytes, member: str) -> bytes:
    """The bytes of `member` of `archive` (a ZIP)."""
    return zipfile.ZipFile(io.BytesIO(archive)).read(member)


def declare_size(raw: bytes, name: str, size: int) -> bytes:
    """`raw` (a ZIP) with the local header and the central directory both declaring
    `name` to expand to `size` bytes."""
    data = bytearray(raw)
    # (signature, offset of the name length, of the name, of the uncompressed size)
    for signature, length_at, name_at, size_at in (
        (b"PK\x03\x04", 26, 30, 22),
        (b"PK\x01\x02", 28, 46, 24),
    ):
        at = data.find(signature)
        while at != -1:
            name_length = struct.unpack_from("<H", data, at + length_at)[0]
            if data[at + name_at : at + name_at + name_length] == name.encode():
                struct.pack_into("<I", data, at + size_at, size)
            at = data.find(signature, at + 4)
    return bytes(data)
