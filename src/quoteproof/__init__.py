"""quoteproof: answers from documents whose quotations are verbatim by construction."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quoteproof.index import Index

__all__ = ["Index"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Imported lazily so that `import quoteproof.model` stays light.
    if name == "Index":
        from quoteproof.index import Index

        return Index
    raise AttributeError(f"module 'quoteproof' has no attribute {name!r}")
