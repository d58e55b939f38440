"""Tool calling through a grammar, for backends that constrain their output.

Small local models (and `llama_cpp.server` with a model's own chat template) have no
tool-calling API. A constrained backend instead asks for one JSON object per reply,
`{"tool": NAME, "arguments": {...}}`, under a grammar built from the tool schemas,
so every call names a real tool and its arguments match that tool's schema. The
conversation's tool turns are written as plain text for the chat template: an
assistant's calls as their JSON, a tool's result as a user message naming the tool.
"""

from __future__ import annotations

import json
from dataclasses import replace

from quoteproof.llm.base import Completion, CompletionRequest, Message, ToolCall, ToolSpec
from quoteproof.llm.gbnf import tool_call_grammar

__all__ = ["fold_tools", "unfold_tool_call"]

_INSTRUCTIONS = """

Tools: reply with exactly one tool call and nothing else, as one JSON object:
{{"tool": "NAME", "arguments": {{...}}}}
The tools, with the JSON Schema of their arguments:
{tools}"""


def _tool_lines(tools: tuple[ToolSpec, ...]) -> str:
    return "\n".join(
        f"- {tool.name}: {tool.description} Arguments: {json.dumps(tool.parameters)}"
        for tool in tools
    )


def _call_json(call: ToolCall) -> str:
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        arguments = call.arguments
    return json.dumps({"tool": call.name, "arguments": arguments}, ensure_ascii=False)


def _plain_messages(messages: tuple[Message, ...], tools: tuple[ToolSpec, ...]) -> list[Message]:
    names: dict[str, str] = {}
    plain: list[Message] = []
    instructions = _INSTRUCTIONS.format(tools=_tool_lines(tools))
    for message in messages:
        if message.role == "system":
            plain.append(Message("system", message.content + instructions))
        elif message.role == "assistant" and message.tool_calls:
            names.update((call.id, call.name) for call in message.tool_calls)
            plain.append(Message("assistant", "\n".join(map(_call_json, message.tool_calls))))
        elif message.role == "tool":
            name = names.get(message.tool_call_id or "", "the tool")
            plain.append(Message("user", f"Result of {name}: {message.content}"))
        else:
            plain.append(message)
    if not any(message.role == "system" for message in plain):
        plain.insert(0, Message("system", instructions.strip()))
    return plain


def folded_messages(request: CompletionRequest) -> tuple[Message, ...]:
    """The messages `fold_tools(request)` sends (tools described in the prompt),
    without building its grammar."""
    if not request.tools:
        return request.messages
    return tuple(_plain_messages(request.messages, request.tools))


def fold_tools(request: CompletionRequest) -> CompletionRequest:
    """Return `request` with its tools folded into the prompt and a tool-call grammar
    (no `tools` left); a request without tools is returned as it is."""
    if not request.tools:
        return request
    schemas = [(tool.name, tool.parameters) for tool in request.tools]
    return replace(
        request,
        messages=folded_messages(request),
        tools=(),
        grammar=tool_call_grammar(schemas),
    )


def unfold_tool_call(completion: Completion, request: CompletionRequest) -> Completion:
    """Return `completion` (the reply to `fold_tools(request)`) with its JSON tool call
    as a `ToolCall` (id `call_N`, N counting the conversation's assistant turns) and no
    text. A reply that is not such a call (cut short by `max_tokens`) is returned as it
    is, with no tool call. Requests without tools are returned unchanged."""
    if not request.tools:
        return completion
    try:
        data = json.loads(completion.text)
        name, arguments = data["tool"], data["arguments"]
    except (json.JSONDecodeError, KeyError, TypeError):
        return completion
    if not isinstance(name, str):
        return completion
    turn = 1 + sum(message.role == "assistant" for message in request.messages)
    call = ToolCall(f"call_{turn}", name, json.dumps(arguments, ensure_ascii=False))
    return replace(completion, text="", tool_calls=(call,))
