"""The HTTP API (`quoteproof serve`): every endpoint, its access control per
collection, uploads (limits, types, names) and the security headers.

`server` (see conftest) is a TestClient of an app over a fresh index with
collections A (a.md, a2.txt) and B (b.md) and a key for each.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.responses import JSONResponse

from helpers.llm_servers import (
    RawReply,
    ScriptedAnthropicServer,
    ScriptedOpenAIServer,
    ScriptedServer,
)
from quoteproof.audit import record_answer
from quoteproof.index import Index
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.model import ANSWER_SCHEMA
from quoteproof.render.hits import FACT_FIELDS
from quoteproof.server import is_loopback_host
from quoteproof.server.app import json_safe, openapi_text
from quoteproof.server.journal import JOURNAL_FOLDER
from quoteproof.server.security import CONTENT_SECURITY_POLICY
from quoteproof.store.sqlite import SQLiteStore

REPO_ROOT = Path(__file__).resolve().parents[2]


def wait_for(server: Any, job_id: str, headers: dict[str, str]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        response = server.client.get(f"/v1/jobs/{job_id}", headers=headers)
        assert response.status_code == 200, response.text
        job: dict[str, Any] = response.json()
        if job["state"] in ("done", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def upload(
    server: Any, files: list[tuple[str, bytes]], headers: dict[str, str], collection: str = "A"
) -> Any:
    response = server.client.post(
        "/v1/documents",
        headers=headers,
        data={"collection": collection},
        files=[("file", (name, body, "application/octet-stream")) for name, body in files],
    )
    return response


def files_under(folder: Path) -> list[Path]:
    """The uploaded files under `folder` (not the job journal)."""
    if not folder.exists():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and JOURNAL_FOLDER not in p.parts)


# --- authentication ---


def test_requests_without_a_valid_key_get_401(server: Any) -> None:
    client = server.client
    for method, url in [
        ("GET", "/v1/documents"),
        ("GET", "/v1/search?q=shingles"),
        ("POST", "/v1/ask"),
        ("GET", f"/v1/sources/{server.a_doc}"),
        ("GET", "/v1/answers/x"),
        ("GET", "/v1/jobs/x"),
        ("DELETE", f"/v1/documents/{server.a_doc}"),
        ("POST", "/v1/documents"),
        ("POST", "/v1/verify"),
    ]:
        for headers in [{}, {"Authorization": "Bearer qp_000000000000_" + "x" * 43}]:
            response = client.request(method, url, headers=headers)
            assert response.status_code == 401, (method, url, response.text)
            assert response.headers["www-authenticate"] == "Bearer"
            assert "error" in response.json()
    # the document is still there: the unauthenticated DELETE did nothing
    listed = client.get("/v1/documents", headers=server.a).json()["documents"]
    assert server.a_doc in [d["doc_id"] for d in listed]


def test_key_in_header_cookie_and_revocation(server: Any) -> None:
    client = server.client
    assert client.get("/v1/documents", headers={"X-API-Key": server.key_a}).status_code == 200
    client.cookies.set("qp_key", server.key_a)
    assert client.get("/v1/documents").status_code == 200
    client.cookies.clear()
    from quoteproof.index import Index

    key_id = server.key_a.split("_")[1]
    with Index.open(server.index_dir) as index:
        assert index.store.revoke_api_key(key_id)
    assert client.get("/v1/documents", headers=server.a).status_code == 401


def test_no_auth_mode_sees_every_collection(server_with: Any) -> None:
    with server_with(auth=False) as server:
        docs = server.client.get("/v1/documents").json()["documents"]
        assert {d["collection"] for d in docs} == {"A", "B"}
        response = server.client.post("/v1/ask", json={"question": "Project Bluebird volunteers"})
        assert response.status_code == 200
        entry = server.client.get(response.headers["location"]).json()
        assert entry["user"] == "anonymous" and entry["collections"] == ["*"]


def test_cross_origin_writes_with_ambient_authority_are_403(server: Any) -> None:
    client, question = server.client, {"question": "shingles rash"}
    client.cookies.set("qp_key", server.key_a)
    for foreign in [{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Sec-Fetch-Site": "same-site"}, {"Origin": "null"}]:  # fmt: skip
        assert client.post("/v1/ask", json=question, headers=foreign).status_code == 403
        assert client.delete(f"/v1/documents/{server.a_doc}", headers=foreign).status_code == 403
        assert client.get("/v1/documents", headers=foreign).status_code == 200  # reads are fine
    same = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    assert client.post("/v1/ask", json=question, headers=same).status_code == 200
    client.cookies.clear()
    # a key sent in a header is not ambient: no browser sends it cross-origin
    evil = {**server.a, "Origin": "http://evil.example"}
    assert client.post("/v1/ask", json=question, headers=evil).status_code == 200


def test_no_auth_server_refuses_foreign_hosts_and_origins(server_with: Any) -> None:
    loopback = ("localhost", "127.0.0.1", "::1")
    with server_with(auth=False, allowed_hosts=loopback) as server:
        client = server.client
        for host in ["localhost:8000", "127.0.0.1", "[::1]:8000"]:
            assert client.get("/v1/health", headers={"Host": host}).status_code == 200, host
        for host in ["evil.example", "localhost.evil.example:8000", "testserver"]:
            response = client.get("/v1/documents", headers={"Host": host})
            assert response.status_code == 400, host
            assert response.headers["x-frame-options"] == "DENY"
        local = {"Host": "localhost:8000"}
        response = client.post(
            "/v1/documents",
            headers={**local, "Origin": "http://evil.example"},
            files=[("file", ("x.txt", b"planted text"))],
        )
        assert response.status_code == 403
        assert client.get("/v1/documents", headers=local).json()["documents"]


def test_serve_refuses_no_auth_on_a_public_address(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "quoteproof", "serve", "--no-auth", "--host", "0.0.0.0",
         "--index", str(tmp_path / "idx")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2
    assert "loopback" in result.stderr
    assert not (tmp_path / "idx").exists()


def test_loopback_hosts() -> None:
    for host in ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"]:
        assert is_loopback_host(host), host
    for host in ["0.0.0.0", "::", "192.168.1.2", "example.com", "localhost.example.com", ""]:
        assert not is_loopback_host(host), host


# --- one collection never sees another ---


def test_key_for_a_sees_nothing_of_b(server: Any) -> None:
    client, a = server.client, server.a
    docs = client.get("/v1/documents", headers=a).json()["documents"]
    assert {d["collection"] for d in docs} == {"A"} and len(docs) == 2
    hits = client.get("/v1/search", params={"q": "shingles Bluebird", "top_k": 50}, headers=a)
    assert hits.status_code == 200
    assert hits.json()["hits"] and all(h["doc_id"] != server.b_doc for h in hits.json()["hits"])
    assert all("Bluebird" not in h["text"] for h in hits.json()["hits"])
    assert client.get(f"/v1/sources/{server.b_doc}", headers=a).status_code == 404
    assert client.get(f"/v1/sources/{server.b_doc}?version=1", headers=a).status_code == 404
    assert client.delete(f"/v1/documents/{server.b_doc}", headers=a).status_code == 404
    assert upload(server, [("x.txt", b"hello world")], a, collection="B").status_code == 403
    for url in ["/v1/search?q=Bluebird&collection=B", "/v1/documents?collection=B"]:
        assert client.get(url, headers=a).status_code == 403
    asked = client.post("/v1/ask", json={"question": "Bluebird", "collections": ["B"]}, headers=a)
    assert asked.status_code == 403
    # B's own answer, document and job stay invisible to A
    answer = client.post(
        "/v1/ask", json={"question": "Project Bluebird volunteers"}, headers=server.b
    )
    assert answer.status_code == 200 and "Bluebird" in answer.text
    assert client.get(answer.headers["location"], headers=a).status_code == 404
    assert client.get(answer.headers["location"], headers=server.b).status_code == 200
    job = upload(server, [("c.txt", b"Bluebird notes for B only.")], server.b, collection="B")
    assert job.status_code == 202
    assert client.get(f"/v1/jobs/{job.json()['job']}", headers=a).status_code == 404
    wait_for(server, job.json()["job"], server.b)
    # ... and A's answers never draw on B
    mine = client.post("/v1/ask", json={"question": "Project Bluebird volunteers"}, headers=a)
    assert mine.status_code == 200
    body = mine.json()
    assert all(item["doc_id"] != server.b_doc for item in body["quotes"] + body["sources"])
    assert "Bluebird" not in json.dumps(body).replace("Project Bluebird volunteers", "")
    # the B document still exists for B
    assert client.get(f"/v1/sources/{server.b_doc}", headers=server.b).status_code == 200


def test_an_empty_collection_list_means_the_keys_own_scope(server: Any) -> None:
    client = server.client
    asked = client.post(
        "/v1/ask", json={"question": "shingles rash", "collections": []}, headers=server.a
    )
    assert asked.status_code == 200, asked.text
    location = asked.headers["location"]
    mine = client.get(location, headers=server.a).json()
    assert mine["collections"] == ["A"] and mine["user"] == "alice"
    assert client.get(location, headers=server.b).status_code == 404
    history = client.get("/history", headers=server.b)
    assert history.status_code == 200 and asked.headers["x-answer-id"] not in history.text
    assert "shingles rash" not in history.text and "alice" not in history.text


def test_an_entry_without_collections_is_shown_to_no_scoped_key(server: Any) -> None:
    with Index.open(server.index_dir) as index:
        answer = index.ask("shingles rash", backend=ExtractiveBackend())
        entry = record_answer(index, answer, user="eve", collections=())
    assert entry.collections == ()
    for key in (server.a, server.b):
        assert server.client.get(f"/v1/answers/{entry.entry_id}", headers=key).status_code == 404
        history = server.client.get("/history", headers=key).text
        assert entry.entry_id not in history and "eve" not in history


def test_verify_treats_other_collections_as_absent(server: Any) -> None:
    client = server.client
    answer = client.post(
        "/v1/ask", json={"question": "Project Bluebird volunteers"}, headers=server.b
    )
    body = answer.json()
    assert body["quotes"]
    mine = client.post("/v1/verify", json=body, headers=server.b).json()
    assert mine["valid"] and mine["quotes"] and all(check["valid"] for check in mine["quotes"])
    theirs = client.post("/v1/verify", json=body, headers=server.a).json()
    assert [c["quote_id"] for c in theirs["quotes"]] == [c["quote_id"] for c in mine["quotes"]]
    assert all(not c["valid"] and "not in the index" in c["problems"][0] for c in theirs["quotes"])
    # B's audit entry is not A's to see: the answer is checked against its seal alone
    assert not theirs["valid"] and theirs["answer"]["problems"] == []
    assert "not in this index's log (or not visible to this key)" in theirs["answer"]["notes"][0]


# --- answers, search, sources, documents ---


def test_ask_returns_the_answer_json_and_records_it(server: Any) -> None:
    client = server.client
    response = client.post(
        "/v1/ask", json={"question": "What are the early signs of shingles?"}, headers=server.a
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["schema"] == ANSWER_SCHEMA and answer["quotes"]
    assert all(q["doc_id"] != server.b_doc for q in answer["quotes"])
    answer_id = response.headers["x-answer-id"]
    assert response.headers["location"] == f"/v1/answers/{answer_id}"
    entry = client.get(f"/v1/answers/{answer_id}", headers=server.a).json()
    assert entry["id"] == answer_id and entry["user"] == "alice"
    assert entry["collections"] == ["A"] and entry["answer"] == answer and entry["time"]
    assert answer["seal"]["audit_entry"] == answer_id
    verdict = client.post("/v1/verify", json=answer, headers=server.a).json()
    checks = verdict["quotes"]
    assert len(checks) == len(answer["quotes"]) + len(answer.get("cited", []))
    assert all(c["valid"] and c["problems"] == [] for c in checks)
    assert verdict["valid"] and verdict["answer"] == {"sealed": True, "problems": [], "notes": []}
    assert client.get("/v1/answers/nope", headers=server.a).status_code == 404


def test_ask_errors_are_json(server: Any) -> None:
    client = server.client
    response = client.post("/v1/ask", json={"question": "x", "mode": "cite"}, headers=server.a)
    message = response.json()["error"]
    assert response.status_code == 400 and "mode cite needs a language model" in message
    assert "--" not in message  # the API names no command-line options
    response = client.post("/v1/ask", json={"question": ""}, headers=server.a)
    assert response.status_code == 422 and "question" in response.json()["error"]


ODD_ASKS = {
    # a raw /v1/ask body holding a value JSON cannot carry: the path the error names
    '{"question": "shingles", "top_k": 1e309}': "top_k: expected a finite number, got inf",
    '{"question": "shingles", "top_k": NaN}': "top_k: expected a finite number, got nan",
    '{"question": "shingles", "top_k": -Infinity}': "top_k: expected a finite number, got -inf",
    '{"question": "shingles", "max_steps": Infinity}': "max_steps: expected a finite number",
    '{"question": "\\ud83d"}': 'question: holds a lone surrogate "\\ud83d"',
    '{"question": "shingles \\udc00 rash"}': 'question: holds a lone surrogate "\\udc00"',
    '{"question": "shingles", "mode": "\\ud83d"}': "mode: holds a lone surrogate",
    '{"question": "shingles", "strictness": "\\ud83d"}': "strictness: holds a lone surrogate",
    '{"question": "shingles", "collections": ["A", "\\ud83d"]}': "collections[1]: holds a lone",
    '{"question": "shingles", "\\ud83d": 1}': 'key "\\ud83d": holds a lone surrogate',
}


def audit_count(server: Any) -> int:
    with Index.open(server.index_dir) as index:
        return len(index.store.audit_entries(after_seq=0, limit=1000))


def assert_json_4xx(response: Any, problem: str) -> None:
    assert response.status_code in (400, 422), (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    assert problem in response.json()["error"]


@pytest.mark.parametrize(("body", "problem"), list(ODD_ASKS.items()), ids=list(ODD_ASKS.values()))
def test_ask_values_json_cannot_carry_are_a_json_4xx(server: Any, body: str, problem: str) -> None:
    before = audit_count(server)
    headers = {**server.a, "Content-Type": "application/json"}
    assert_json_4xx(server.client.post("/v1/ask", content=body, headers=headers), problem)
    assert audit_count(server) == before


@pytest.mark.parametrize(
    ("field", "literal", "problem"),
    [
        ("doc_id", '"\\ud83d"', 'quotes[0].doc_id: holds a lone surrogate "\\ud83d"'),
        ("ref", '"\\udfff"', "quotes[0].ref: holds a lone surrogate"),
        ("text", '"a\\ud800b"', "quotes[0].text: holds a lone surrogate"),
        ("start", "1e309", "quotes[0].start: expected a finite number, got inf"),
        ("end", "NaN", "quotes[0].end: expected a finite number, got nan"),
    ],
)
def test_verify_values_json_cannot_carry_are_a_json_4xx(
    server: Any, field: str, literal: str, problem: str
) -> None:
    answer = server.client.post("/v1/ask", json={"question": "shingles"}, headers=server.a).json()
    answer["quotes"][0][field] = "@@"
    body = json.dumps(answer).replace('"@@"', literal, 1)
    headers = {**server.a, "Content-Type": "application/json"}
    assert_json_4xx(server.client.post("/v1/verify", content=body, headers=headers), problem)


def test_validation_errors_echo_only_what_json_can_carry() -> None:
    odd = [{"loc": ("body", "\ud83d"), "msg": "bad", "input": float("inf"), "ctx": ValueError()}]
    assert json_safe(odd) == [{"loc": ["body", "\\ud83d"], "msg": "bad", "input": "inf", "ctx": ""}]
    assert JSONResponse(json_safe(odd)).body  # what FastAPI's own encoder refused


def test_the_answer_and_its_record_name_the_model_server(
    server_with: Any, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.script = ["<no-answer/>"]
    url = openai_server.base_url
    with server_with(llm="openai", model="m", base_url=url, api_key="sk-secret") as server:
        response = server.client.post("/v1/ask", json={"question": "shingles"}, headers=server.a)
        assert response.status_code == 200, response.text
        assert response.json()["llm"]["server"] == url
        entry_id = response.headers["x-answer-id"]
        entry = server.client.get(f"/v1/answers/{entry_id}", headers=server.a).json()
        assert entry["answer"]["llm"]["server"] == url
        assert "sk-secret" not in json.dumps(entry)
    assert openai_server.headers[-1]["authorization"] == "Bearer sk-secret"


def test_an_unreachable_model_server_is_502(server_with: Any, dead_server_url: str) -> None:
    with server_with(llm="openai", model="m", base_url=dead_server_url, timeout=2.0) as server:
        response = server.client.post("/v1/ask", json={"question": "shingles"}, headers=server.a)
        assert response.status_code == 502 and response.json()["error"]


def model_config(provider: str, server: ScriptedServer) -> dict[str, Any]:
    """The `ServerConfig` fields of a backend talking to the scripted `server`."""
    url = server.base_url  # type: ignore[attr-defined]
    key = {"api_key": "k"} if provider == "anthropic" else {}
    return {"llm": provider, "model": "m", "base_url": url, **key}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_malformed_model_reply_is_a_json_502(
    server_with: Any,
    openai_server: ScriptedOpenAIServer,
    anthropic_server: ScriptedAnthropicServer,
    provider: str,
) -> None:
    model = openai_server if provider == "openai" else anthropic_server
    model.script = [RawReply([b'{"id": "x", "choices": [{"index": 0, "message": {"cont'])]
    with server_with(**model_config(provider, model)) as server:
        before = audit_count(server)
        response = server.client.post("/v1/ask", json={"question": "shingles"}, headers=server.a)
        assert response.status_code == 502, response.text
        error = response.json()["error"]
        assert "sent a reply that is not valid JSON" in error and model.origin in error
        assert audit_count(server) == before


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_model_reply_that_outlasts_the_timeout_is_a_json_504(
    server_with: Any,
    openai_server: ScriptedOpenAIServer,
    anthropic_server: ScriptedAnthropicServer,
    provider: str,
) -> None:
    """A reply sent a byte every 0.2 s (40 s in all) outlasts a 1 s time-out that
    every single read keeps."""
    model = openai_server if provider == "openai" else anthropic_server
    model.script = [RawReply([b" "] * 200 + [b"{}"], pause=0.2)]
    with server_with(**model_config(provider, model), timeout=1.0) as server:
        response = server.client.post("/v1/ask", json={"question": "shingles"}, headers=server.a)
        assert response.status_code == 504, response.text
        assert "no complete reply within 1 s" in response.json()["error"]


def test_verify_reports_the_field_of_a_malformed_answer(server: Any) -> None:
    client = server.client
    answer = client.post("/v1/ask", json={"question": "shingles rash"}, headers=server.a).json()
    answer["quotes"][0]["start"] = "zero"
    response = client.post("/v1/verify", json=answer, headers=server.a)
    assert response.status_code == 400
    assert "quotes[0].start" in response.json()["error"]
    tampered = client.post("/v1/ask", json={"question": "shingles rash"}, headers=server.a).json()
    tampered["quotes"][0]["text"] = "Shingles is harmless."
    verdict = client.post("/v1/verify", json=tampered, headers=server.a).json()
    assert not verdict["valid"] and not verdict["quotes"][0]["valid"]
    assert verdict["answer"]["problems"][0].startswith("quotes[0].text differs: the answer says")


def test_verify_names_a_forged_attribution_and_the_index_value(server: Any) -> None:
    """A quote relabelled as another source fails `/v1/verify`, which names the field
    and what the index says, sealed or not (it used to verify: only the text,
    offsets, version and pages were compared)."""
    client = server.client
    answer = client.post("/v1/ask", json={"question": "shingles rash"}, headers=server.a).json()
    quote = answer["quotes"][0]
    label, path = quote["label"], quote["source_path"]
    quote["label"] = "FDA VEKLURY® label › 5 WARNINGS (p. 2)"
    quote["source_path"] = "/official/fda/veklury_label.pdf"
    unsealed = {key: value for key, value in answer.items() if key != "seal"}
    for forged in (answer, unsealed):
        verdict = client.post("/v1/verify", json=forged, headers=server.a).json()
        assert not verdict["valid"] and not verdict["quotes"][0]["valid"]
        problems = verdict["quotes"][0]["problems"]
        assert problems == [
            'source_path differs: the answer says "/official/fda/veklury_label.pdf", '
            f"the index says {json.dumps(path)}",
            'label differs: the answer says "FDA VEKLURY® label › 5 WARNINGS (p. 2)", '
            f"the index says {json.dumps(label, ensure_ascii=False)}",
        ]
    assert verdict["answer"]["sealed"] is False and verdict["answer"]["problems"] == []


def test_search_returns_hits_with_text(server: Any) -> None:
    response = server.client.get(
        "/v1/search", params={"q": "normal blood pressure", "top_k": 1}, headers=server.a
    )
    body = response.json()
    assert body["query"] == "normal blood pressure" and len(body["hits"]) == 1
    hit = body["hits"][0]
    assert {"ref", "doc_id", "source_path", "score", "rank", "label", "text"} <= hit.keys()
    assert "120/80" in hit["text"]


def test_search_gives_the_triplets_it_names_as_facts_in_scope(server: Any, tmp_path: Path) -> None:
    """With a graph in A and one in B, A's key finds A's triplets as imported facts
    (the fields and values of `quoteproof search --format json`), B's key B's; a
    collection without a graph gives none."""
    client, query = server.client, {"q": "shingles rash", "top_k": 5}
    assert client.get("/v1/search", params=query, headers=server.a).json()["facts"] == []
    (tmp_path / "a.csv").write_text(
        "subject,relation,object,document,quote\n"
        "shingles,causes,painful rash,a.md,Shingles causes a painful rash\n"
        "painful rash,appears_on,one side of the body,,\n",
        "utf-8",
    )
    (tmp_path / "b.csv").write_text(
        "subject,relation,object\nshingles,studied_by,Bluebird\n", "utf-8"
    )
    with Index.open(server.index_dir) as index:
        index.import_graph(tmp_path / "a.csv", collection="A")
        index.import_graph(tmp_path / "b.csv", collection="B")
    response = client.get("/v1/search", params=query, headers=server.a)
    assert response.status_code == 200, response.text
    facts = response.json()["facts"]
    assert [(f["subject"], f["relation"], f["object"], f["match"]) for f in facts] == [
        ("shingles", "causes", "painful rash", "exact"),
        ("painful rash", "appears_on", "one side of the body", "hop"),
    ]
    assert {(f["origin"], f["collection"], f["graph_file"]) for f in facts} == {
        ("imported", "A", "a.csv")
    }
    assert facts[0]["doc_id"] == server.a_doc and facts[0]["row"] == 2
    assert facts[0]["claimed_quote"] == "Shingles causes a painful rash"
    assert "Bluebird" not in response.text
    ran = subprocess.run(
        [sys.executable, "-m", "quoteproof", "search", "shingles rash", "--index",
         str(server.index_dir), "--collection", "A", "--top-k", "5", "--format", "json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert facts == json.loads(ran.stdout)["facts"]
    b_facts = client.get("/v1/search", params=query, headers=server.b).json()["facts"]
    assert [(f["object"], f["collection"]) for f in b_facts] == [("Bluebird", "B")]
    hidden = client.get("/v1/search", params={**query, "collection": "B"}, headers=server.a)
    assert hidden.status_code == 403 and "Bluebird" not in hidden.text


def test_sources_span_with_context_and_bounds(server: Any) -> None:
    client = server.client
    A_TEXT = client.get(f"/v1/sources/{server.a_doc}", headers=server.a).json()["text"]
    assert A_TEXT.startswith("# Shingles basics")
    start = A_TEXT.index("painful rash")
    end = start + len("painful rash")
    response = client.get(
        f"/v1/sources/{server.a_doc}",
        params={"start": start, "end": end, "context": 10},
        headers=server.a,
    )
    body = response.json()
    assert response.status_code == 200, response.text
    assert body["text"] == "painful rash" and body["collection"] == "A" and body["version"] == 1
    assert body["before"] == A_TEXT[start - 10 : start] and body["after"] == A_TEXT[end : end + 10]
    assert body["pages"] is None and body["boxes"] == [] and body["length"] == len(A_TEXT)
    for params in [{"start": 5, "end": 5}, {"start": -1, "end": 3}, {"start": 0, "end": 10**6}]:
        bad = client.get(f"/v1/sources/{server.a_doc}", params=params, headers=server.a)
        assert bad.status_code == 400, params
    assert client.get("/v1/sources/nosuchdoc", headers=server.a).status_code == 404
    missing = client.get(f"/v1/sources/{server.a_doc}?version=9", headers=server.a)
    assert missing.status_code == 404


def test_delete_retires_a_document(server: Any) -> None:
    client, a = server.client, server.a
    assert client.delete(f"/v1/documents/{server.a_doc}", headers=a).json() == {
        "doc_id": server.a_doc,
        "retired": True,
    }
    listed = [d["doc_id"] for d in client.get("/v1/documents", headers=a).json()["documents"]]
    assert server.a_doc not in listed and len(listed) == 1
    hits = client.get("/v1/search", params={"q": "shingles rash"}, headers=a).json()["hits"]
    assert all(h["doc_id"] != server.a_doc for h in hits)
    assert client.delete(f"/v1/documents/{server.a_doc}", headers=a).status_code == 404
    # stored versions stay readable
    assert client.get(f"/v1/sources/{server.a_doc}", headers=a).status_code == 200


# --- uploads and jobs ---


def test_upload_is_ingested_in_the_background(server: Any) -> None:
    body = b"Zebrafish regrow their fins within two weeks after an injury.\n"
    response = upload(
        server, [("fish.txt", body), ("notes.md", b"# Notes\n\nOtters hold hands.\n")], server.a
    )
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["state"] in ("queued", "running", "done") and job["total"] == 2
    assert job["collection"] == "A"
    assert response.headers["location"] == f"/v1/jobs/{job['job']}"
    done = wait_for(server, job["job"], server.a)
    assert done["state"] == "done" and done["done"] == 2
    assert [r["status"] for r in done["results"]] == ["added", "added"]
    hits = server.client.get("/v1/search", params={"q": "zebrafish fins"}, headers=server.a)
    assert "Zebrafish regrow" in hits.json()["hits"][0]["text"]
    stored = files_under(server.upload_dir)
    assert len(stored) == 2 and {p.name for p in stored} == {"fish.txt", "notes.md"}
    assert all(p.read_bytes() in (body, b"# Notes\n\nOtters hold hands.\n") for p in stored)
    # B never sees it
    b_hits = server.client.get("/v1/search", params={"q": "zebrafish"}, headers=server.b)
    assert "Zebrafish" not in b_hits.text
    assert server.client.get("/v1/jobs/nosuchjob", headers=server.a).status_code == 404


def test_a_failing_file_is_reported_in_the_job(server: Any) -> None:
    response = upload(server, [("empty.txt", b""), ("ok.txt", b"Some real text here.")], server.a)
    done = wait_for(server, response.json()["job"], server.a)
    statuses = {Path(r["path"]).name: (r["status"], r["error"]) for r in done["results"]}
    assert statuses["ok.txt"] == ("added", None)
    assert statuses["empty.txt"][0] == "failed" and "empty" in statuses["empty.txt"][1]


def test_upload_limit_is_413_without_storing(server_with: Any) -> None:
    with server_with(max_upload_mb=0.01) as server:  # 10 kB
        big = b"word " * 4000
        assert upload(server, [("big.txt", big)], server.a).status_code == 413

        def chunks() -> Any:  # no Content-Length: the limit is enforced while reading
            yield b'--xx\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n'
            for _ in range(1000):
                yield b"word " * 200

        response = server.client.post(
            "/v1/documents",
            headers={**server.a, "Content-Type": "multipart/form-data; boundary=xx"},
            content=chunks(),
        )
        assert response.status_code == 413 and "limit" in response.json()["error"]
        assert files_under(server.upload_dir) == []
        assert upload(server, [("small.txt", b"small text")], server.a).status_code == 202


def test_unsupported_and_mislabelled_files_are_415(server: Any) -> None:
    for name, body, cause in [
        ("tool.exe", b"MZ\x90\x00", "unsupported file type '.exe'"),
        ("noext", b"text", "unsupported file type no suffix"),
        (
            "report.pdf",
            b"<html><body>not a pdf</body></html>",
            "named .pdf but the content is HTML",
        ),
        ("letter.docx", b"plain text pretending", "named .docx but the content is plain text"),
    ]:
        response = upload(server, [("fine.txt", b"fine"), (name, body)], server.a)
        assert response.status_code == 415, name
        assert cause in response.json()["error"]
    assert files_under(server.upload_dir) == []  # one bad file: nothing stored
    two_bad = [("fine.txt", b"fine"), ("tool.exe", b"MZ"), ("letter.docx", b"plain text")]
    error = upload(server, two_bad, server.a).json()["error"]
    assert "tool.exe: unsupported file type '.exe'" in error
    assert "letter.docx: named .docx but the content is plain text" in error
    assert "nothing of this upload was stored" in error


def test_upload_names_cannot_leave_the_upload_folder(server: Any, tmp_path: Path) -> None:
    names = ["../../x.txt", "..\\x.txt", "/etc/passwd.txt", "a/../../../y.md", "C:\\evil\\z.txt"]
    for name in names:
        response = upload(server, [(name, b"Traversal attempt text.")], server.a)
        assert response.status_code == 202, (name, response.text)
        wait_for(server, response.json()["job"], server.a)
    stored = files_under(server.upload_dir)
    assert sorted(p.name for p in stored) == ["passwd.txt", "x.txt", "x.txt", "y.md", "z.txt"]
    root = server.upload_dir.resolve()
    assert all(p.resolve().parent.parent == root for p in stored)
    outside = [p for p in files_under(tmp_path) if not p.resolve().is_relative_to(root)]
    assert all(p.name not in ("x.txt", "y.md", "z.txt", "passwd.txt") for p in outside)
    assert upload(server, [("/etc/passwd", b"root:x:0:0")], server.a).status_code == 415
    for bad in ["..", "a/..", "...", "dir/"]:
        assert upload(server, [(bad, b"text")], server.a).status_code == 400, bad
    response = server.client.post("/v1/documents", headers=server.a, data={"collection": "A"})
    assert response.status_code in (400, 422)
    assert upload(server, [("x.txt", b"x")], server.a, collection="../B").status_code == 400


# --- service endpoints, headers, schema ---


def refuse_reading_beyond_the_document_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the store's chunk statistics and document list fail: the health check
    answers within a client's wait at any size, counting only visible documents."""

    def refused(*args: object) -> None:
        raise AssertionError("the health check read more than the document count")

    monkeypatch.setattr(SQLiteStore, "stats", refused)
    monkeypatch.setattr(SQLiteStore, "list_documents", refused)


def test_health_and_version(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    client = server.client
    refuse_reading_beyond_the_document_count(monkeypatch)
    assert client.get("/v1/health").json() == {"status": "ok", "documents": None}
    assert client.get("/v1/health", headers=server.a).json() == {"status": "ok", "documents": 2}
    assert client.get("/v1/health", headers=server.b).json()["documents"] == 1
    version = client.get("/v1/version").json()
    assert version["answer_schema"] == ANSWER_SCHEMA and version["api"] == "v1"
    assert version["version"]


def test_health_counts_every_document_without_auth(
    server_with: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with server_with(auth=False) as server:
        refuse_reading_beyond_the_document_count(monkeypatch)
        health = server.client.get("/v1/health")
        assert health.json() == {"status": "ok", "documents": 3}


def test_security_headers_on_every_response(server: Any) -> None:
    client = server.client
    for response in [
        client.get("/v1/health"),
        client.get("/v1/documents"),  # 401
        client.get("/no/such/page"),  # 404
        client.get("/static/htmx.min.js"),
        client.get("/openapi.json"),
        client.post("/v1/ask", json={"question": "shingles"}, headers=server.a),
    ]:
        headers = response.headers
        assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY, response.url
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"
        assert headers["referrer-policy"] == "no-referrer"
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    policy = docs.headers["content-security-policy"]
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in policy and docs.headers["x-frame-options"] == "DENY"


def test_committed_openapi_schema_is_current() -> None:
    committed = (REPO_ROOT / "docs" / "openapi.json").read_text(encoding="utf-8")
    assert json.loads(committed) == json.loads(openapi_text()), (
        "docs/openapi.json is out of date: run `make openapi`"
    )


def test_openapi_describes_the_endpoints(server: Any) -> None:
    schema = server.client.get("/openapi.json").json()
    paths = schema["paths"]
    for path in ["/v1/ask", "/v1/search", "/v1/documents", "/v1/jobs/{job_id}",
                 "/v1/answers/{answer_id}", "/v1/verify", "/v1/sources/{doc_id}",
                 "/v1/health", "/v1/version"]:  # fmt: skip
        assert path in paths, path
    upload_body = paths["/v1/documents"]["post"]["requestBody"]["content"]
    assert "multipart/form-data" in upload_body
    bodies = schema["components"]["schemas"]
    assert bodies["SearchBody"]["required"] == ["query", "hits", "facts"]
    fact = bodies["FactHitBody"]
    assert list(fact["properties"]) == list(FACT_FIELDS) == fact["required"]
    assert fact["properties"]["origin"]["enum"] == ["imported", "generated"]


def test_ask_with_triplets_shows_only_the_keys_collection_facts(
    server: Any, tmp_path: Path
) -> None:
    graph_a = tmp_path / "a.csv"
    graph_a.write_text(
        "subject,relation,object,document,quote\n"
        "shingles,causes,painful rash,a.md,Shingles causes a painful rash\n",
        "utf-8",
    )
    graph_b = tmp_path / "b.csv"
    graph_b.write_text("subject,relation,object\nshingles,studied_in,Project Bluebird\n", "utf-8")
    with Index.open(server.index_dir) as index:
        index.import_graph(graph_a, collection="A")
        index.import_graph(graph_b, collection="B")
    question = {"question": "What does shingles cause?", "context": "triplets"}
    body = server.client.post("/v1/ask", json=question, headers=server.a).json()
    assert body["context"] == "triplets" and body["status"] == "answered"
    assert [(f["subject"], f["object"]) for f in body["facts"]] == [("shingles", "painful rash")]
    (quote,) = [q for q in body["quotes"] if q["id"] == body["facts"][0]["quote_id"]]
    assert quote["text"] == "Shingles causes a painful rash"
    assert "Bluebird" not in json.dumps(body)
    checked = server.client.post("/v1/verify", json=body, headers=server.a).json()
    assert checked["valid"] and [c["quote_id"] for c in checked["quotes"]] == ["f1", "TID-1"]
    theirs = server.client.post("/v1/verify", json=body, headers=server.b).json()
    assert all(not c["valid"] for c in theirs["quotes"])
    bad = server.client.post(
        "/v1/ask", json={**question, "mode": "agent", "context": "both"}, headers=server.a
    )
    assert bad.status_code in (400, 422) and "agent mode searches for itself" in bad.text


def test_ask_gives_the_model_the_context_the_request_names(server: Any) -> None:
    listed = server.client.get("/v1/documents", headers=server.a).json()["documents"]
    (a2,) = [d for d in listed if d["source_path"].endswith("a2.txt")]
    question = {"question": "What is a normal blood pressure?"}
    whole = {**question, "context": "whole", "document": a2["doc_id"]}
    body = server.client.post("/v1/ask", json=whole, headers=server.a).json()
    assert body["context"] == "whole" and body["status"] == "answered", body
    assert {s["doc_id"] for s in body["sources"]} == {a2["doc_id"]}
    # B's document is not in the key's scope: it cannot be given whole either
    theirs = server.client.post(
        "/v1/ask", json={**whole, "document": server.b_doc}, headers=server.a
    )
    assert theirs.status_code == 400 and "no current document" in theirs.json()["error"]
    unknown = server.client.post("/v1/ask", json={**question, "context": "x"}, headers=server.a)
    assert unknown.status_code == 422 and "'paragraphs', 'triplets', 'both'" in unknown.text
    alone = server.client.post(
        "/v1/ask", json={**question, "document": a2["doc_id"]}, headers=server.a
    )
    assert alone.status_code == 400
    assert "whole-corpus context" in alone.json()["error"] and "--" not in alone.text
