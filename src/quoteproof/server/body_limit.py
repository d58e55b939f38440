"""A size limit on every request body, enforced before it is read.

`BodyLimitMiddleware` is plain ASGI: a request whose `Content-Length` exceeds its
limit is answered 413 without its body being read at all; one without a length
(chunked) is cut off as soon as the bytes received pass the limit, so at most one
chunk beyond the limit is ever held. The limit is `limit` bytes, or the larger one
`uploads` names for an upload route. Errors are `{"error": "..."}`.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimitMiddleware", "BodyTooLarge"]


class BodyTooLarge(HTTPException):
    """A request body larger than its limit: 413 naming the limit. An
    `HTTPException`, so whatever reads the body (FastAPI's body parsing, a form
    parser) lets it through to the app's error handler."""

    def __init__(self, limit: int, what: str) -> None:
        super().__init__(413, f"{what} larger than the {limit / 1_000_000:g} MB limit")


class BodyLimitMiddleware:
    """ASGI middleware answering 413 to a request body past its limit (see the
    module docstring). `uploads` maps (method, path) of upload routes to their
    limit; every other request may carry `limit` bytes."""

    def __init__(self, app: ASGIApp, limit: int, uploads: Mapping[tuple[str, str], int]) -> None:
        self.app = app
        self.limit = limit
        self.uploads = dict(uploads)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        upload = self.uploads.get((scope["method"], scope["path"]))
        limit, what = (self.limit, "request body") if upload is None else (upload, "upload")
        length = Headers(scope=scope).get("content-length", "")
        if length.isdigit() and int(length) > limit:
            error = BodyTooLarge(limit, what)
            await JSONResponse({"error": error.detail}, 413)(scope, receive, send)
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit, what)
            return message

        await self.app(scope, limited_receive, send)
