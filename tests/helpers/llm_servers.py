"""Scripted model servers: real HTTP servers on 127.0.0.1 speaking a provider's wire
protocol (OpenAI chat completions, Anthropic messages) and playing scripted replies.

Both servers share one design (`ScriptedServer`):

- `script` is a list of `Reply`, played in order; once one reply is left it repeats.
  A reply is the assistant's text, a `ToolReply` (tool calls, with optional text),
  `(status, body)` for an HTTP error sent as given, or a callable that builds the
  text or `ToolReply` from the request's JSON body.
- `requests` (parsed JSON bodies) and `headers` (lower-cased names) are recorded.
- Tool call ids are generated (`call_1`, ... or `toolu_1`, ...), unique for the
  server's life.
- Usage is 10 prompt and 5 completion tokens, unless `count_tokens` is set: then
  completion tokens count the reply text plus each call's argument text, and prompt
  tokens count all message contents joined by newlines.
- A request with `"stream": true` is answered with server-sent events in the
  provider's format, the text and argument text split into pieces of up to
  `PIECE_CHARS` characters, so a client sees several deltas.
- A `RawReply` is sent byte for byte, whatever the request: for replies a provider
  would never send (truncated JSON, an event that is not JSON) and for a server
  that sends its reply slowly.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

__all__ = [
    "PIECE_CHARS",
    "Call",
    "Event",
    "RawReply",
    "Reply",
    "ScriptedAnthropicServer",
    "ScriptedOpenAIServer",
    "ScriptedServer",
    "Tokens",
    "ToolReply",
    "Turn",
]

PIECE_CHARS = 8
DEFAULT_PROMPT_TOKENS = 10
DEFAULT_COMPLETION_TOKENS = 5
CREATED = 1700000000


@dataclass
class ToolReply:
    """An assistant reply with tool calls: each call is (tool name, arguments). A dict
    is sent as JSON; a string is sent verbatim as the argument text (OpenAI) or as the
    input `{"_raw": string}` (Anthropic), to test arguments that are not valid JSON."""

    calls: list[tuple[str, dict[str, Any] | str]]
    text: str = ""


@dataclass
class RawReply:
    """A reply sent as given: status 200, `content_type`, then `pieces` written one
    after another with `pause` seconds before each piece after the first (a slow
    server). The length is announced up front; a client that goes away ends it."""

    pieces: list[bytes]
    content_type: str = "application/json"
    pause: float = 0.0


Reply = (
    str
    | ToolReply
    | RawReply
    | tuple[int, dict[str, Any]]
    | Callable[[dict[str, Any]], str | ToolReply]
)

Event = tuple[str | None, dict[str, Any] | str]
"""One server-sent event: its `event:` name (None: no name line) and its data (a dict
is sent as JSON, a string verbatim)."""


@dataclass(frozen=True)
class Call:
    """A tool call as the server sends it: generated id, name, argument JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Turn:
    """The assistant's reply to one request: its text and tool calls."""

    text: str
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class Tokens:
    """The usage a reply reports."""

    prompt: int
    completion: int


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """Split `text` into consecutive pieces of up to `size` characters ([] for "")."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def content_text(content: Any) -> str:
    """The text of a message's content: a string as it is; a list of blocks or parts
    joined (a block's `text`, or a tool result's `content`); anything else ""."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            content_text(block.get("text", block.get("content")))
            for block in content
            if isinstance(block, dict)
        )
    return ""


def encode_events(events: Iterable[Event]) -> bytes:
    """Serialise events in the `text/event-stream` format."""
    lines: list[str] = []
    for name, data in events:
        if name is not None:
            lines.append(f"event: {name}")
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        lines.append(f"data: {payload}")
        lines.append("")
    return ("\n".join(lines) + "\n").encode()


class ScriptedServer:
    """A scripted HTTP server on 127.0.0.1; subclasses speak one provider's protocol.

    Subclasses set `route` (the path suffix answered with POST), `call_id_prefix`,
    and implement `wire_arguments`, `prompt_texts`, `not_found_body`,
    `response_body` and `stream_events`.
    """

    route: ClassVar[str]
    call_id_prefix: ClassVar[str]

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.count_tokens: Callable[[str], int] | None = None
        self._lock = threading.Lock()
        self._calls_made = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    # --- life cycle ---------------------------------------------------------------

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:PORT`."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- provider specifics -------------------------------------------------------

    def wire_arguments(self, arguments: dict[str, Any] | str) -> str:
        """The argument text sent for a scripted call's arguments."""
        raise NotImplementedError

    def prompt_texts(self, body: dict[str, Any]) -> list[str]:
        """The texts of the request's messages (for `count_tokens`)."""
        raise NotImplementedError

    def not_found_body(self, path: str) -> dict[str, Any]:
        """The error body for a POST to an unknown path."""
        raise NotImplementedError

    def response_body(self, body: dict[str, Any], turn: Turn, tokens: Tokens) -> dict[str, Any]:
        """The JSON reply to a non-streaming request."""
        raise NotImplementedError

    def stream_events(self, body: dict[str, Any], turn: Turn, tokens: Tokens) -> Iterator[Event]:
        """The events answering a streaming request."""
        raise NotImplementedError

    # --- shared behaviour ---------------------------------------------------------

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply | None:
        """Record the request and take the next reply (None: the script is empty)."""
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if not self.script:
                return None
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def _turn(self, reply: str | ToolReply) -> Turn:
        """Give the reply's tool calls their ids and argument text."""
        if isinstance(reply, str):
            return Turn(reply)
        with self._lock:
            first = self._calls_made + 1
            self._calls_made += len(reply.calls)
        calls = tuple(
            Call(f"{self.call_id_prefix}{first + i}", name, self.wire_arguments(arguments))
            for i, (name, arguments) in enumerate(reply.calls)
        )
        return Turn(reply.text, calls)

    def _tokens(self, body: dict[str, Any], turn: Turn) -> Tokens:
        if self.count_tokens is None:
            return Tokens(DEFAULT_PROMPT_TOKENS, DEFAULT_COMPLETION_TOKENS)
        written = turn.text + "".join(call.arguments for call in turn.calls)
        return Tokens(
            self.count_tokens("\n".join(self.prompt_texts(body))), self.count_tokens(written)
        )

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        """Answer one POST."""
        length = int(handler.headers.get("Content-Length", "0"))
        body = json.loads(handler.rfile.read(length) or b"{}")
        if not handler.path.endswith(self.route):
            _send(handler, 404, "application/json", json.dumps(self.not_found_body(handler.path)))
            return
        reply = self._next_reply(body, {k.lower(): v for k, v in handler.headers.items()})
        if reply is None:
            _send(handler, 500, "application/json", json.dumps({"error": "the script is empty"}))
            return
        if isinstance(reply, RawReply):
            _send_raw(handler, reply)
            return
        if isinstance(reply, tuple):
            _send(handler, reply[0], "application/json", json.dumps(reply[1]))
            return
        turn = self._turn(reply(body) if callable(reply) else reply)
        tokens = self._tokens(body, turn)
        if body.get("stream"):
            events = encode_events(self.stream_events(body, turn, tokens))
            _send(handler, 200, "text/event-stream", events)
        else:
            _send(
                handler, 200, "application/json", json.dumps(self.response_body(body, turn, tokens))
            )

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                server._handle(self)

        return Handler


def _send(
    handler: BaseHTTPRequestHandler, status: int, content_type: str, data: str | bytes
) -> None:
    payload = data.encode() if isinstance(data, str) else data
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


def _send_raw(handler: BaseHTTPRequestHandler, reply: RawReply) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", reply.content_type)
    handler.send_header("Content-Length", str(sum(len(piece) for piece in reply.pieces)))
    handler.end_headers()
    try:
        for number, piece in enumerate(reply.pieces):
            if number and reply.pause:
                time.sleep(reply.pause)
            handler.wfile.write(piece)
            handler.wfile.flush()
    except OSError:  # the client went away (e.g. it gave up waiting)
        return


# --- OpenAI chat completions ---------------------------------------------------------


@dataclass
class _Chunks:
    """Builds `chat.completion.chunk` objects for one streamed reply."""

    id: str
    model: str
    with_usage: bool

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return self.frame([choice])

    def frame(self, choices: list[dict[str, Any]], usage: Any = None) -> dict[str, Any]:
        frame: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "choices": choices,
        }
        if self.with_usage:
            frame["usage"] = usage
        return frame


class ScriptedOpenAIServer(ScriptedServer):
    """A scripted server speaking the OpenAI chat-completions protocol at
    `base_url` (`http://127.0.0.1:PORT/v1`)."""

    route = "/chat/completions"
    call_id_prefix = "call_"

    @property
    def base_url(self) -> str:
        """The `/v1` URL to give an OpenAI client."""
        return f"{self.origin}/v1"

    def wire_arguments(self, arguments: dict[str, Any] | str) -> str:
        if isinstance(arguments, str):
            return arguments
        return json.dumps(arguments, ensure_ascii=False)

    def prompt_texts(self, body: dict[str, Any]) -> list[str]:
        return [content_text(m.get("content")) for m in body.get("messages", [])]

    def not_found_body(self, path: str) -> dict[str, Any]:
        return {"error": {"message": f"no route {path}"}}

    @staticmethod
    def _usage(tokens: Tokens) -> dict[str, int]:
        return {
            "prompt_tokens": tokens.prompt,
            "completion_tokens": tokens.completion,
            "total_tokens": tokens.prompt + tokens.completion,
        }

    @staticmethod
    def _finish_reason(turn: Turn) -> str:
        return "tool_calls" if turn.calls else "stop"

    def _id(self) -> str:
        return f"chatcmpl-{len(self.requests)}"

    def response_body(self, body: dict[str, Any], turn: Turn, tokens: Tokens) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": turn.text if turn.text or not turn.calls else None,
        }
        if turn.calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in turn.calls
            ]
        return {
            "id": self._id(),
            "object": "chat.completion",
            "created": CREATED,
            "model": body.get("model", "scripted"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": self._finish_reason(turn)}
            ],
            "usage": self._usage(tokens),
        }

    def stream_events(self, body: dict[str, Any], turn: Turn, tokens: Tokens) -> Iterator[Event]:
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = _Chunks(self._id(), body.get("model", "scripted"), with_usage)
        yield None, chunks.chunk({"role": "assistant", "content": ""})
        for piece in pieces(turn.text):
            yield None, chunks.chunk({"content": piece})
        for index, call in enumerate(turn.calls):
            yield None, chunks.chunk({"tool_calls": [self._call_start(index, call)]})
            for piece in pieces(call.arguments):
                delta = {"index": index, "function": {"arguments": piece}}
                yield None, chunks.chunk({"tool_calls": [delta]})
        yield None, chunks.chunk({}, self._finish_reason(turn))
        if with_usage:
            yield None, chunks.frame([], self._usage(tokens))
        yield None, "[DONE]"

    @staticmethod
    def _call_start(index: int, call: Call) -> dict[str, Any]:
        return {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }


# --- Anthropic messages --------------------------------------------------------------


class ScriptedAnthropicServer(ScriptedServer):
    """A scripted server speaking the Anthropic messages protocol (`POST /v1/messages`)
    at `base_url` (`http://127.0.0.1:PORT`, as the Anthropic SDK wants it)."""

    route = "/v1/messages"
    call_id_prefix = "toolu_"

    @property
    def base_url(self) -> str:
        """The URL to give an Anthropic client (it appends `/v1/messages`)."""
        return self.origin

    def wire_arguments(self, arguments: dict[str, Any] | str) -> str:
        tool_input = {"_raw": arguments} if isinstance(arguments, str) else arguments
        return json.dumps(tool_input, ensure_ascii=False)

    def prompt_texts(self, body: dict[str, Any]) -> list[str]:
        system = [content_text(body["system"])] if body.get("system") else []
        return system + [content_text(m.get("content")) for m in body.get("messages", [])]

    def not_found_body(self, path: str) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": "not_found_error", "message": f"no route {path}"},
        }

    @staticmethod
    def _stop_reason(turn: Turn) -> str:
        return "tool_use" if turn.calls else "end_turn"

    def _message(self, body: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted"),
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
        }

    @staticmethod
    def _has_text_block(turn: Turn) -> bool:
        return bool(turn.text) or not turn.calls

    def response_body(self, body: dict[str, Any], turn: Turn, tokens: Tokens) -> dict[str, Any]:
        content = [{"type": "text", "text": turn.text}] if self._has_text_block(turn) else []
        content += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": json.loads(c.arguments)}
            for c in turn.calls
        ]
        message = self._message(body, content)
        message["stop_reason"] = self._stop_reason(turn)
        message["usage"] = {"input_tokens": tokens.prompt, "output_tokens": tokens.completion}
        return message

    def stream_events(self, body: dict[str, Any], turn: Turn, tokens: Tokens) -> Iterator[Event]:
        message = self._message(body, [])
        message["usage"] = {"input_tokens": tokens.prompt, "output_tokens": 1}
        yield "message_start", {"type": "message_start", "message": message}
        yield "ping", {"type": "ping"}
        blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        if self._has_text_block(turn):
            text_deltas = [{"type": "text_delta", "text": p} for p in pieces(turn.text)]
            blocks.append(({"type": "text", "text": ""}, text_deltas))
        for call in turn.calls:
            start = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
            json_deltas = [
                {"type": "input_json_delta", "partial_json": p} for p in pieces(call.arguments)
            ]
            blocks.append((start, json_deltas))
        for index, (start, deltas) in enumerate(blocks):
            yield from _block_events(index, start, deltas)
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": self._stop_reason(turn), "stop_sequence": None},
                "usage": {"output_tokens": tokens.completion},
            },
        )
        yield "message_stop", {"type": "message_stop"}


def _block_events(
    index: int, start: dict[str, Any], deltas: list[dict[str, Any]]
) -> Iterator[Event]:
    """The start, delta and stop events of one Anthropic content block."""
    yield (
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": start},
    )
    for delta in deltas:
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": index}
