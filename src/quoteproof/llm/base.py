"""The one protocol every language-model backend implements.

In the spirit of httpx's transports: a backend turns a `CompletionRequest` into a
`Completion` and knows nothing about quoting, stores or rendering. `stream` is the
same call with the reply text handed over piece by piece as it arrives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from quoteproof.llm.capability import Capability
from quoteproof.model import Chunk, Message, Role, ToolCall, Usage

__all__ = [
    "Backend",
    "Capability",
    "Completion",
    "CompletionRequest",
    "Message",
    "Role",
    "TextSink",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "model_capabilities",
]


_MODEL = frozenset({Capability.MODEL, Capability.TOOLS, Capability.STREAMING})


def model_capabilities(constrained: bool) -> frozenset[Capability]:
    """The capabilities of a language-model backend: a model, tool calls and
    streaming, plus `CONSTRAINED` when `constrained`."""
    return _MODEL | {Capability.CONSTRAINED} if constrained else _MODEL


TextSink = Callable[[str], None]
"""Receives each piece of reply text, in order, while a reply streams."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: its name, what it does, and a JSON Schema
    (`{"type": "object", "properties": ..., "required": [...]}`) of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(hash=False)


@dataclass(frozen=True)
class CompletionRequest:
    """What a backend is asked: the chat messages, plus the question and sources they
    were built from (used by backends that do not read prose, such as `extractive`).

    With `tools`, the model may answer with tool calls instead of (or besides) text.
    `grammar` (GBNF, see `quoting.grammar`) constrains the reply text; only backends
    with `Capability.CONSTRAINED` read it, the others answer unconstrained.
    """

    messages: tuple[Message, ...]
    question: str
    sources: tuple[Chunk, ...]
    max_tokens: int = 1024
    temperature: float = 0.0
    tools: tuple[ToolSpec, ...] = ()
    grammar: str | None = None


@dataclass(frozen=True)
class Completion:
    """The backend's raw reply: text, tool calls (in order), the model that wrote it
    and its token usage (None when the server reports none)."""

    text: str
    model: str | None
    usage: Usage | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class Backend(Protocol):
    """A source of completions. Raises `BackendError` (or a subclass) on failure.

    `capabilities` says what it can do (`Capability`): a backend with `CONSTRAINED`
    obeys `CompletionRequest.grammar` and makes tool calls through the grammar too
    (`llm.tool_grammar`), so their arguments always match the tool schemas. `server`
    is the URL of the model server it talks to, recorded in every answer (None: no
    server, as for `extractive` and the in-process `local`).
    """

    name: str
    model: str | None
    server: str | None
    capabilities: frozenset[Capability]

    def excess_tokens(self, request: CompletionRequest) -> int:
        """Return by how many tokens `request` (its prompt plus `max_tokens`) overflows
        the model's context window; 0 when it fits or the backend cannot tell."""
        ...

    def complete(self, request: CompletionRequest) -> Completion:
        """Return the model's reply to `request`."""
        ...

    def stream(self, request: CompletionRequest, on_text: TextSink) -> Completion:
        """Return the model's reply to `request`, calling `on_text` with each piece of
        its text as it arrives; the pieces joined equal the returned `text`."""
        ...
