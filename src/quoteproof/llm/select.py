"""Choosing a backend from command-line options and the environment."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from quoteproof.errors import BackendConfigError, Hint
from quoteproof.llm.base import Backend
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.llm.servers import DEFAULT_RETRIES, DEFAULT_TIMEOUT_S, server_url

BackendName = Literal["extractive", "openai", "anthropic", "local"]

__all__ = ["BackendConfigError", "BackendName", "make_backend"]


def make_backend(
    name: BackendName | None,
    *,
    model: str | None = None,
    base_url: str | None = None,
    cloud: bool = False,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = DEFAULT_RETRIES,
    grammar: bool | None = None,
    threads: int | None = None,
    context: int | None = None,
) -> Backend:
    """Return the backend called `name`; None picks `openai` if a model is named, else
    `extractive` (no model server needed).

    `openai` and `anthropic` talk to the server `llm.servers.server_url` chooses
    from `base_url`, `cloud` and the environment: a provider's cloud API only when
    named or with `cloud`; `openai` defaults to a local Ollama, `anthropic` to none.
    `local` runs the GGUF file `model` (default: the bundled SmolLM2) in-process with
    `threads` and a `context` window, always under grammars (`grammar` False turns
    them off). `grammar` True makes `openai` send grammars (llama.cpp servers).
    Raises `BackendConfigError` when `openai` or `anthropic` is asked for without a
    model name, with both `base_url` and `cloud`, `anthropic` with no server named
    or without an API key (argument or `ANTHROPIC_API_KEY`), `grammar` with a
    backend that cannot take one, or `local` without its extra or with a missing or
    invalid model file.
    """
    if name is None:
        name = "openai" if model else "extractive"
    if grammar and name in ("extractive", "anthropic"):
        raise BackendConfigError(
            f"grammars need the openai or local backend, not {name}",
            hint=Hint.GRAMMAR_BACKEND,
            facts={"backend": name},
        )
    if name == "extractive":
        return ExtractiveBackend()
    if name == "local":
        from quoteproof.llm.local import DEFAULT_CONTEXT, LocalBackend

        return LocalBackend(
            model_path=Path(model) if model else None,
            context=context or DEFAULT_CONTEXT,
            threads=threads,
            grammar=grammar is not False,
        )
    if not model:
        raise BackendConfigError(
            f"the {name} backend needs a model name",
            hint=Hint.NAME_MODEL,
            facts={"backend": name},
        )
    url = server_url(name, base_url, cloud=cloud)
    # Each SDK is imported only when its backend is built: they take seconds to load.
    if name == "anthropic":
        from quoteproof.llm.anthropic import AnthropicBackend

        return AnthropicBackend(
            model=model, base_url=url, api_key=api_key, timeout=timeout,
            max_retries=max_retries,
        )  # fmt: skip
    from quoteproof.llm.openai import OpenAIBackend

    return OpenAIBackend(
        model=model, base_url=url, api_key=api_key, timeout=timeout,
        max_retries=max_retries, grammar=bool(grammar),
    )  # fmt: skip
