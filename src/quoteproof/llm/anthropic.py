"""Backend for Anthropic's Messages API, through the official `anthropic` SDK.

Maps quoteproof's chat messages onto the Messages API: system messages become the
`system` parameter; an assistant message's tool calls become `tool_use` blocks; tool
results become `tool_result` blocks in a user message; and consecutive messages that
end up with the same role are merged, because the API wants user and assistant turns
to alternate.

No sampling temperature is sent: the SDK (2.x) has no such parameter, and the API
version it speaks answers HTTP 400 to one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, TypedDict

import anthropic
from anthropic.types import (
    AssistantMessageParam,
    ContentBlockParam,
    MessageParam,
    TextBlock,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlock,
    ToolUseBlockParam,
    UserMessageParam,
)
from anthropic.types import Message as AnthropicMessage

from quoteproof.errors import BackendConfigError, Hint
from quoteproof.llm.base import (
    Completion,
    CompletionRequest,
    Message,
    TextSink,
    ToolCall,
    ToolSpec,
    Usage,
    model_capabilities,
)
from quoteproof.llm.errors import checked, read_replies, reply_errors
from quoteproof.llm.sdk_backend import SdkBackend
from quoteproof.llm.servers import DEFAULT_RETRIES, DEFAULT_TIMEOUT_S, server_url

if TYPE_CHECKING:
    from quoteproof.llm.registry import BackendSpec

__all__ = ["AnthropicBackend", "from_spec"]

API_KEY_VARIABLE = "ANTHROPIC_API_KEY"

_Role = Literal["user", "assistant"]
_Content = str | list[ContentBlockParam]
"""A message's content: plain text, or content blocks."""


# --- requests ----------------------------------------------------------------------


def _tool_input(arguments: str) -> dict[str, object]:
    """The JSON object `arguments` encodes; {} when it is not a JSON object."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _tool_use_block(call: ToolCall) -> ToolUseBlockParam:
    return ToolUseBlockParam(
        type="tool_use", id=call.id, name=call.name, input=_tool_input(call.arguments)
    )


def _content(message: Message) -> tuple[_Role, _Content]:
    """The role and content a non-system message takes in the Messages API."""
    if message.role == "tool":
        result = ToolResultBlockParam(
            type="tool_result", tool_use_id=message.tool_call_id or "", content=message.content
        )
        return "user", [result]
    if message.role == "assistant" and message.tool_calls:
        text: list[ContentBlockParam] = (
            [TextBlockParam(type="text", text=message.content)] if message.content else []
        )
        return "assistant", text + [_tool_use_block(c) for c in message.tool_calls]
    return ("assistant" if message.role == "assistant" else "user"), message.content


def _blocks(content: _Content) -> list[ContentBlockParam]:
    if isinstance(content, str):
        return [TextBlockParam(type="text", text=content)]
    return content


def _message_param(role: _Role, content: _Content) -> MessageParam:
    if role == "user":
        return UserMessageParam(role="user", content=content)
    return AssistantMessageParam(role="assistant", content=content)


def _conversation(messages: Iterable[Message]) -> list[MessageParam]:
    """The non-system messages as alternating turns: consecutive messages with the same
    resulting role are merged into one, their content blocks concatenated in order."""
    turns: list[tuple[_Role, _Content]] = []
    for message in messages:
        if message.role == "system":
            continue
        role, content = _content(message)
        if turns and turns[-1][0] == role:
            turns[-1] = (role, _blocks(turns[-1][1]) + _blocks(content))
        else:
            turns.append((role, content))
    return [_message_param(role, content) for role, content in turns]


def _system(messages: Iterable[Message]) -> str | anthropic.Omit:
    """The system messages joined with blank lines; omitted when there are none."""
    texts = [m.content for m in messages if m.role == "system"]
    return "\n\n".join(texts) if texts else anthropic.omit


def _tool_param(tool: ToolSpec) -> ToolParam:
    return ToolParam(name=tool.name, description=tool.description, input_schema=tool.parameters)


class _MessagesParams(TypedDict):
    """The arguments `complete` and `stream` both pass to the SDK."""

    model: str
    max_tokens: int
    system: str | anthropic.Omit
    messages: list[MessageParam]
    tools: list[ToolParam] | anthropic.Omit


def _messages_params(model: str, request: CompletionRequest) -> _MessagesParams:
    """The request's parameters; `system` and `tools` are sent only when present."""
    return _MessagesParams(
        model=model,
        max_tokens=request.max_tokens,
        system=_system(request.messages),
        messages=_conversation(request.messages),
        tools=[_tool_param(t) for t in request.tools] if request.tools else anthropic.omit,
    )


# --- replies -----------------------------------------------------------------------


def _completion(message: AnthropicMessage) -> Completion:
    """The reply's text blocks concatenated, its `tool_use` blocks as tool calls (the
    arguments being the JSON encoding of each `input`), and its usage. Raises
    `TypeError` (or another `MALFORMED_REPLY` error) for a reply of the wrong shape."""
    blocks = message.content
    return checked(
        Completion(
            text="".join(b.text for b in blocks if isinstance(b, TextBlock)),
            model=message.model,
            usage=Usage(message.usage.input_tokens, message.usage.output_tokens),
            tool_calls=tuple(
                ToolCall(b.id, b.name, json.dumps(b.input, ensure_ascii=False))
                for b in blocks
                if isinstance(b, ToolUseBlock)
            ),
        )
    )


# --- the backend -------------------------------------------------------------------


class AnthropicBackend(SdkBackend):
    """Messages through the official `anthropic` SDK.

    The API key is `api_key`, else `$ANTHROPIC_API_KEY`; without either the
    constructor raises `BackendConfigError`. `base_url` is the server's URL
    (`llm.servers.server_url` chooses one); it is kept as `server` (without credentials:
    `public_url`), the URL recorded in each answer. One request may take `timeout`
    seconds in all, retries included, from sending it to the reply's last byte
    (`llm.deadline`); past that it raises `BackendTimeoutError`. Connection failures
    (after `max_retries` retries) raise `BackendUnavailableError`; error replies from
    the server, and replies that are not valid JSON of the protocol, raise
    `BackendError`.
    """

    name = "anthropic"
    capabilities = model_capabilities(constrained=False)
    _client: anthropic.Anthropic

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_RETRIES,
    ) -> None:
        key = api_key or os.environ.get(API_KEY_VARIABLE)
        if not key:
            raise BackendConfigError(
                f"the anthropic backend needs an API key: set {API_KEY_VARIABLE} or give one",
                hint=Hint.API_KEY,
                facts={"backend": "anthropic", "variable": API_KEY_VARIABLE},
            )
        super().__init__(
            model,
            base_url,
            timeout,
            anthropic,
            anthropic.AnthropicError,
            client=anthropic.Anthropic,
            api_key=key,
            max_retries=max_retries,
        )

    def complete(self, request: CompletionRequest) -> Completion:
        """Send the request (with its tools, if any) and return the reply's text, tool
        calls and usage."""
        with (
            self._requesting(),
            reply_errors(self._url),
        ):
            message = self._client.messages.create(**_messages_params(self._model, request))
            return _completion(message)

    def stream(self, request: CompletionRequest, on_text: TextSink) -> Completion:
        """Like `complete`, streaming: `on_text` gets each text delta as it arrives;
        tool calls and usage come from the final message."""
        with (
            self._requesting(),
            self._client.messages.stream(**_messages_params(self._model, request)) as events,
        ):
            for text in read_replies(events.text_stream, self._url):
                if text:
                    on_text(text)
            with reply_errors(self._url):
                return _completion(events.get_final_message())


def from_spec(spec: BackendSpec) -> AnthropicBackend:
    """The `anthropic` backend of `spec` (`llm.registry`): its model, on the server
    `llm.servers.server_url` chooses (raises `BackendConfigError` when none is named)."""
    return AnthropicBackend(
        model=spec.model or "",
        base_url=server_url("anthropic", spec.base_url, cloud=spec.cloud),
        api_key=spec.api_key,
        timeout=spec.timeout,
    )
