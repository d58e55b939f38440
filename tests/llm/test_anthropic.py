"""The Anthropic backend against a real scripted Messages API server on 127.0.0.1."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from helpers.llm_servers import ScriptedAnthropicServer, ToolReply
from quoteproof.errors import BackendConfigError, BackendError, BackendUnavailableError, Hint
from quoteproof.llm.anthropic import AnthropicBackend
from quoteproof.llm.base import CompletionRequest, Message, ToolCall, ToolSpec, Usage
from quoteproof.llm.select import make_backend

REQUEST = CompletionRequest(
    messages=(Message("system", "rules"), Message("user", "sources + question")),
    question="q?",
    sources=(),
    max_tokens=64,
)
SEARCH = ToolSpec(
    "search",
    "Search the index.",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
TOOL_REQUEST = replace(REQUEST, tools=(SEARCH,))
LONG_REPLY = 'The dose is <quote ref="d.1">200 mg on day 1</quote> [d.1].'
NOT_FOUND = (404, {"type": "error", "error": {"type": "not_found_error", "message": "no model"}})


@pytest.fixture(autouse=True)
def no_anthropic_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see no Anthropic credentials or URL from the environment unless they set them."""
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)


def backend_for(
    server: ScriptedAnthropicServer, *, api_key: str = "sk-test", max_retries: int = 0
) -> AnthropicBackend:
    return AnthropicBackend(
        model="claude-test", base_url=server.base_url, api_key=api_key, max_retries=max_retries
    )


def test_sends_system_param_and_returns_reply(anthropic_server: ScriptedAnthropicServer) -> None:
    anthropic_server.script = ['<quote ref="abc.1"/>']
    completion = backend_for(anthropic_server).complete(REQUEST)
    assert completion.text == '<quote ref="abc.1"/>'
    assert completion.model == "claude-test"
    assert completion.usage == Usage(10, 5) and completion.tool_calls == ()
    assert anthropic_server.requests[0] == {
        "model": "claude-test",
        "max_tokens": 64,
        "system": "rules",
        "messages": [{"role": "user", "content": "sources + question"}],
    }


def test_sends_tools_and_reads_tool_calls(anthropic_server: ScriptedAnthropicServer) -> None:
    anthropic_server.script = [
        ToolReply([("search", {"query": "dose"}), ("search", "not json {")], text="Looking.")
    ]
    completion = backend_for(anthropic_server).complete(TOOL_REQUEST)
    assert anthropic_server.requests[0]["tools"] == [
        {"name": "search", "description": "Search the index.", "input_schema": SEARCH.parameters}
    ]
    assert completion.text == "Looking."
    assert completion.tool_calls == (
        ToolCall("toolu_1", "search", '{"query": "dose"}'),
        ToolCall("toolu_2", "search", '{"_raw": "not json {"}'),
    )


def test_conversation_with_tool_calls_alternates_roles(
    anthropic_server: ScriptedAnthropicServer,
) -> None:
    anthropic_server.script = ["done"]
    conversation = (
        Message("system", "rules"),
        Message("system", "more rules"),
        Message("user", "question"),
        Message(
            "assistant",
            "Searching.",
            tool_calls=(
                ToolCall("toolu_a", "search", '{"query": "x"}'),
                ToolCall("toolu_b", "search", "[not an object]"),
            ),
        ),
        Message("tool", "result a", tool_call_id="toolu_a"),
        Message("tool", "result b", tool_call_id="toolu_b"),
        Message("user", "and now?"),
    )
    backend_for(anthropic_server).complete(replace(TOOL_REQUEST, messages=conversation))
    sent = anthropic_server.requests[0]
    assert sent["system"] == "rules\n\nmore rules"
    assert sent["messages"] == [
        {"role": "user", "content": "question"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Searching."},
                {"type": "tool_use", "id": "toolu_a", "name": "search", "input": {"query": "x"}},
                {"type": "tool_use", "id": "toolu_b", "name": "search", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "result a"},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "result b"},
                {"type": "text", "text": "and now?"},
            ],
        },
    ]


def test_stream_hands_over_text_in_pieces(anthropic_server: ScriptedAnthropicServer) -> None:
    anthropic_server.script = [LONG_REPLY]
    anthropic_server.count_tokens = len
    pieces: list[str] = []
    completion = backend_for(anthropic_server).stream(REQUEST, pieces.append)
    assert len(pieces) > 1 and "".join(pieces) == completion.text == LONG_REPLY
    assert completion.model == "claude-test" and completion.tool_calls == ()
    assert completion.usage == Usage(len("rules\nsources + question"), len(LONG_REPLY))
    assert anthropic_server.requests[0]["stream"] is True


def test_stream_assembles_tool_calls(anthropic_server: ScriptedAnthropicServer) -> None:
    arguments = {"query": "dose of remdesivir on the first day, «quoted»"}
    anthropic_server.script = [ToolReply([("search", arguments)], text=LONG_REPLY)]
    pieces: list[str] = []
    completion = backend_for(anthropic_server).stream(TOOL_REQUEST, pieces.append)
    assert len(pieces) > 1 and "".join(pieces) == completion.text == LONG_REPLY
    assert completion.tool_calls == (
        ToolCall("toolu_1", "search", json.dumps(arguments, ensure_ascii=False)),
    )
    assert completion.usage == Usage(10, 5)
    assert anthropic_server.requests[0]["tools"][0]["name"] == "search"


def test_stream_of_tool_calls_only(anthropic_server: ScriptedAnthropicServer) -> None:
    anthropic_server.script = [ToolReply([("search", {"query": "a"}), ("search", {})])]
    pieces: list[str] = []
    completion = backend_for(anthropic_server).stream(TOOL_REQUEST, pieces.append)
    assert completion.text == "" and pieces == []
    assert [(c.id, c.arguments) for c in completion.tool_calls] == [
        ("toolu_1", '{"query": "a"}'),
        ("toolu_2", "{}"),
    ]


def test_api_key_from_environment(
    anthropic_server: ScriptedAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    anthropic_server.script = ["ok"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    AnthropicBackend(model="m", base_url=anthropic_server.base_url).complete(REQUEST)
    # The 2.x SDK sends the key as a bearer token (not `x-api-key`).
    assert anthropic_server.headers[-1]["authorization"] == "Bearer sk-from-env"
    assert "anthropic-version" in anthropic_server.headers[-1]


def test_explicit_api_key_wins(
    anthropic_server: ScriptedAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    anthropic_server.script = ["ok"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    backend_for(anthropic_server, api_key="sk-flag").complete(REQUEST)
    assert anthropic_server.headers[-1]["authorization"] == "Bearer sk-flag"


def test_missing_api_key_is_a_config_error() -> None:
    with pytest.raises(BackendConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicBackend(model="m", base_url="http://127.0.0.1:1")


def test_retries_a_server_error_then_succeeds(anthropic_server: ScriptedAnthropicServer) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    anthropic_server.script = [(529, overloaded), "fine"]
    assert backend_for(anthropic_server, max_retries=2).complete(REQUEST).text == "fine"
    assert len(anthropic_server.requests) == 2


def test_error_status_is_a_clear_backend_error(anthropic_server: ScriptedAnthropicServer) -> None:
    anthropic_server.script = [NOT_FOUND]
    backend = backend_for(anthropic_server)
    with pytest.raises(BackendError, match="HTTP 404") as raised:
        backend.complete(REQUEST)
    assert anthropic_server.base_url in str(raised.value)
    with pytest.raises(BackendError, match="HTTP 404"):
        backend.stream(REQUEST, lambda _: None)


def test_unreachable_server(dead_server_url: str) -> None:
    base = dead_server_url.removesuffix("/v1")
    backend = AnthropicBackend(model="m", base_url=base, api_key="k", max_retries=0, timeout=2)
    with pytest.raises(BackendUnavailableError, match="cannot reach the model server"):
        backend.complete(REQUEST)
    with pytest.raises(BackendUnavailableError, match=base):
        backend.stream(REQUEST, lambda _: None)


def test_backend_selection(anthropic_server: ScriptedAnthropicServer) -> None:
    anthropic_server.script = ["chosen"]
    backend = make_backend(
        "anthropic", model="claude-test", base_url=anthropic_server.base_url, api_key="k"
    )
    assert isinstance(backend, AnthropicBackend) and backend.name == "anthropic"
    assert backend.complete(REQUEST).text == "chosen"
    with pytest.raises(BackendConfigError, match="anthropic backend needs a model") as raised:
        make_backend("anthropic", api_key="k")
    assert raised.value.hint is Hint.NAME_MODEL and raised.value.facts == {"backend": "anthropic"}
    with pytest.raises(BackendConfigError, match="has no local default server"):
        make_backend("anthropic", model="claude-test", api_key="k")
    with pytest.raises(BackendConfigError, match="needs an API key"):
        make_backend("anthropic", model="claude-test", cloud=True)
