"""MCP over stdio with every request answered, even one that cannot be read.

The MCP SDK's stdio transport passes a line it cannot parse (not JSON; JSON
holding a lone surrogate such as `"\\ud83d"`, which its parser refuses; JSON that
is not a JSON-RPC message) to the session as an exception, and the session drops
it: the client's call never gets a reply and waits for ever. `serve_stdio` puts
`AnsweringReadStream` between the transport and the session, which answers such a
line with a JSON-RPC error (`error_reply`) and passes every other message on.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any, Self

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from quoteproof.codec.strict_json import loads_strict

__all__ = ["AnsweringReadStream", "error_reply", "serve_stdio"]


def _inputs(problem: Exception) -> list[Any]:
    """What a transport's parse error says it was given: the line itself when it is
    not JSON, the parsed message when it is JSON of the wrong shape."""
    if isinstance(problem, ValidationError):
        return [error.get("input") for error in problem.errors()]
    return []


def _request_id(data: Any) -> int | str | None:
    """The id of a JSON-RPC request parsed leniently, or None (none, or not one)."""
    if not isinstance(data, dict):
        return None
    request_id = data.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    return request_id


def error_reply(problem: Exception) -> types.JSONRPCError:
    """The JSON-RPC error answering a line the transport could not read (`problem`:
    what it raised). A line that is JSON with a request id is answered with that id:
    `-32602` (invalid params) naming a value JSON cannot carry, else `-32600`
    (invalid request); any other line with id null and `-32700` (parse error)."""
    inputs = _inputs(problem)
    raw = next((item for item in inputs if isinstance(item, str)), None)
    data = next((item for item in inputs if isinstance(item, dict)), None)
    if data is None and raw is not None:
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
    request_id = _request_id(data)
    if request_id is None:
        error = types.ErrorData(
            code=types.PARSE_ERROR, message="Parse error: the line is not a JSON-RPC message"
        )
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
    try:
        loads_strict(raw or "null")
    except (ValueError, RecursionError) as exc:  # StrictJSONError: the value and its path
        error = types.ErrorData(code=types.INVALID_PARAMS, message=f"Invalid params: {exc}")
    else:
        error = types.ErrorData(
            code=types.INVALID_REQUEST, message="Invalid request: not a JSON-RPC message"
        )
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


class AnsweringReadStream:
    """The transport's read stream (`inner`) less its parse errors: each is answered
    on `replies` (`error_reply`) instead of reaching the session. Keeps the sender's
    context of the last item as the transport's stream does (`last_context`)."""

    def __init__(self, inner: Any, replies: Any) -> None:
        self._inner = inner
        self._replies = replies

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message received (None: not kept)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        """The next message that could be read."""
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item  # type: ignore[no-any-return]
            await self._replies.send(SessionMessage(error_reply(item)))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        result: bool | None = await self._inner.__aexit__(exc_type, exc_val, exc_tb)
        return result


async def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve `server` over stdin and stdout (as `MCPServer.run_stdio_async` does)
    until the client closes the connection, answering unreadable lines."""
    # MCPServer has no public way to put a stream between its transport and session.
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(
            AnsweringReadStream(read_stream, write_stream),
            write_stream,
            lowlevel.create_initialization_options(),
        )
