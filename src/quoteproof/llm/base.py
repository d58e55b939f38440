"""The one protocol every language-model backend implements.

In the spirit of httpx's transports: a backend turns a `CompletionRequest` into a
`Completion` and knows nothing about quoting, stores or rendering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from quoteproof.model import Chunk

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str


@dataclass(frozen=True)
class CompletionRequest:
    """What a backend is asked: the chat messages, plus the question and sources they
    were built from (used by backends that do not read prose, such as `extractive`)."""

    messages: tuple[Message, ...]
    question: str
    sources: tuple[Chunk, ...]
    max_tokens: int = 1024
    temperature: float = 0.0


@dataclass(frozen=True)
class Usage:
    """Token counts reported by the model server, when it reports them."""

    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Completion:
    """The backend's raw reply text, the model that wrote it and its token usage."""

    text: str
    model: str | None
    usage: Usage | None = None


class Backend(Protocol):
    """A source of completions. Raises `BackendError` (or a subclass) on failure."""

    name: str
    model: str | None

    def complete(self, request: CompletionRequest) -> Completion:
        """Return the model's reply to `request`."""
        ...
