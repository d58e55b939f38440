"""Choosing a backend from command-line options and the environment."""

from __future__ import annotations

from typing import Literal

from quoteproof.errors import BackendConfigError
from quoteproof.llm.anthropic import AnthropicBackend
from quoteproof.llm.base import Backend
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.llm.openai import DEFAULT_RETRIES, DEFAULT_TIMEOUT_S, OpenAIBackend

BackendName = Literal["extractive", "openai", "anthropic"]

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

    Raises `BackendConfigError` when `openai` or `anthropic` is asked for without a
    model name, or `anthropic` without an API key (argument or `ANTHROPIC_API_KEY`).
    """
    if name is None:
        name = "openai" if model else "extractive"
    if name == "extractive":
        return ExtractiveBackend()
    if not model:
        raise BackendConfigError(
            f"--llm {name} needs a model name: pass --model NAME or set QUOTEPROOF_MODEL"
        )
    backend = AnthropicBackend if name == "anthropic" else OpenAIBackend
    return backend(
        model=model, base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
    )
