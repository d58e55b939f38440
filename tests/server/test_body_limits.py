"""Request bodies: a request without a valid key is refused before its body is
read, and no body past its limit is read (413, a JSON error).

The app is driven over ASGI directly, its body offered in chunks, so a test sees
how many chunks the app took before it answered (a test client would send them
all first).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from starlette.types import ASGIApp, Message

from quoteproof.server.state import DEFAULT_MAX_BODY_MB

CHUNK = 64 * 1024
OVER_THE_LIMIT = int(DEFAULT_MAX_BODY_MB * 1_000_000) // CHUNK * 4
"""Chunks that carry four times the default limit (8 MB)."""


@dataclass
class Outcome:
    status: int
    body: dict[str, Any]
    taken: int
    """How many chunks of the body the app received."""


def offer(
    app: ASGIApp,
    path: str,
    headers: dict[str, str],
    chunks: int,
    chunk: bytes = b" " * CHUNK,
    head: bytes = b'{"question": "shingles"',
) -> Outcome:
    """POST `head` then `chunks` chunks (and a closing `}`) to `app`, without a
    Content-Length unless `headers` has one."""
    pieces = [head, *[chunk] * chunks, b"}"]
    taken = 0
    sent: list[Message] = []

    async def receive() -> Message:
        nonlocal taken
        if taken < len(pieces):
            taken += 1
            return {
                "type": "http.request",
                "body": pieces[taken - 1],
                "more_body": taken < len(pieces),
            }
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }

    async def call() -> None:
        with anyio.fail_after(60):
            await app(scope, receive, send)

    # On a thread of its own: the browser tests leave an event loop in this one.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(anyio.run, call).result()
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    parsed = json.loads(body) if body.startswith(b"{") else {"text": body.decode()}
    return Outcome(start["status"], parsed, max(0, taken - 1))


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize("path", ["/v1/ask", "/v1/verify"])
@pytest.mark.parametrize("chunks", [10, OVER_THE_LIMIT], ids=["640 kB", "8 MB"])
def test_a_request_without_a_valid_key_is_refused_unread(
    server: Any, path: str, chunks: int
) -> None:
    bad_key = {"Authorization": "Bearer qp_000000000000_" + "x" * 43}
    for headers in ({}, bad_key):
        outcome = offer(server.client.app, path, {**JSON, **headers}, chunks)
        assert outcome.status == 401, outcome
        assert outcome.taken == 0
        assert "valid API key" in outcome.body["error"]


def test_a_body_past_the_limit_is_413_after_at_most_one_chunk_more(server: Any) -> None:
    limit_chunks = int(DEFAULT_MAX_BODY_MB * 1_000_000) // CHUNK
    outcome = offer(server.client.app, "/v1/ask", {**JSON, **server.a}, OVER_THE_LIMIT)
    assert outcome.status == 413, outcome
    assert outcome.body == {
        "error": f"request body larger than the {DEFAULT_MAX_BODY_MB:g} MB limit"
    }
    assert outcome.taken <= limit_chunks + 1


def test_a_declared_length_past_the_limit_is_413_unread(server: Any) -> None:
    length = {"Content-Length": str(OVER_THE_LIMIT * CHUNK + 30)}
    for path in ("/v1/ask", "/v1/verify", "/login", "/ask"):
        outcome = offer(server.client.app, path, {**JSON, **server.a, **length}, OVER_THE_LIMIT)
        assert outcome.status == 413, (path, outcome)
        assert outcome.taken == 0 and "2 MB limit" in outcome.body["error"]


def test_a_form_past_the_limit_is_413(server: Any) -> None:
    """The web page's forms (here the login form, which needs no key) too."""
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    field = b"&next=" + b"n" * (CHUNK - 6)  # many fields, each under the parser's own limit
    outcome = offer(server.client.app, "/login", form, OVER_THE_LIMIT, field, b"key=k")
    assert outcome.status == 413, outcome
    assert outcome.taken <= int(DEFAULT_MAX_BODY_MB * 1_000_000) // CHUNK + 1


def test_the_limit_is_configurable_and_uploads_keep_theirs(server_with: Any) -> None:
    with server_with(max_body_mb=0.1, max_upload_mb=1) as server:
        outcome = offer(server.client.app, "/v1/ask", {**JSON, **server.a}, 4)
        assert outcome.status == 413 and "0.1 MB limit" in outcome.body["error"]
        small = server.client.post("/v1/ask", json={"question": "shingles"}, headers=server.a)
        assert small.status_code == 200, small.text
        upload = server.client.post(
            "/v1/documents",
            headers=server.a,
            data={"collection": "A"},
            files=[("file", ("notes.txt", b"Otters hold hands. " * 20_000, "text/plain"))],
        )
        assert upload.status_code == 202, upload.text  # 400 kB: over 0.1 MB, under 1 MB
        too_big = server.client.post(
            "/v1/documents",
            headers=server.a,
            data={"collection": "A"},
            files=[("file", ("notes.txt", b"Otters hold hands. " * 60_000, "text/plain"))],
        )
        assert too_big.status_code == 413
        assert too_big.json()["error"] == "upload larger than the 1 MB limit"
