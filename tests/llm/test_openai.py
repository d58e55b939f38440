"""The OpenAI-compatible backend against a real scripted HTTP server on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest

from quoteproof.errors import BackendError, BackendUnavailableError
from quoteproof.llm.base import CompletionRequest, Message
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
    with pytest.raises(BackendConfigError, match="--model"):
        make_backend("openai")
