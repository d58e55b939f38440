"""Choosing a backend by name and options, as the library's callers write it:
`make_backend("openai", model="llama3.1")` is `registry.make_backend` of the
`BackendSpec` those words name."""

from __future__ import annotations

from typing import Any

from quoteproof.errors import BackendConfigError
from quoteproof.llm.base import Backend
from quoteproof.llm.registry import BackendSpec
from quoteproof.llm.registry import make_backend as make_from_spec

__all__ = ["BackendConfigError", "make_backend"]


def make_backend(name: str | None = None, **options: Any) -> Backend:
    """The backend `BackendSpec(llm=name, **options)` names (`registry.make_backend`:
    None picks `openai` when a model is named, else `extractive`). Raises
    `BackendConfigError` as that does, and TypeError for an option no backend has."""
    return make_from_spec(BackendSpec(name, **options))
