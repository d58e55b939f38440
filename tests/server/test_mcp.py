"""`quoteproof mcp`: the real server as a subprocess, driven by the MCP SDK's stdio client.

One server per module (the session is entered once through an anyio blocking portal);
the collection test starts a second one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the mcp SDK")

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from conftest import write_corpus
from quoteproof import Index
from quoteproof.model import sha256_text
from quoteproof.receipts import verify_saved

SOURCE = "Antiviral medicines such as acyclovir, valacyclovir and famciclovir"
PARAPHRASE = "antiviral medicine like acyclovir, valacyclovir and famciclovir"


class Client:
    """Synchronous calls into an MCP session that lives on a portal's event loop."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        return self.portal.call(self.session.call_tool, tool, arguments)

    def data(self, tool: str, **arguments: Any) -> Any:
        """The structured result of a call that must succeed."""
        result = self.call(tool, **arguments)
        assert not result.is_error, error_text(result)
        assert result.structured_content is not None
        return result.structured_content


def error_text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


@contextmanager
def mcp_client(*args: str) -> Iterator[Client]:
    """A started `quoteproof mcp ARGS` with an initialised client session; the server
    gets this process's environment (the SDK passes only a few variables by default),
    so it runs the same sources and signs with the tests' audit key."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "quoteproof", "mcp", *args], env=dict(os.environ)
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(stdio_client(params)) as (read, write),
        portal.wrap_async_context_manager(ClientSession(read, write)) as session,
    ):
        portal.call(session.initialize)
        yield Client(portal, session)


@pytest.fixture(scope="module")
def mcp_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small corpus of `index_dir`, ingested once for this module (the server
    writes only its audit log)."""
    root = tmp_path_factory.mktemp("mcp")
    location = root / "index"
    with Index.open(location, create=True) as index:
        index.ingest([write_corpus(root)], embed=False)
    return location


@pytest.fixture(scope="module")
def client(mcp_index: Path) -> Iterator[Client]:
    with mcp_client("--index", str(mcp_index)) as started:
        yield started


def check_receipt(index: Path, quote: dict[str, Any]) -> None:
    """What `quoteproof verify` checks: the span of the stored version and both hashes."""
    with Index.open(index) as idx:
        document = idx.store.get_document(quote["doc_id"], quote["doc_version"])
    assert document is not None
    assert quote["text"] == document.text[quote["start"] : quote["end"]]
    assert quote["doc_sha256"] == document.sha256 == sha256_text(document.text)
    assert quote["text_sha256"] == sha256_text(quote["text"])


def find_ref(client: Client, query: str, needle: str) -> dict[str, Any]:
    hits = client.data("search", query=query)["result"]
    return next(hit for hit in hits if needle in hit["text"])


def test_lists_three_described_tools(client: Client) -> None:
    tools = {tool.name: tool for tool in client.portal.call(client.session.list_tools).tools}
    assert set(tools) == {"search", "quote", "ask"}
    assert all(tool.description for tool in tools.values())
    assert "verbatim" in (tools["quote"].description or "")
    assert "label" in (tools["quote"].description or "")
    assert tools["quote"].input_schema["required"] == ["ref"]
    assert tools["search"].input_schema["required"] == ["query"]


def test_search_finds_a_chunk(client: Client, mcp_index: Path) -> None:
    hits = client.data("search", query="shingles antiviral acyclovir", top_k=3)["result"]
    assert 1 <= len(hits) <= 3
    assert set(hits[0]) == {"ref", "label", "source_path", "score", "text"}
    assert any("acyclovir" in hit["text"] for hit in hits)
    with Index.open(mcp_index) as idx:
        for hit in hits:
            chunk = idx.chunk(hit["ref"])
            assert chunk is not None and chunk.text == hit["text"]


def test_quote_by_ref_is_the_stored_chunk(client: Client, mcp_index: Path) -> None:
    hit = find_ref(client, "remdesivir dose", "200 mg")
    quote = client.data("quote", ref=hit["ref"])
    with Index.open(mcp_index) as idx:
        chunk = idx.chunk(hit["ref"])
    assert chunk is not None
    assert quote["text"] == chunk.text
    assert (quote["ref"], quote["label"], quote["match"]) == (hit["ref"], chunk.label, "ref")
    assert quote["claimed_text"] is None
    check_receipt(mcp_index, quote)


def test_quote_of_paraphrase_returns_the_source_words(client: Client, mcp_index: Path) -> None:
    hit = find_ref(client, "antiviral acyclovir", "acyclovir")
    quote = client.data("quote", ref=hit["ref"], words=PARAPHRASE)
    assert quote["text"] == SOURCE
    assert quote["text"] != PARAPHRASE
    assert quote["claimed_text"] == PARAPHRASE
    assert quote["match"] == "fuzzy"
    check_receipt(mcp_index, quote)


def test_quote_of_absent_words_is_an_error(client: Client) -> None:
    hit = find_ref(client, "antiviral acyclovir", "acyclovir")
    words = "Shingles is cured for good by a single dose of penicillin."
    result = client.call("quote", ref=hit["ref"], words=words)
    assert result.is_error
    message = error_text(result)
    assert "no source passage matches" in message
    assert "penicillin" not in message
    assert result.structured_content is None


def test_quote_of_unknown_ref_is_an_error(client: Client) -> None:
    result = client.call("quote", ref="zzzzzz.99")
    assert result.is_error
    assert "no passage with ref 'zzzzzz.99'" in error_text(result)


def test_ask_answers_with_quotes_that_verify(client: Client, mcp_index: Path) -> None:
    data = client.data("ask", question="How is shingles treated?")
    assert data["schema"] == "quoteproof.answer/1"
    assert data["status"] == "answered"
    assert data["quotes"]
    for quote in data["quotes"]:
        check_receipt(mcp_index, quote)
    with Index.open(mcp_index) as idx:
        check = verify_saved(data, idx.store, idx.verification_key(), idx.store.get_audit_entry)
        entries = idx.store.audit_entries()
    assert check.quotes and check.valid and check.seal.sealed  # sealed, signed, unchanged
    recorded = [e for e in entries if json.loads(e.body)["question"] == data["question"]]
    assert [(e.user, e.collections) for e in recorded] == [("mcp", ("*",))]


def test_ask_mode_needing_a_model_is_an_error(client: Client) -> None:
    result = client.call("ask", question="How is shingles treated?", mode="cite")
    assert result.is_error
    assert "language model" in error_text(result)


def test_collection_scope_hides_other_collections(mcp_index: Path) -> None:
    with mcp_client("--index", str(mcp_index), "--collection", "elsewhere") as scoped:
        assert scoped.data("search", query="shingles acyclovir")["result"] == []
        with Index.open(mcp_index) as idx:
            ref = idx.search("acyclovir", top_k=1)[0].chunk.ref
        result = scoped.call("quote", ref=ref)
        assert result.is_error
        assert f"no passage with ref '{ref}' in collection elsewhere" in error_text(result)
        answer = scoped.data("ask", question="How is shingles treated?")
        assert answer["status"] == "refused" and answer["quotes"] == []


def test_missing_index_exits_2_before_serving(tmp_path: Path) -> None:
    missing = tmp_path / "nothing"
    result = subprocess.run(
        [sys.executable, "-m", "quoteproof", "mcp", "--index", str(missing)],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "no index at" in result.stderr
