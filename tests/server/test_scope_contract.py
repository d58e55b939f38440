"""The access contract: every route of every face (HTTP API, web page, MCP tools, the
CLI's `--collection`) goes through the service (`service.ScopedIndex`), and a
principal limited to collection A gets nothing of collection B from any of them.

The route tables below must name every route: a new route fails
`test_every_route_is_in_the_contract` until it is added here with a request that
tries to reach B and the service method it must go through (`ScopedIndex`, or
`Admin` for authentication, or a service function such as `about.versions`); only
`POST /logout`, which forgets the login cookie and asks the service nothing, has none.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from helpers.forms import with_token
from quoteproof.index import Index
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.service import Principal, ScopedIndex, about
from quoteproof.service.admin import Admin

B_SECRETS = ("Bluebird", "40 volunteers", "codename")
"""Words only collection B's document holds (in its title, text and every quote)."""
QUESTION = "Which shingles trial enrols volunteers, and under what name?"
"""A question B answers (it holds none of `B_SECRETS`)."""
UPLOAD: dict[str, Any] = {
    "files": [("file", ("planted.md", b"# Planted\n\nPlanted text.\n", "text/markdown"))]
}

NONE = ""
"""The service method of a route that asks the service nothing (`POST /logout`)."""


@dataclass(frozen=True)
class BItems:
    """Identifiers of B's items that A's requests aim at."""

    doc: str
    entry: str
    answer: dict[str, Any]
    job: str


ASK = {"data": lambda s, b: with_token(s.client, {"question": QUESTION}, s.a)}
UPLOAD_B = {"data": {"collection": "B"}, **UPLOAD}
WEB_UPLOAD_B = {"data": lambda s, b: with_token(s.client, {"collection": "B"}, s.a), **UPLOAD}
TOKEN = {"data": lambda s, b: with_token(s.client, {}, s.a)}

HTTP_ROUTES: dict[tuple[str, str], tuple[str, str, dict[str, Any]]] = {
    # route: (the ScopedIndex method it must call, the URL A asks for (a format
    # string over `b`, B's items), the other request arguments: a callable value is
    # called with the server and `b`)
    ("POST", "/v1/ask"): ("ask", "/v1/ask", {"json": {"question": QUESTION}}),
    ("GET", "/v1/answers/{answer_id}"): ("entry", "/v1/answers/{b.entry}", {}),
    ("POST", "/v1/verify"): ("verify_saved", "/v1/verify", {"json": lambda s, b: b.answer}),
    ("GET", "/v1/search"): ("search", "/v1/search", {"params": {"q": QUESTION, "top_k": 50}}),
    ("GET", "/v1/sources/{doc_id}"): ("span", "/v1/sources/{b.doc}", {}),
    ("GET", "/v1/documents"): ("documents", "/v1/documents", {}),
    ("DELETE", "/v1/documents/{doc_id}"): ("retire", "/v1/documents/{b.doc}", {}),
    ("POST", "/v1/documents"): ("upload_collection", "/v1/documents", UPLOAD_B),
    ("GET", "/v1/jobs/{job_id}"): ("job", "/v1/jobs/{b.job}", {}),
    ("GET", "/v1/health"): ("document_count", "/v1/health", {}),
    ("GET", "/v1/version"): ("versions", "/v1/version", {}),
    ("GET", "/"): ("modes", "/", {}),
    ("POST", "/ask"): ("ask", "/ask", ASK),
    ("POST", "/ask/stream"): ("ask", "/ask/stream", ASK),
    ("GET", "/sources/{doc_id}"): ("span", "/sources/{b.doc}", {}),
    ("GET", "/sources/{doc_id}/pages/{page}.png"): ("document", "/sources/{b.doc}/pages/1.png", {}),
    ("GET", "/library"): ("documents", "/library?job={b.job}", {}),
    ("GET", "/library/table"): ("documents", "/library/table", {}),
    ("GET", "/library/{doc_id}/retire"): ("document", "/library/{b.doc}/retire", {}),
    ("POST", "/library/{doc_id}/retire"): ("retire", "/library/{b.doc}/retire", TOKEN),
    ("POST", "/library/upload"): ("upload_collection", "/library/upload", WEB_UPLOAD_B),
    ("GET", "/library/jobs/{job_id}"): ("job", "/library/jobs/{b.job}", {}),
    ("GET", "/history"): ("history", "/history", {}),
    ("GET", "/answers/{entry_id}"): ("entry", "/answers/{b.entry}", {}),
    ("GET", "/login"): ("authenticate", "/login", {}),
    ("POST", "/login"): (
        "authenticate",
        "/login",
        {"data": lambda s, b: with_token(s.client, {"key": s.key_a}, s.a)},
    ),
    ("POST", "/logout"): (NONE, "/logout", TOKEN),
}


def _app_routes() -> set[tuple[str, str]]:
    from quoteproof.server import api, web

    return {
        (method, route.path)
        for router in (api.router, web.router)
        for route in router.routes
        for method in getattr(route, "methods", ())
    }


SERVICE_METHODS: tuple[tuple[type, tuple[str, ...]], ...] = (
    (ScopedIndex, ("ask", "search", "document", "chunk", "documents", "document_count",
                   "retire", "verify_saved", "entry", "history", "quote", "span",
                   "upload_collection", "job", "modes")),
    (Admin, ("authenticate",)),
)  # fmt: skip
"""The service methods the contract names, by class."""
SERVICE_FUNCTIONS: tuple[tuple[ModuleType, tuple[str, ...]], ...] = ((about, ("versions",)),)
"""The service functions it names (what the service says of itself), by module."""


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the service methods called (`SERVICE_METHODS`), in order."""
    seen: list[str] = []
    for cls, names in SERVICE_METHODS:
        for name in names:
            original = getattr(cls, name)

            def counted(self: Any, *args: Any, _n: str = name, _f: Any = original,
                        **kwargs: Any) -> Any:  # fmt: skip
                seen.append(_n)
                return _f(self, *args, **kwargs)

            monkeypatch.setattr(cls, name, counted)
    for module, names in SERVICE_FUNCTIONS:
        for name in names:
            function = getattr(module, name)

            def called(*args: Any, _n: str = name, _f: Any = function,
                       **kwargs: Any) -> Any:  # fmt: skip
                seen.append(_n)
                return _f(*args, **kwargs)

            monkeypatch.setattr(module, name, called)
    return seen


def _b_items(server: Any) -> BItems:
    """B's answer (recorded), its document and an ingest job, made with B's key."""
    client = server.client
    asked = client.post("/v1/ask", json={"question": QUESTION}, headers=server.b)
    assert asked.status_code == 200 and "Bluebird" in asked.text
    job = client.post("/v1/documents", headers=server.b, data={"collection": "B"}, **UPLOAD)
    assert job.status_code == 202
    return BItems(server.b_doc, asked.headers["x-answer-id"], asked.json(), job.json()["job"])


def _leaks(text: str) -> list[str]:
    return [secret for secret in B_SECRETS if secret in text]


def test_every_route_is_in_the_contract() -> None:
    assert _app_routes() == set(HTTP_ROUTES), (
        "a route was added or removed: list it in HTTP_ROUTES with an attempt on "
        "collection B and the ScopedIndex method it must call"
    )


def test_no_http_route_shows_a_key_for_a_anything_of_b(server: Any, calls: list[str]) -> None:
    b = _b_items(server)
    for (method, path), (method_used, url, extra) in HTTP_ROUTES.items():
        calls.clear()
        arguments = {k: v(server, b) if callable(v) else v for k, v in extra.items()}
        response = server.client.request(method, url.format(b=b), headers=server.a, **arguments)
        assert not _leaks(response.text), (method, path, response.status_code)
        if method_used:
            assert method_used in calls, f"{method} {path} bypassed ScopedIndex.{method_used}"
    # A's attempts to retire B's document failed.
    documents = server.client.get("/v1/documents", headers=server.b).json()["documents"]
    assert b.doc in [d["doc_id"] for d in documents]
    assert server.client.get(f"/v1/answers/{b.entry}", headers=server.b).status_code == 200


# --- MCP -----------------------------------------------------------------------------


MCP_TOOLS: dict[str, tuple[str, Callable[[Any, str], Any]]] = {
    # tool: (the ScopedIndex method it must call, the call A makes; `ref` is B's passage)
    "search": ("search", lambda tools, ref: tools.search(QUESTION, 50)),
    "quote": ("quote", lambda tools, ref: tools.quote(ref, "Project Bluebird")),
    "ask": ("ask", lambda tools, ref: tools.ask(QUESTION, "quote")),
}


@pytest.fixture
def index_a_b(server: Any) -> Iterator[Index]:
    """The index of `server` (collections A and B), opened on this thread."""
    with Index.open(server.index_dir) as index:
        yield index


def test_no_mcp_tool_shows_a_server_for_a_anything_of_b(index_a_b: Index, calls: list[str]) -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the mcp SDK")
    from mcp.server.mcpserver.exceptions import ToolError

    from quoteproof.server.mcp import McpServer, Tools

    (b_hit,) = index_a_b.search("Bluebird", top_k=1, collections=["B"])
    tools = Tools(ScopedIndex(index_a_b, Principal("mcp", ("A",))), ExtractiveBackend(), 90.0)
    # A thread of its own: another test on this worker may have left an event loop running.
    with ThreadPoolExecutor(max_workers=1) as worker, ThreadPoolExecutor(max_workers=1) as loop:
        listing = McpServer(worker, tools).server.list_tools()
        registered = loop.submit(asyncio.run, listing).result()
    assert {tool.name for tool in registered} == set(MCP_TOOLS), "list the new tool in MCP_TOOLS"
    for name, (method_used, attempt) in MCP_TOOLS.items():
        calls.clear()
        try:
            result = json.dumps(attempt(tools, b_hit.chunk.ref), ensure_ascii=False)
        except ToolError as exc:
            result = str(exc)
        assert not _leaks(result), name
        assert method_used in calls, f"MCP tool {name} bypassed ScopedIndex.{method_used}"


# --- CLI -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "method_used"),
    [
        (["ask", QUESTION, "--format", "json"], "ask"),
        (["search", QUESTION, "--format", "json", "--top-k", "50"], "search"),
    ],
)
def test_the_cli_collection_option_keeps_b_out(
    server: Any, calls: list[str], command: list[str], method_used: str
) -> None:
    from typer.testing import CliRunner

    from quoteproof.cli import app

    args = [*command, "--index", str(server.index_dir), "--collection", "A"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert not _leaks(result.stdout)
    assert method_used in calls
