"""`quoteproof mcp`: the real server as a subprocess, driven by the MCP SDK's stdio client.

One server per module (the session is entered once through an anyio blocking portal);
the collection tests start others. The hostile-input tests give it the API's attacks:
another collection's passages, fabricated quotes, malformed and oversized
arguments, and lines no SDK client would send (`RawClient`).
"""

from __future__ import annotations

import json
import os
import select
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
    hits = client.data("search", query=query)["hits"]
    return next(hit for hit in hits if needle in hit["text"])


def test_lists_three_described_tools(client: Client) -> None:
    tools = {tool.name: tool for tool in client.portal.call(client.session.list_tools).tools}
    assert set(tools) == {"search", "quote", "ask"}
    assert all(tool.description for tool in tools.values())
    assert "verbatim" in (tools["quote"].description or "")
    assert "label" in (tools["quote"].description or "")
    assert tools["quote"].input_schema["required"] == ["ref"]
    assert tools["search"].input_schema["required"] == ["query"]
    output = tools["search"].output_schema or {}
    assert set(output["properties"]) == {"hits", "facts"}
    assert "never quotations" in (tools["search"].description or "")


def test_search_finds_a_chunk(client: Client, mcp_index: Path) -> None:
    found = client.data("search", query="shingles antiviral acyclovir", top_k=3)
    assert set(found) == {"hits", "facts"} and found["facts"] == []  # no graph
    hits = found["hits"]
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


def test_ask_gives_the_context_asked_for(client: Client, mcp_index: Path, tmp_path: Path) -> None:
    tools = {tool.name: tool for tool in client.portal.call(client.session.list_tools).tools}
    context = tools["ask"].input_schema["properties"]["context"]
    assert context["default"] == "paragraphs" and "whole:" in context["description"]
    graph = tmp_path / "graph.csv"
    graph.write_text(
        "subject,relation,object,document,quote\n"
        "remdesivir,has_dose,200 mg on day 1,dosing.txt,The recommended dose is 200 mg on day 1\n",
        "utf-8",
    )
    with Index.open(mcp_index) as idx:
        idx.import_graph(graph)
        dosing = next(d for d in idx.store.list_documents() if d.source_path.endswith("dosing.txt"))
    question = "What is the remdesivir dose?"
    facts = client.data("ask", question=question, context="triplets")
    assert facts["context"] == "triplets" and facts["status"] == "answered"
    ((subject, origin, quote_id),) = [
        (f["subject"], f["origin"], f["quote_id"]) for f in facts["facts"]
    ]
    assert (subject, origin) == ("remdesivir", "imported")
    (quote,) = [q for q in facts["quotes"] if q["id"] == quote_id]
    check_receipt(mcp_index, quote)
    whole = client.data("ask", question=question, context="whole", document=dosing.doc_id)
    assert whole["context"] == "whole"
    assert {s["doc_id"] for s in whole["sources"]} == {dosing.doc_id}
    result = client.call("ask", question=question, mode="agent", context="both")
    assert result.is_error and "agent mode searches for itself" in error_text(result)


def test_collection_scope_hides_other_collections(mcp_index: Path) -> None:
    with mcp_client("--index", str(mcp_index), "--collection", "elsewhere") as scoped:
        assert scoped.data("search", query="shingles acyclovir") == {"hits": [], "facts": []}
        with Index.open(mcp_index) as idx:
            ref = idx.search("acyclovir", top_k=1)[0].chunk.ref
        result = scoped.call("quote", ref=ref)
        assert result.is_error
        assert f"no passage with ref '{ref}' in collection elsewhere" in error_text(result)
        answer = scoped.data("ask", question="How is shingles treated?")
        assert answer["status"] == "refused" and answer["quotes"] == []


GRAPH_A = (
    "subject,relation,object,document,quote\n"
    "remdesivir,has_dose,200 mg on day 1,dosing.txt,The recommended dose is 200 mg on day 1\n"
    "remdesivir,treats,COVID-19,,\n"
)
GRAPH_B = "subject,relation,object\nremdesivir,tested_in,Project Bluebird\n"


def test_search_gives_the_triplets_it_names_as_facts_in_scope(tmp_path: Path) -> None:
    """A graph in each of two collections: a server for A finds A's triplets as
    imported facts (the fields and values of `quoteproof search --format json`),
    never B's, and never among the passages."""
    location = tmp_path / "index"
    (tmp_path / "a.csv").write_text(GRAPH_A, "utf-8")
    (tmp_path / "b.csv").write_text(GRAPH_B, "utf-8")
    with Index.open(location, create=True) as index:
        index.ingest([write_corpus(tmp_path)], embed=False, collection="A")
        index.import_graph(tmp_path / "a.csv", collection="A")
        index.import_graph(tmp_path / "b.csv", collection="B")
    query = "remdesivir dose"
    with mcp_client("--index", str(location), "--collection", "A") as scoped:
        found = scoped.data("search", query=query, top_k=5)
    facts = found["facts"]
    assert [(f["subject"], f["relation"], f["object"]) for f in facts] == [
        ("remdesivir", "has_dose", "200 mg on day 1"),
        ("remdesivir", "treats", "COVID-19"),
    ]
    assert {(f["origin"], f["collection"], f["graph_file"]) for f in facts} == {
        ("imported", "A", "a.csv")
    }
    assert facts[0]["claimed_quote"] == "The recommended dose is 200 mg on day 1"
    assert "quote" not in facts[0] and "Bluebird" not in json.dumps(found)
    passage_fields = {"ref", "label", "source_path", "score", "text"}
    assert all(set(hit) == passage_fields for hit in found["hits"])
    ran = subprocess.run(
        [sys.executable, "-m", "quoteproof", "search", query, "--index", str(location),
         "--collection", "A", "--top-k", "5", "--format", "json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert facts == json.loads(ran.stdout)["facts"]


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


# --- hostile input: the API's attacks, through MCP -------------------------------------

SECRET = "The codename Bluebird is confidential and enrols 40 volunteers."


@pytest.fixture(scope="module")
def two_collections(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small corpus in collection A and a secret document in collection B."""
    root = tmp_path_factory.mktemp("mcp-ab")
    location = root / "index"
    secret = root / "secret"
    secret.mkdir()
    (secret / "bluebird.md").write_text(f"# Project Bluebird\n\n{SECRET}\n", encoding="utf-8")
    with Index.open(location, create=True) as index:
        index.ingest([write_corpus(root)], embed=False, collection="A")
        index.ingest([secret], embed=False, collection="B")
    return location


@pytest.fixture(scope="module")
def client_a(two_collections: Path) -> Iterator[Client]:
    with mcp_client("--index", str(two_collections), "--collection", "A") as started:
        yield started


def audit_count(index: Path) -> int:
    with Index.open(index) as idx:
        return len(idx.store.audit_entries())


def test_another_collection_is_invisible_to_every_tool(
    client_a: Client, two_collections: Path
) -> None:
    with Index.open(two_collections) as idx:
        secret_ref = idx.search("Bluebird codename", top_k=1)[0].chunk.ref
    assert client_a.data("search", query="Bluebird codename confidential")["hits"] == []
    unknown = client_a.call("quote", ref="zzzzzz.1")
    hidden = client_a.call("quote", ref=secret_ref)
    assert hidden.is_error and unknown.is_error
    assert error_text(hidden) == error_text(unknown).replace("zzzzzz.1", secret_ref)
    assert "Bluebird" not in error_text(hidden)
    a_ref = find_ref(client_a, "antiviral acyclovir", "acyclovir")["ref"]
    borrowed = client_a.call("quote", ref=a_ref, words=SECRET)
    assert borrowed.is_error and "Bluebird" not in error_text(borrowed)
    answer = client_a.data("ask", question="What is the codename Bluebird and who enrols?")
    assert answer["status"] == "refused" and answer["quotes"] == []
    assert "Bluebird" not in json.dumps(answer).replace(answer["question"], "")


def test_fabricated_quotes_come_back_as_the_source_words_or_not_at_all(
    client_a: Client, two_collections: Path
) -> None:
    ref = find_ref(client_a, "antiviral acyclovir", "72 hours")["ref"]
    changed = "can shorten the attack if started within 48 hours of the rash"
    quote = client_a.data("quote", ref=ref, words=changed)
    assert quote["text"] == "can shorten the attack if started within 72 hours of the rash"
    assert quote["claimed_text"] == changed and quote["differs"] and "48" in quote["differs"]
    check_receipt(two_collections, quote)
    for invented in (
        "Shingles never comes back after one dose of valacyclovir.",
        "Normal blood pressure is lower than 120/80 mmHg.",  # another document's words
        "",
    ):
        result = client_a.call("quote", ref=ref, words=invented)
        if invented:
            assert result.is_error, invented
            assert "nothing was quoted" in error_text(result)
        else:  # no words: the whole passage, verbatim
            check_receipt(two_collections, client_a.data("quote", ref=ref, words=invented))


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        ("search", {"query": "x", "top_k": "abc"}, "valid integer"),
        ("search", {"query": "x", "top_k": 0}, "greater than or equal to 1"),
        ("search", {"query": "x", "top_k": 51}, "less than or equal to 50"),
        ("search", {"query": "x", "top_k": 2.5}, "valid integer"),
        ("search", {}, "Field required"),
        ("search", {"query": ["shingles"]}, "valid string"),
        ("quote", {"ref": 5}, "valid string"),
        ("quote", {"ref": "x", "words": {"a": 1}}, "valid string"),
        ("ask", {"question": "x", "mode": "evil"}, "'quote', 'cite', 'rationale' or 'agent'"),
        ("search", {"query": "   "}, "the query is empty"),
        ("ask", {"question": " \n "}, "the question is empty"),
        ("search", {"query": "shingles " * 1200}, "at most 10000 characters"),
        ("ask", {"question": "shingles " * 1200}, "at most 10000 characters"),
        ("quote", {"ref": "k" * 101}, "at most 100 characters"),
        ("quote", {"ref": "x", "words": "rash " * 2001}, "at most 10000 characters"),
    ],
)
def test_malformed_and_oversized_arguments_are_tool_errors(
    client_a: Client, two_collections: Path, tool: str, arguments: dict[str, Any], problem: str
) -> None:
    before = audit_count(two_collections)
    result = client_a.call(tool, **arguments)
    assert result.is_error
    message = error_text(result)
    assert problem in message and len(message) < 2000
    assert audit_count(two_collections) == before
    assert client_a.data("search", query="acyclovir", top_k=1)["hits"]


class RawClient:
    """`quoteproof mcp` driven line by line over its stdin and stdout, to send what
    no SDK client would (JSON with lone surrogates, lines that are not JSON)."""

    def __init__(self, index: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "quoteproof", "mcp", "--index", str(index)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.send(
            '{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {'
            '"protocolVersion": "2025-06-18", "capabilities": {}, '
            '"clientInfo": {"name": "raw", "version": "0"}}}'
        )
        assert self.reply()["id"] == 0
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.process.stdin.flush()

    def reply(self, timeout: float = 30) -> dict[str, Any]:
        """The next line the server writes; AssertionError when none comes in time."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        assert ready, "the server sent no reply"
        reply: dict[str, Any] = json.loads(self.process.stdout.readline())
        return reply

    def call(self, request_id: int, tool: str, raw_arguments: str) -> dict[str, Any]:
        self.send(
            f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
            f'"params": {{"name": "{tool}", "arguments": {raw_arguments}}}}}'
        )
        return self.reply()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def test_a_line_that_cannot_be_read_is_answered_and_the_server_goes_on(mcp_index: Path) -> None:
    """A lone surrogate (`"\\ud83d"`: JSON, but not text) or a line that is not JSON
    once made the server drop the request without a reply: the client waited for
    ever."""
    before = audit_count(mcp_index)
    raw = RawClient(mcp_index)
    try:
        for number, (tool, arguments, path) in enumerate(
            [
                ("search", '{"query": "\\ud83d shingles"}', "params.arguments.query"),
                ("ask", '{"question": "rash \\udc00"}', "params.arguments.question"),
                ("quote", '{"ref": "\\ud800"}', "params.arguments.ref"),
                ("quote", '{"ref": "x", "words": "\\udfff"}', "params.arguments.words"),
            ],
            start=1,
        ):
            reply = raw.call(number, tool, arguments)
            assert reply["id"] == number
            assert reply["error"]["code"] == -32602
            assert reply["error"]["message"].startswith(f"Invalid params: {path}: holds a lone")
        raw.send("this is not JSON")
        reply = raw.reply()
        assert reply["id"] is None and reply["error"]["code"] == -32700
        raw.send('{"jsonrpc": "2.0", "id": 9, "method": 5}')
        reply = raw.reply()
        assert reply["id"] == 9 and reply["error"]["code"] == -32600
        works = raw.call(10, "search", '{"query": "acyclovir", "top_k": 1}')
        assert works["id"] == 10 and not works["result"].get("isError")
        assert "acyclovir" in works["result"]["content"][0]["text"]
        assert audit_count(mcp_index) == before  # the refused ask was not recorded
    finally:
        raw.close()
