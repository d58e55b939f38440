"""What the service says about itself, for every face: the installed quoteproof
version and the JSON schema of the answers it gives."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from quoteproof import __version__
from quoteproof.model import ANSWER_SCHEMA

__all__ = ["Versions", "installed_version", "versions"]


def installed_version() -> str:
    """The installed quoteproof version (the package's own when it is not installed)."""
    try:
        return metadata.version("quoteproof")
    except metadata.PackageNotFoundError:
        return __version__


@dataclass(frozen=True)
class Versions:
    """The quoteproof version and the answer JSON schema's identifier."""

    version: str
    answer_schema: str


def versions() -> Versions:
    """The versions a client asks for (`GET /v1/version`)."""
    return Versions(installed_version(), ANSWER_SCHEMA)
