"""Which model server a backend talks to: never a provider's cloud unless asked for.

Documents given to quoteproof may be confidential, so nothing goes to a cloud API
by default. `openai` without a URL goes to a local Ollama; `anthropic` has no local
default and is refused. A provider's cloud is used only when it is named: its URL
given (argument or the provider's `*_BASE_URL` variable), or `cloud` set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from quoteproof.errors import BackendConfigError, Hint

__all__ = [
    "CLOUD_URLS",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT_S",
    "OLLAMA_URL",
    "URL_VARIABLES",
    "Provider",
    "public_url",
    "server_url",
]

Provider = Literal["openai", "anthropic"]

DEFAULT_TIMEOUT_S = 60.0
"""Seconds a request to a model server may take in all (retries included, to the reply's
last byte), for the `openai` and `anthropic` backends."""
DEFAULT_RETRIES = 2
"""How many times those backends retry a failed request."""

OLLAMA_URL = "http://localhost:11434/v1"
"""Where `openai` requests go when no server is named: Ollama on this machine."""
CLOUD_URLS: dict[Provider, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
"""Each provider's own cloud API, used only when asked for."""
URL_VARIABLES: dict[Provider, str] = {
    "openai": "OPENAI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
}
"""The environment variable that names each provider's server."""


def server_url(
    provider: Provider,
    base_url: str | None = None,
    *,
    cloud: bool = False,
    environ: Mapping[str, str] | None = None,
) -> str:
    """Return the URL of the server `provider`'s requests go to.

    In order: `base_url`; with `cloud`, the provider's cloud API (`CLOUD_URLS`);
    the provider's variable in `environ` (default: `os.environ`; `URL_VARIABLES`,
    an empty value counts as unset); for `openai`, `OLLAMA_URL`. Raises
    `BackendConfigError` when both `base_url` and `cloud` are given, and for
    `anthropic` when none of them names a server. Makes no connection.
    """
    if base_url and cloud:
        raise BackendConfigError(
            "a server URL and the provider's cloud API both choose the server: give one of them",
            hint=Hint.ONE_SERVER,
        )
    if base_url:
        return base_url
    if cloud:
        return CLOUD_URLS[provider]
    variable = URL_VARIABLES[provider]
    configured = (os.environ if environ is None else environ).get(variable)
    if configured:
        return configured
    if provider == "openai":
        return OLLAMA_URL
    raise BackendConfigError(
        f"the {provider} backend has no local default server: name your own server's URL "
        f"(or set {variable}), or choose the provider's cloud API, which sends your "
        "questions and passages to it",
        hint=Hint.NAME_SERVER,
        facts={"backend": provider, "variable": variable},
    )


def public_url(url: str) -> str:
    """Return `url` without what may be a secret (user name and password, query,
    fragment), for answers, the audit log and error messages."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
