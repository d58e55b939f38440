"""What an uploaded file must be before it is stored: a supported type whose content
is what its name says (`upload_problem`)."""

from __future__ import annotations

from pathlib import PurePath

from quoteproof.ingest.formats import SUPPORTED_SUFFIXES, format_names
from quoteproof.ingest.sniff import mislabel_cause

__all__ = ["SNIFF_BYTES", "SUPPORTED_SUFFIXES", "format_names", "upload_problem"]

SNIFF_BYTES = 1024
"""How much of a file's start `upload_problem` needs."""


def upload_problem(name: str, head: bytes) -> str | None:
    """Why a file named `name` whose first bytes are `head` (`SNIFF_BYTES` of them)
    cannot be ingested: an unsupported suffix, or content of another kind than the
    suffix says (`ingest.sniff.mislabel_cause`); None when it may be."""
    suffix = PurePath(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        shown = f"'{suffix}'" if suffix else "no suffix"
        return f"{name}: unsupported file type {shown} (supported: {', '.join(SUPPORTED_SUFFIXES)})"
    cause = mislabel_cause(head, suffix)
    return None if cause is None else f"{name}: {cause}"
