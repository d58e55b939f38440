"""Two `quoteproof serve` processes (one of them with `--workers 2`) on 127.0.0.1
sharing one PostgreSQL index, as two hosts sharing a database would: a login and
its form token from one work on the other, an upload accepted by one is followed
(and found) through the other, answers asked of both at once make one
unbroken, signed audit chain, and a refusal threshold set while both run applies
on both."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx2 as httpx

from conftest import write_corpus
from helpers.load import serving
from quoteproof.audit import verify_log
from quoteproof.index import Index
from quoteproof.keys import create_key
from quoteproof.retrieval.evidence import BM25_COVERAGE, Calibration, save_calibration

SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin"}
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def form_token(url: str, cookie: str) -> str:
    """The form token the ask page of `url` (or the login page it sends to) carries
    for the login `cookie`."""
    page = httpx.get(f"{url}/", headers={"Cookie": cookie}, timeout=30, follow_redirects=True)
    assert page.status_code == 200, page.text
    found = TOKEN.search(page.text)
    assert found is not None, page.text
    return found.group(1)


def finished(url: str, job: str, auth: dict[str, str]) -> dict[str, Any]:
    """The job as `url` reports it once it has ended."""
    deadline = time.monotonic() + 120
    while True:
        response = httpx.get(f"{url}/v1/jobs/{job}", headers=auth, timeout=30)
        assert response.status_code == 200, response.text
        record: dict[str, Any] = response.json()
        if record["state"] in ("done", "failed"):
            return record
        assert time.monotonic() < deadline, record
        time.sleep(0.2)


def test_two_servers_share_sessions_jobs_and_the_audit_chain(
    pg_database: str, tmp_path: Path
) -> None:
    with Index.open(pg_database, create=True) as index:
        index.ingest([write_corpus(tmp_path)], embed=False, collection="A")
        key, _ = create_key(index.store, "alice", ["A"])
    auth = {"Authorization": f"Bearer {key}"}
    log = tmp_path / "serve.log"
    with ExitStack() as stack:
        first, _ = stack.enter_context(
            serving(pg_database, tmp_path / "up-1", log, ("--workers", "2"))
        )
        second, _ = stack.enter_context(serving(pg_database, tmp_path / "up-2", log))

        # a login made on one server is a session on the other, with the same form token
        login_token = form_token(first, "")
        login = httpx.post(
            f"{first}/login",
            data={"key": key, "next": "/", "csrf_token": login_token},
            headers=SAME_ORIGIN,
            timeout=30,
        )
        assert login.status_code == 303, login.text
        cookie = f"qp_key={login.cookies['qp_key']}"
        token = form_token(first, cookie)
        assert form_token(second, cookie) == token
        asked = httpx.post(
            f"{second}/ask",
            data={"question": "What are the early signs of shingles?", "csrf_token": token},
            headers={**SAME_ORIGIN, "Cookie": cookie},
            timeout=60,
        )
        assert asked.status_code == 200, asked.text
        forged = httpx.post(
            f"{second}/ask",
            data={"question": "What are the early signs of shingles?", "csrf_token": "x" + token},
            headers={**SAME_ORIGIN, "Cookie": cookie},
            timeout=60,
        )
        assert forged.status_code == 403

        # an upload accepted by the first server is followed through the second
        note = b"# Heron note\n\nThe grey heron nests in colonies called heronries.\n"
        upload = httpx.post(
            f"{first}/v1/documents",
            files=[("file", ("heron.md", note, "text/markdown"))],
            data={"collection": "A"},
            headers=auth,
            timeout=60,
        )
        assert upload.status_code == 202, upload.text
        job = finished(second, upload.json()["job"], auth)
        assert job["state"] == "done" and [r["status"] for r in job["results"]] == ["added"]
        found = httpx.get(f"{second}/v1/search", params={"q": "heronries"}, headers=auth)
        assert "heronries" in found.text

        # answers asked of both servers at once chain into one log
        def ask(url: str) -> int:
            question = {"question": "How is shingles treated?"}
            return httpx.post(f"{url}/v1/ask", json=question, headers=auth, timeout=120).status_code

        with ThreadPoolExecutor(6) as pool:
            statuses = list(pool.map(ask, [first, second] * 6))
        assert statuses == [200] * 12

        # a refusal threshold calibrated while both run applies on both at once
        def status(url: str) -> str:
            question = {"question": "How is shingles treated?"}
            answer = httpx.post(f"{url}/v1/ask", json=question, headers=auth, timeout=120)
            assert answer.status_code == 200, answer.text
            return str(answer.json()["status"])

        assert {status(first), status(second)} == {"answered"}
        with Index.open(pg_database) as index:
            save_calibration(index.store, Calibration(BM25_COVERAGE, 1.5, 1, 1, 0, 0))
        assert [status(url) for url in (first, second, first)] == ["refused"] * 3

    with Index.open(pg_database) as index:
        check = verify_log(index.store, index.signing_key())
        assert check.intact and check.entries == 18, check.problems
