"""`GET /metrics` (`server.metrics`): Prometheus text, an admin key or --no-auth
for all of it, a scoped key for its own collections only, counters that move once
per answer; answers made through a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from helpers.cli import cli
from helpers.llm_servers import ScriptedOpenAIServer
from quoteproof.errors import UsageError
from quoteproof.index import Index
from quoteproof.keys import create_key
from quoteproof.server.metrics import reason_kind

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Samples:
    """Every sample of a Prometheus text page by (name, labels)."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def admin_headers(server: Any) -> dict[str, str]:
    with Index.open(server.index_dir) as index:
        token, _ = create_key(index.store, "ops", [], admin=True)
    return server.headers(token)


def ask(server: Any, headers: dict[str, str], question: str, **body: Any) -> dict[str, Any]:
    response = server.client.post("/v1/ask", json={"question": question, **body}, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def cite_reply(ref: str) -> str:
    return f"Early signs include tingling and itching [{ref}]. It costs $40 [{ref}]."


def test_metrics_need_a_key(server: Any) -> None:
    assert server.client.get("/metrics").status_code == 401
    bad = server.client.get("/metrics", headers=server.headers("qp_nope"))
    assert bad.status_code == 401 and bad.headers["www-authenticate"] == "Bearer"


def test_no_auth_shows_every_series(server_with: Any) -> None:
    with server_with(auth=False) as server:
        ask(server, {}, "shingles rash")
        response = server.client.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        found = samples(response.text)
        labels = {"collection": "*", "mode": "quote", "status": "answered"}
        assert value(found, "quoteproof_answers_total", **labels, refusal_reason="none") == 1


def test_counters_move_once_per_answer_and_a_scoped_key_sees_only_its_own(
    server_with: Any, openai_server: ScriptedOpenAIServer
) -> None:
    url = openai_server.base_url
    with server_with(llm="openai", model="m", base_url=url) as server:
        admin = admin_headers(server)
        ref = server.client.get(
            "/v1/search", params={"q": "tingling itching"}, headers=server.a
        ).json()["hits"][0]["ref"]
        openai_server.script = [cite_reply(ref)]
        lenient = {"mode": "cite", "strictness": "lenient", "faithfulness": "deterministic"}
        first = ask(server, server.a, "early signs of shingles", **lenient)
        second = ask(server, server.a, "early signs of shingles", **lenient)
        refused = ask(server, server.b, "what is the capital of Zorblat?")
        assert refused["refusal_reason"] == "no_relevant_sources"
        before = len(openai_server.requests)
        found = samples(server.client.get("/metrics", headers=admin).text)
        a = {"collection": "A"}
        answered = {**a, "mode": "cite", "status": "answered", "refusal_reason": "none"}
        assert value(found, "quoteproof_answers_total", **answered) == 2
        b_refused = {"collection": "B", "mode": "quote", "status": "refused"}
        assert value(found, "quoteproof_answers_total", **b_refused,
                     refusal_reason="no_relevant_sources") == 1  # fmt: skip
        for histogram in ("retrieval", "model", "answer"):
            assert value(found, f"quoteproof_{histogram}_seconds_count", **a) == 2
        assert value(found, "quoteproof_model_seconds_count", collection="B") == 0
        usage = [answer["usage"] for answer in (first, second)]
        for kind in ("prompt", "completion"):
            total = sum(u[f"{kind}_tokens"] for u in usage)
            assert value(found, "quoteproof_tokens_total", **a, kind=kind) == total
        # the invented price is removed: faithfulness 1 of 2 for each answer
        assert first["faithfulness"]["score"] == 0.5
        faith = {**a, "mode": "cite", "method": "deterministic"}
        assert value(found, "quoteproof_faithfulness_count", **faith) == 2
        assert value(found, "quoteproof_faithfulness_sum", **faith) == 1.0
        assert value(found, "quoteproof_faithfulness_bucket", **faith, le="0.5") == 2
        assert value(found, "quoteproof_faithfulness_bucket", **faith, le="0.4") == 0
        # reading the metrics asks nothing and counts nothing
        again = samples(server.client.get("/metrics", headers=admin).text)
        assert value(again, "quoteproof_answers_total", **answered) == 2
        assert len(openai_server.requests) == before

        scoped = server.client.get("/metrics", headers=server.a).text
        assert 'collection="A"' in scoped
        assert 'collection="B"' not in scoped and 'collection="*"' not in scoped
        assert "no_relevant_sources" not in scoped
        other = server.client.get("/metrics", headers=server.b).text
        assert 'collection="A"' not in other and "no_relevant_sources" in other


def test_verify_failures_and_ingest_jobs_are_counted(server: Any) -> None:
    admin = admin_headers(server)
    answer = ask(server, server.a, "shingles rash")
    answer["quotes"][0]["text"] = "Shingles is harmless."
    verified = server.client.post("/v1/verify", json=answer, headers=server.a).json()
    assert verified["valid"] is False
    files = [("file", ("fish.txt", b"Zebrafish regrow fins.\n", "text/plain"))]
    job = server.client.post(
        "/v1/documents", headers=server.a, data={"collection": "A"}, files=files
    ).json()["job"]
    deadline = time.monotonic() + 60
    while server.client.get(f"/v1/jobs/{job}", headers=server.a).json()["state"] != "done":
        assert time.monotonic() < deadline, "the ingest job did not finish"
        time.sleep(0.05)
    found = samples(server.client.get("/metrics", headers=admin).text)
    assert value(found, "quoteproof_verify_failures_total", collection="A") == 1
    assert value(found, "quoteproof_ingest_jobs_total", collection="A", state="done") == 1
    assert value(found, "quoteproof_ingest_failures_total", collection="A") == 0
    assert json.dumps(answer)  # the answer itself is untouched by the counting


def test_rejection_reasons_become_few_labels() -> None:
    reason = "statement S12 cites '9cxdzv.4', which is not a retrieved source"
    assert reason_kind(reason) == "statement S… cites …, which is not a retrieved source"
    assert reason_kind('"$25.25" is not in [9cxdzv.4]') == "… is not in …"


def test_an_admin_key_sees_every_collection(server: Any) -> None:
    admin = admin_headers(server)
    listed = server.client.get("/v1/documents", headers=admin).json()["documents"]
    assert {d["collection"] for d in listed} == {"A", "B"}
    with Index.open(server.index_dir) as index, pytest.raises(UsageError, match="name none"):
        create_key(index.store, "ops", ["A"], admin=True)
    ran = cli("keys", "create", "--admin", "--name", "ops", "--index", str(server.index_dir))
    assert ran.returncode == 0, ran.stderr
    assert "for *" in ran.stderr
    token = ran.stdout.strip()
    assert server.client.get("/metrics", headers=server.headers(token)).status_code == 200
