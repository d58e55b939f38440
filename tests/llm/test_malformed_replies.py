"""Replies a model server should never send, and servers that send slowly: both
backends (OpenAI chat completions and Anthropic messages) against scripted servers
on 127.0.0.1 that send raw bytes (`RawReply`).

A malformed reply is a `BackendError` naming the server (the API answers it 502,
the CLI exits 2 with one line); `--timeout` bounds a whole request, not each read.
"""

from __future__ import annotations

from typing import Any

import pytest

from helpers.llm_servers import RawReply, ScriptedServer
from helpers.scripted_model import ScriptedModel
from quoteproof.errors import BackendError, BackendTimeoutError
from quoteproof.llm.anthropic import AnthropicBackend
from quoteproof.llm.base import Backend, CompletionRequest, Message
from quoteproof.llm.openai import OpenAIBackend

REQUEST = CompletionRequest(
    messages=(Message("system", "rules"), Message("user", "sources + question")),
    question="q?",
    sources=(),
    max_tokens=64,
)

SSE = "text/event-stream"

# Per provider: raw replies that are not what the protocol promises.
MALFORMED: dict[str, dict[str, RawReply]] = {
    "openai": {
        "truncated JSON": RawReply([b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess']),
        "choices not a list": RawReply([b'{"id": "chatcmpl-1", "choices": "none"}']),
        "a list, not an object": RawReply([b"[1, 2]"]),
        "message not an object": RawReply([b'{"choices": [{"index": 0, "message": 5}]}']),
    },
    "anthropic": {
        "truncated JSON": RawReply([b'{"id": "msg_1", "type": "message", "content": [{"ty']),
        "content not a list": RawReply([b'{"id": "msg_1", "type": "message", "content": 5}']),
    },
}
MALFORMED_STREAMS: dict[str, dict[str, RawReply]] = {
    "openai": {
        "an event that is not JSON": RawReply(
            [
                b'data: {"id": "c", "choices": [{"index": 0, "delta": {"content": "Hi"}}]}\n\n',
                b"data: {not json\n\n",
            ],
            SSE,
        ),
        "choices not a list": RawReply([b'data: {"id": "c", "choices": 5}\n\n'], SSE),
    },
    "anthropic": {
        "an event that is not JSON": RawReply([b"event: message_start\ndata: {not json\n\n"], SSE),
        "message not an object": RawReply(
            [b'event: message_start\ndata: {"type": "message_start", "message": 5}\n\n'], SSE
        ),
    },
}


def cases(table: dict[str, dict[str, RawReply]]) -> list[Any]:
    return [
        pytest.param(provider, reply, id=f"{provider}: {name}")
        for provider, replies in table.items()
        for name, reply in replies.items()
    ]


@pytest.fixture
def model_of(
    openai_server: ScriptedServer, anthropic_server: ScriptedServer
) -> dict[str, ScriptedModel]:
    return {
        "openai": ScriptedModel("openai", openai_server),
        "anthropic": ScriptedModel("anthropic", anthropic_server),
    }


def backend_with_timeout(model: ScriptedModel, timeout: float) -> Backend:
    url = model.server.base_url  # type: ignore[attr-defined]
    if model.provider == "anthropic":
        return AnthropicBackend(model="m", base_url=url, api_key="k", timeout=timeout)
    return OpenAIBackend(model="m", base_url=url, timeout=timeout)


@pytest.mark.parametrize(("provider", "reply"), cases(MALFORMED))
def test_a_malformed_reply_is_a_backend_error(
    model_of: dict[str, ScriptedModel], provider: str, reply: RawReply
) -> None:
    model = model_of[provider]
    model.script = [reply]
    with pytest.raises(BackendError, match="sent a reply that is not valid") as raised:
        model.backend().complete(REQUEST)
    assert model.server.origin in str(raised.value)


@pytest.mark.parametrize(("provider", "reply"), cases(MALFORMED_STREAMS))
def test_a_malformed_stream_is_a_backend_error(
    model_of: dict[str, ScriptedModel], provider: str, reply: RawReply
) -> None:
    model = model_of[provider]
    model.script = [reply]
    with pytest.raises(BackendError, match="sent a reply that is not valid") as raised:
        model.backend().stream(REQUEST, lambda text: None)
    assert model.server.origin in str(raised.value)


def test_an_error_of_the_text_sink_is_not_blamed_on_the_server(
    model_of: dict[str, ScriptedModel],
) -> None:
    for model in model_of.values():
        model.script = ["Hello there, a reply long enough for several pieces."]

        def sink(text: str) -> None:
            raise ValueError("the sink failed")

        with pytest.raises(ValueError, match="the sink failed"):
            model.backend().stream(REQUEST, sink)


DRIP_PIECES = 60
DRIP_PAUSE_S = 0.25
"""A reply that takes 60 x 0.25 s = 15 s to arrive, a piece every 0.25 s."""


def dripped(provider: str, stream: bool) -> RawReply:
    """A valid reply of `provider`, sent a few bytes at a time (`DRIP_PIECES` pieces)."""
    if provider == "openai" and not stream:
        body = (
            b'{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m", '
            b'"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}, '
            b'"finish_reason": "stop"}]}'
        )
    elif provider == "openai":
        body = b"".join(
            b'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", '
            b'"choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": null}]}\n\n'
            for _ in range(DRIP_PIECES)
        )
    elif not stream:
        body = (
            b'{"id": "msg_1", "type": "message", "role": "assistant", "model": "m", '
            b'"content": [{"type": "text", "text": "Hi"}], "stop_reason": "end_turn", '
            b'"stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}}'
        )
    else:
        start = (
            b'event: message_start\ndata: {"type": "message_start", "message": {"id": "msg_1", '
            b'"type": "message", "role": "assistant", "model": "m", "content": [], '
            b'"stop_reason": null, "stop_sequence": null, '
            b'"usage": {"input_tokens": 1, "output_tokens": 1}}}\n\n'
            b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
            b'"content_block": {"type": "text", "text": ""}}\n\n'
        )
        delta = (
            b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
            b'"delta": {"type": "text_delta", "text": "a"}}\n\n'
        )
        end = (
            b'event: content_block_stop\ndata: {"type": "content_block_stop", "index": 0}\n\n'
            b'event: message_delta\ndata: {"type": "message_delta", "delta": '
            b'{"stop_reason": "end_turn", "stop_sequence": null}, '
            b'"usage": {"output_tokens": 1}}\n\n'
            b'event: message_stop\ndata: {"type": "message_stop"}\n\n'
        )
        body = start + delta * DRIP_PIECES + end
    size = -(-len(body) // DRIP_PIECES)
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    return RawReply(pieces, SSE if stream else "application/json", pause=DRIP_PAUSE_S)


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_timeout_bounds_the_whole_request(
    model_of: dict[str, ScriptedModel], provider: str, stream: bool
) -> None:
    """A server that sends a piece every 0.25 s never lets a per-read time-out of
    1 s expire; the request must still end with the time-out error (had it waited
    for the whole reply, 15 s, the call would have succeeded)."""
    model = model_of[provider]
    model.script = [dripped(provider, stream)]
    backend = backend_with_timeout(model, 1.0)
    with pytest.raises(BackendTimeoutError, match="within 1 s") as raised:
        if stream:
            backend.stream(REQUEST, lambda text: None)
        else:
            backend.complete(REQUEST)
    assert model.server.origin in str(raised.value)
    assert len(model.requests) == 1  # no retry once the time is up
