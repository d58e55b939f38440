"""Choosing a backend from command-line options and the environment."""

from __future__ import annotations

from typing import Literal

from quoteproof.errors import BackendConfigError
from quoteproof.llm.base import Backend
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.llm.openai import DEFAULT_RETRIES, DEFAULT_TIMEOUT_S, OpenAIBackend

BackendName = Literal["extractive", "openai"]

__all__ = ["BackendConfigError", "BackendName", "make_backend"]


def make_backend(
    name: BackendName | None,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = DEFAULT_RETRIES,
) -> Backend:
    """Return the backend called `name`; None picks `openai` if a model is named, else
    `extractive` (no model server needed).

    Raises `BackendConfigError` when `openai` is asked for without a model name.
    """
    if name is None:
        name = "openai" if model else "extractive"
    if name == "extractive":
        return ExtractiveBackend()
    if not model:
        raise BackendConfigError(
            "--llm openai needs a model name: pass --model NAME or set QUOTEPROOF_MODEL"
        )
    return OpenAIBackend(
        model=model, base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
    )
