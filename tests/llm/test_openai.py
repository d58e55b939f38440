"""The OpenAI-compatible backend against a real scripted HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from helpers.llm_servers import Event, ScriptedOpenAIServer, Tokens, ToolReply, Turn
from quoteproof.errors import BackendError, BackendUnavailableError, Hint
from quoteproof.llm.base import CompletionRequest, Message, ToolCall, ToolSpec, Usage
from quoteproof.llm.openai import OpenAIBackend
from quoteproof.llm.select import BackendConfigError, make_backend

REQUEST = CompletionRequest(
    messages=(Message("system", "rules"), Message("user", "sources + question")),
    question="q?",
    sources=(),
    max_tokens=64,
)


def test_sends_messages_and_returns_reply(openai_server: Any) -> None:
    openai_server.script = ['<quote ref="abc.1"/>']
    backend = OpenAIBackend(model="tiny", base_url=openai_server.base_url, api_key="k")
    completion = backend.complete(REQUEST)
    assert completion.text == '<quote ref="abc.1"/>'
    assert completion.model == "tiny"
    assert completion.usage is not None and completion.usage.completion_tokens == 5
    sent = openai_server.requests[0]
    assert sent["model"] == "tiny"
    assert sent["messages"] == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "sources + question"},
    ]
    assert sent["temperature"] == 0.0


def test_retries_a_server_error_then_succeeds(openai_server: Any) -> None:
    openai_server.script = [(500, {"error": {"message": "boom"}}), "fine"]
    backend = OpenAIBackend(model="m", base_url=openai_server.base_url, max_retries=2)
    assert backend.complete(REQUEST).text == "fine"
    assert len(openai_server.requests) == 2


def test_error_status_is_a_clear_backend_error(openai_server: Any) -> None:
    openai_server.script = [(404, {"error": {"message": "model 'x' not found"}})]
    backend = OpenAIBackend(model="x", base_url=openai_server.base_url, max_retries=0)
    with pytest.raises(BackendError, match="HTTP 404"):
        backend.complete(REQUEST)


def test_unreachable_server(dead_server_url: str) -> None:
    backend = OpenAIBackend(model="m", base_url=dead_server_url, max_retries=0, timeout=2)
    with pytest.raises(BackendUnavailableError, match="cannot reach the model server"):
        backend.complete(REQUEST)


def test_api_key_from_environment(openai_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    openai_server.script = ["ok"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    OpenAIBackend(model="m", base_url=openai_server.base_url).complete(REQUEST)
    assert openai_server.headers[-1]["authorization"] == "Bearer sk-from-env"


def test_explicit_api_key_wins(openai_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    openai_server.script = ["ok"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    OpenAIBackend(model="m", base_url=openai_server.base_url, api_key="sk-flag").complete(REQUEST)
    assert openai_server.headers[-1]["authorization"] == "Bearer sk-flag"


def test_backend_selection() -> None:
    assert make_backend(None).name == "extractive"
    assert make_backend(None, model="llama3", base_url="http://127.0.0.1:1/v1").name == "openai"
    with pytest.raises(BackendConfigError, match="needs a model name") as raised:
        make_backend("openai")
    assert raised.value.hint is Hint.NAME_MODEL


# --- tool calling --------------------------------------------------------------------

SEARCH = ToolSpec(
    "search",
    "Search the index.",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
TOOL_REQUEST = replace(REQUEST, tools=(SEARCH,))


def backend_for(server: ScriptedOpenAIServer) -> OpenAIBackend:
    return OpenAIBackend(model="m", base_url=server.base_url, api_key="k", max_retries=0)


def test_no_tools_key_without_tools(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script = ["ok"]
    backend_for(openai_server).complete(REQUEST)
    assert "tools" not in openai_server.requests[0]


def test_sends_tools_and_reads_tool_calls(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script = [
        ToolReply([("search", {"query": "dose"}), ("search", "not json {")], text="Looking.")
    ]
    completion = backend_for(openai_server).complete(TOOL_REQUEST)
    assert openai_server.requests[0]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "search",
                "description": "Search the index.",
                "parameters": SEARCH.parameters,
            },
        }
    ]
    assert completion.text == "Looking."
    assert completion.tool_calls == (
        ToolCall("call_1", "search", '{"query": "dose"}'),
        ToolCall("call_2", "search", "not json {"),
    )


def test_tool_call_ids_are_unique_across_requests(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script = [ToolReply([("search", {"query": "a"})])]
    backend = backend_for(openai_server)
    ids = [backend.complete(TOOL_REQUEST).tool_calls[0].id for _ in range(2)]
    assert ids == ["call_1", "call_2"]


def test_sends_assistant_tool_calls_and_tool_results(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script = ["done"]
    conversation = (
        Message("system", "rules"),
        Message("user", "question"),
        Message(
            "assistant",
            "",
            tool_calls=(
                ToolCall("call_a", "search", '{"query": "x"}'),
                ToolCall("call_b", "search", '{"query": "y"}'),
            ),
        ),
        Message("tool", "result a", tool_call_id="call_a"),
        Message("tool", "result b", tool_call_id="call_b"),
    )
    backend_for(openai_server).complete(replace(TOOL_REQUEST, messages=conversation))
    assert openai_server.requests[0]["messages"] == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "question"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"query": "x"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"query": "y"}'},
                },
            ],
        },
        {"role": "tool", "content": "result a", "tool_call_id": "call_a"},
        {"role": "tool", "content": "result b", "tool_call_id": "call_b"},
    ]


# --- streaming -----------------------------------------------------------------------

LONG_REPLY = 'The dose is <quote ref="d.1">200 mg on day 1</quote> [d.1].'


def test_stream_hands_over_text_in_pieces(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script = [LONG_REPLY]
    pieces: list[str] = []
    completion = backend_for(openai_server).stream(REQUEST, pieces.append)
    assert len(pieces) > 1 and "".join(pieces) == completion.text == LONG_REPLY
    assert completion.model == "m" and completion.tool_calls == ()
    assert completion.usage == Usage(10, 5)
    sent = openai_server.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert "tools" not in sent


def test_stream_usage_follows_the_server(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script = [LONG_REPLY]
    openai_server.count_tokens = len
    completion = backend_for(openai_server).stream(REQUEST, lambda _: None)
    assert completion.usage == Usage(len("rules\nsources + question"), len(LONG_REPLY))


class ServerIgnoringStreamOptions(ScriptedOpenAIServer):
    """Streams without a usage chunk, as some OpenAI-compatible servers do."""

    def stream_events(self, body: dict[str, Any], turn: Turn, tokens: Tokens) -> Iterator[Event]:
        return super().stream_events({**body, "stream_options": None}, turn, tokens)


def test_stream_without_usage_chunk_has_no_usage() -> None:
    server = ServerIgnoringStreamOptions()
    server.script = ["no usage here"]
    server.start()
    try:
        completion = backend_for(server).stream(REQUEST, lambda _: None)
    finally:
        server.stop()
    assert completion.text == "no usage here" and completion.usage is None


def test_stream_assembles_tool_calls(openai_server: ScriptedOpenAIServer) -> None:
    arguments = {"query": "recommended dose of remdesivir on the first day"}
    openai_server.script = [ToolReply([("search", arguments), ("search", '{"query": "tr')])]
    pieces: list[str] = []
    completion = backend_for(openai_server).stream(TOOL_REQUEST, pieces.append)
    assert completion.text == "" and pieces == []
    assert completion.tool_calls == (
        ToolCall("call_1", "search", json.dumps(arguments)),
        ToolCall("call_2", "search", '{"query": "tr'),
    )
    assert openai_server.requests[0]["tools"][0]["function"]["name"] == "search"


def test_stream_text_and_tool_calls_together(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script = [ToolReply([("search", {"query": "x"})], text=LONG_REPLY)]
    pieces: list[str] = []
    completion = backend_for(openai_server).stream(TOOL_REQUEST, pieces.append)
    assert "".join(pieces) == completion.text == LONG_REPLY
    assert [c.name for c in completion.tool_calls] == ["search"]


def test_stream_error_status(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script = [(404, {"error": {"message": "model 'm' not found"}})]
    with pytest.raises(BackendError, match="HTTP 404"):
        backend_for(openai_server).stream(REQUEST, lambda _: None)


def test_stream_unreachable_server(dead_server_url: str) -> None:
    backend = OpenAIBackend(model="m", base_url=dead_server_url, max_retries=0, timeout=2)
    with pytest.raises(BackendUnavailableError, match=dead_server_url):
        backend.stream(REQUEST, lambda _: None)
