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
from quoteproof.llm.sdk_backend import SdkBackend, spec_connection

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
    """Messages through the official `anthropic` SDK, made with an `SdkConnection`.

    The API key is `api_key`, else `$ANTHROPIC_API_KEY`; without either the
    constructor raises `BackendConfigError`. The server, deadline and errors are as
    `SdkBackend` says.
    """

    name = "anthropic"
    capabilities = model_capabilities(constrained=False)
    key_variable = API_KEY_VARIABLE
    _sdk = anthropic
    _sdk_error = anthropic.AnthropicError
    _sdk_client = anthropic.Anthropic
    _client: anthropic.Anthropic

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
    """The `anthropic` backend of `spec` (`llm.registry`), connected as
    `sdk_backend.spec_connection` says (raises `BackendConfigError` when no server is
    named)."""
    return AnthropicBackend(**spec_connection("anthropic", spec))
