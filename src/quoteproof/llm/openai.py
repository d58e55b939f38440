"""Backend for any OpenAI-compatible chat server (OpenAI, Ollama, vLLM, llama.cpp, ...).

Speaks chat completions through the official `openai` SDK, with tool calling
(`tools`, assistant `tool_calls`, `tool` messages) and streaming (`stream=True` with
`stream_options.include_usage`, so the last chunk carries the token usage).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypedDict, Unpack

import openai
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionChunk,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessage,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.completion_usage import CompletionUsage

from quoteproof.errors import BackendError
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
from quoteproof.llm.sdk_backend import SdkBackend, SdkConnection, spec_connection
from quoteproof.llm.tool_grammar import fold_tools, unfold_tool_call

if TYPE_CHECKING:
    from quoteproof.llm.registry import BackendSpec

# Local servers (Ollama, llama.cpp, vLLM) accept any key; the SDK insists on one.
PLACEHOLDER_API_KEY = "not-needed"


# --- requests ----------------------------------------------------------------------


def _tool_call_param(call: ToolCall) -> ChatCompletionMessageFunctionToolCallParam:
    return ChatCompletionMessageFunctionToolCallParam(
        id=call.id, type="function", function={"name": call.name, "arguments": call.arguments}
    )


def _message_param(message: Message) -> ChatCompletionMessageParam:
    """One message in the chat-completions shape: assistant messages carry their
    `tool_calls` (and null content when they have no text), `tool` messages the
    `tool_call_id` they answer."""
    if message.role == "system":
        return ChatCompletionSystemMessageParam(role="system", content=message.content)
    if message.role == "assistant" and message.tool_calls:
        return ChatCompletionAssistantMessageParam(
            role="assistant",
            content=message.content or None,
            tool_calls=[_tool_call_param(call) for call in message.tool_calls],
        )
    if message.role == "assistant":
        return ChatCompletionAssistantMessageParam(role="assistant", content=message.content)
    if message.role == "tool":
        return ChatCompletionToolMessageParam(
            role="tool", content=message.content, tool_call_id=message.tool_call_id or ""
        )
    return ChatCompletionUserMessageParam(role="user", content=message.content)


def _tool_param(tool: ToolSpec) -> ChatCompletionFunctionToolParam:
    return ChatCompletionFunctionToolParam(
        type="function",
        function={
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    )


class _ChatParams(TypedDict):
    """The arguments `complete` and `stream` both pass to `chat.completions.create`."""

    model: str
    messages: list[ChatCompletionMessageParam]
    temperature: float
    max_tokens: int
    tools: list[ChatCompletionFunctionToolParam] | openai.Omit
    extra_body: dict[str, str] | None


def _chat_params(model: str, request: CompletionRequest) -> _ChatParams:
    """The request's parameters; `tools` is sent only when the request has tools, and
    its grammar (as llama.cpp's `grammar` field) only when it has one."""
    return _ChatParams(
        model=model,
        messages=[_message_param(m) for m in request.messages],
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        tools=[_tool_param(t) for t in request.tools] if request.tools else openai.omit,
        extra_body={"grammar": request.grammar} if request.grammar else None,
    )


# --- replies -----------------------------------------------------------------------


def _usage(usage: CompletionUsage | None) -> Usage | None:
    if usage is None:
        return None
    return Usage(usage.prompt_tokens, usage.completion_tokens)


def _tool_calls(message: ChatCompletionMessage) -> tuple[ToolCall, ...]:
    """The message's function tool calls, in order (other kinds are ignored)."""
    return tuple(
        ToolCall(call.id, call.function.name, call.function.arguments)
        for call in message.tool_calls or ()
        if isinstance(call, ChatCompletionMessageFunctionToolCall)
    )


@dataclass
class _PartialCall:
    """A tool call being assembled from stream deltas."""

    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class _StreamedReply:
    """Accumulates `chat.completion.chunk`s of the first choice into a `Completion`."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    model: str | None = None
    usage: Usage | None = None

    def add(self, chunk: ChatCompletionChunk) -> str:
        """Fold one chunk in (its model, usage, text and tool calls) and return the
        text it adds ("" for none)."""
        self.model = chunk.model or self.model
        self.usage = _usage(chunk.usage) or self.usage
        added = ""
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            if choice.delta.content:
                self.text.append(choice.delta.content)
                added += choice.delta.content
            for delta in choice.delta.tool_calls or ():
                call = self.calls.setdefault(delta.index, _PartialCall())
                call.id = delta.id or call.id
                if delta.function is not None:
                    call.name = delta.function.name or call.name
                    call.arguments += delta.function.arguments or ""
        return added

    def completion(self, fallback_model: str) -> Completion:
        """The reply so far; tool calls in index order; `fallback_model` when no chunk
        named a model. Raises `TypeError` for a field of the wrong type."""
        calls = tuple(ToolCall(c.id, c.name, c.arguments) for _, c in sorted(self.calls.items()))
        return checked(
            Completion(
                text="".join(self.text),
                model=self.model or fallback_model,
                usage=self.usage,
                tool_calls=calls,
            )
        )


# --- the backend -------------------------------------------------------------------


class OpenAIBackend(SdkBackend):
    """Chat completions through the official `openai` SDK, made with an
    `SdkConnection`.

    The API key is `api_key`, else `$OPENAI_API_KEY`, else `PLACEHOLDER_API_KEY`
    (local servers take any). With `grammar` (for servers that read llama.cpp's
    `grammar` field: llama.cpp's server, `llama_cpp.server`), requests carry their
    grammar and tool calls are made through one (`llm.tool_grammar`); without it
    grammars are never sent. The server, deadline and errors are as `SdkBackend`
    says.
    """

    name = "openai"
    key_variable = "OPENAI_API_KEY"
    placeholder_key = PLACEHOLDER_API_KEY
    _sdk = openai
    _sdk_error = openai.OpenAIError
    _sdk_client = openai.OpenAI
    _client: openai.OpenAI

    def __init__(self, *, grammar: bool = False, **connection: Unpack[SdkConnection]) -> None:
        super().__init__(**connection)
        self.capabilities = model_capabilities(constrained=grammar)
        self._constrained = grammar

    def _sent(self, request: CompletionRequest) -> CompletionRequest:
        """What goes on the wire: the grammar only when the server reads grammars (and
        then tools folded into one), else no grammar."""
        if self._constrained:
            return fold_tools(request)
        return replace(request, grammar=None)

    def complete(self, request: CompletionRequest) -> Completion:
        """Send the request (with its tools, if any) and return the first choice's text
        and tool calls."""
        sent = self._sent(request)
        with (
            self._requesting(),
            reply_errors(self._url),
        ):
            response = self._client.chat.completions.create(**_chat_params(self._model, sent))
            if not response.choices:
                raise BackendError(f"the model server at {self._url} returned no choices")
            message = response.choices[0].message
            completion = checked(
                Completion(
                    text=message.content or "",
                    model=response.model or self._model,
                    usage=_usage(response.usage),
                    tool_calls=_tool_calls(message),
                )
            )
        return unfold_tool_call(completion, request) if self._constrained else completion

    def stream(self, request: CompletionRequest, on_text: TextSink) -> Completion:
        """Like `complete`, streaming: `on_text` gets each non-empty text delta as it
        arrives. Usage comes from the server's final usage chunk (None without one).
        Tool calls folded into a grammar are not streamed: their JSON is not prose."""
        if self._constrained and request.tools:
            return self.complete(request)
        reply = _StreamedReply()
        params = _chat_params(self._model, self._sent(request))
        with (
            self._requesting(),
            self._client.chat.completions.create(
                **params, stream=True, stream_options={"include_usage": True}
            ) as chunks,
        ):
            for chunk in read_replies(chunks, self._url):
                with reply_errors(self._url):
                    text = reply.add(chunk)
                if text:
                    on_text(text)
            with reply_errors(self._url):
                return reply.completion(self._model)


def from_spec(spec: BackendSpec) -> OpenAIBackend:
    """The `openai` backend of `spec` (`llm.registry`), connected as
    `sdk_backend.spec_connection` says, sending grammars only with `spec.grammar`."""
    return OpenAIBackend(**spec_connection("openai", spec), grammar=bool(spec.grammar))
