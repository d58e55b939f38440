"""Security headers on every response.

`SecurityHeadersMiddleware` is plain ASGI (it touches only the `http.response.start`
message, so streamed responses stay streamed). It adds `SECURITY_HEADERS` to each
response; a response that sets its own `Content-Security-Policy` keeps it (only
the API docs page does, to load Swagger UI: see `docs_csp`).

`HostCheckMiddleware` answers 400 to requests whose `Host` is not one of the
server's names: `serve --no-auth` uses it so that a web page cannot reach the
unauthenticated server through a DNS name that resolves to 127.0.0.1 (DNS
rebinding).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
"""The headers every response carries."""

SWAGGER_CDN = "https://cdn.jsdelivr.net"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def docs_csp(html: str) -> str:
    """The policy of the Swagger UI page `html`: the default policy, plus its
    scripts and style sheet from the CDN FastAPI loads them from and its inline
    scripts by hash (no `'unsafe-inline'` for scripts)."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
        for body in _INLINE_SCRIPT.findall(html)
    )
    return (
        f"default-src 'self'; script-src 'self' {SWAGGER_CDN} {hashes}; "
        f"style-src 'self' 'unsafe-inline' {SWAGGER_CDN}; "
        "img-src 'self' data: https://fastapi.tiangolo.com; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    )


class SecurityHeadersMiddleware:
    """ASGI middleware adding `SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def host_name(host_header: str) -> str | None:
    """The host name of a `Host` header value, lower case, without port or IPv6
    brackets; None when it cannot be parsed."""
    try:
        name = urlsplit("//" + host_header).hostname
    except ValueError:
        return None
    return name.rstrip(".") if name else None


class HostCheckMiddleware:
    """ASGI middleware answering 400 to HTTP requests whose `Host` header names no
    host in `allowed` (names or addresses, as `host_name` gives them)."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(name.lower().strip("[]").rstrip(".") for name in allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            name = host_name(Headers(scope=scope).get("host", ""))
            if name not in self.allowed:
                response = JSONResponse({"error": "unknown Host header"}, status_code=400)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
