"""Request forgery (quoteproof.server.csrf, auth.cross_origin): no GET changes
anything, and every request of the web page that does (asking, streamed or not,
uploading, deleting, logging in or out) needs the page's form token and must come
from the page's own origin, another port of the same host being another origin.

`server` (see conftest) serves collections A and B with a key for each.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from helpers.forms import FIELD, form_token, with_token
from helpers.pdfs import report_pdf
from quoteproof.server import api, web
from quoteproof.store.sqlite import DB_FILENAME

QUESTION = "What are the early signs of shingles?"
BROWSER_SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin", "Origin": "http://testserver"}


def snapshot(server: Any) -> tuple[list[str], list[Path]]:
    """Everything a request could change: every row of the index database (the
    audit log, documents, keys, settings) and the files under the upload folder."""
    with sqlite3.connect(server.index_dir / DB_FILENAME) as db:
        rows = list(db.iterdump())
    db.close()
    uploads = server.upload_dir
    files = sorted(p for p in uploads.rglob("*")) if uploads.exists() else []
    return rows, files


def audit_count(server: Any) -> int:
    with sqlite3.connect(server.index_dir / DB_FILENAME) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        table = next(name for name in tables if "audit" in name)
        (count,) = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
    db.close()
    return int(count)


def finished_job(server: Any, job_id: str) -> dict[str, Any]:
    """The job's state once it has ended."""
    deadline = time.monotonic() + 60
    while True:
        job: dict[str, Any] = server.client.get(f"/v1/jobs/{job_id}", headers=server.a).json()
        if job["state"] in ("done", "failed"):
            return job
        assert time.monotonic() < deadline
        time.sleep(0.05)


# --- no GET changes anything ----------------------------------------------------------

GET_ROUTES: dict[str, str] = {
    # every GET route: a URL that reaches it with A's items (`{doc}`, `{pdf}`, `{entry}`,
    # `{job}`)
    "/openapi.json": "/openapi.json",
    "/docs": "/docs",
    "/v1/answers/{answer_id}": "/v1/answers/{entry}",
    "/v1/search": "/v1/search?q=shingles",
    "/v1/sources/{doc_id}": "/v1/sources/{doc}?start=0&end=10",
    "/v1/documents": "/v1/documents",
    "/v1/jobs/{job_id}": "/v1/jobs/{job}",
    "/v1/health": "/v1/health",
    "/v1/version": "/v1/version",
    "/": "/",
    "/sources/{doc_id}": "/sources/{doc}?start=0&end=10",
    "/sources/{doc_id}/pages/{page}.png": "/sources/{pdf}/pages/1.png",
    "/library": "/library?job={job}",
    "/library/table": "/library/table",
    "/library/jobs/{job_id}": "/library/jobs/{job}",
    "/library/{doc_id}/retire": "/library/{doc}/retire",
    "/history": "/history",
    "/answers/{entry_id}": "/answers/{entry}?cited=1",
    "/login": "/login?next=/history",
}

FORMER_WRITES = [
    # what asked or wrote before, or would with a GET: each must now change nothing
    "/ask/stream?question=shingles&mode=quote",
    "/ask?question=shingles",
    "/library/upload",
    "/logout",
]


def get_routes(client: TestClient) -> set[str]:
    """The paths of every route that answers GET (the API, the web page, the app's own)."""
    routes = [*client.app.routes, *api.router.routes, *web.router.routes]  # type: ignore[attr-defined]
    return {route.path for route in routes if "GET" in (getattr(route, "methods", None) or ())}


def test_every_get_route_is_listed(server: Any) -> None:
    assert get_routes(server.client) == set(GET_ROUTES), (
        "a GET route was added or removed: list it in GET_ROUTES (and make sure it changes nothing)"
    )


@pytest.mark.parametrize("auth", ["bearer", "cookie"])
def test_no_get_asks_ingests_or_writes(server: Any, auth: str) -> None:
    client = server.client
    asked = client.post("/v1/ask", json={"question": QUESTION}, headers=server.a)
    job = client.post(
        "/v1/documents",
        headers=server.a,
        data={"collection": "A"},
        files=[("file", ("report.pdf", report_pdf(), "application/pdf"))],
    ).json()["job"]
    (pdf,) = [result["doc_id"] for result in finished_job(server, job)["results"]]
    entry = asked.headers["x-answer-id"]
    items = {"doc": server.a_doc, "pdf": pdf, "entry": entry, "job": job}
    headers = server.a if auth == "bearer" else {}
    if auth == "cookie":
        client.cookies.set("qp_key", server.key_a)
    before = snapshot(server)
    for path, url in GET_ROUTES.items():
        response = client.get(url.format(**items), headers=headers)
        assert response.status_code == 200, (path, response.status_code, response.text[:200])
    for url in ["/static/app.js", *FORMER_WRITES]:
        site = {"Sec-Fetch-Site": "same-site"} if "?" in url else {}
        response = client.get(url.format(**items), headers={**headers, **site})
        assert response.status_code in (200, 405), (url, response.status_code)
    assert snapshot(server) == before


# --- every web POST needs the page's token, from the page's origin ---------------------

WEB_POSTS: dict[str, tuple[str, Callable[[Any], dict[str, Any]]]] = {
    # route: (URL, the request's other arguments, given the server)
    "ask": ("/ask", lambda s: {"data": {"question": QUESTION}}),
    "ask/stream": ("/ask/stream", lambda s: {"data": {"question": QUESTION}}),
    "upload": (
        "/library/upload",
        lambda s: {
            "data": {"collection": "A"},
            "files": [("file", ("planted.txt", b"Planted text.", "text/plain"))],
        },
    ),
    "retire": ("/library/{doc}/retire", lambda s: {"data": {}}),
    "login": ("/login", lambda s: {"data": {"key": s.key_b}}),
    "logout": ("/logout", lambda s: {"data": {}}),
}


@pytest.fixture
def cookie_client(server: Any) -> Iterator[TestClient]:
    """The server's client logged in as A by cookie (the ambient authority a forged
    request would ride on)."""
    server.client.cookies.set("qp_key", server.key_a)
    yield server.client
    server.client.cookies.clear()


def forged_requests(token_a: str, token_b: str) -> dict[str, tuple[dict[str, str], str | None]]:
    """Ways a request can fail to be the page's own: headers and the token sent."""
    return {
        "no token": (BROWSER_SAME_ORIGIN, None),
        "empty token": (BROWSER_SAME_ORIGIN, ""),
        "another key's token": (BROWSER_SAME_ORIGIN, token_b),
        "same site (another port)": ({"Sec-Fetch-Site": "same-site"}, token_a),
        "cross site": ({"Sec-Fetch-Site": "cross-site"}, token_a),
        "origin on another port": ({"Origin": "http://testserver:8001"}, token_a),
        "null origin": ({"Origin": "null"}, token_a),
    }


@pytest.mark.parametrize("route", list(WEB_POSTS))
def test_a_web_post_without_the_pages_token_or_origin_changes_nothing(
    server: Any, cookie_client: TestClient, route: str
) -> None:
    url, arguments = WEB_POSTS[route]
    token_a = form_token(cookie_client)
    token_b = form_token(cookie_client, server.b)
    assert token_a != token_b
    before = snapshot(server)
    for name, (headers, token) in forged_requests(token_a, token_b).items():
        request = arguments(server)
        if token is not None:
            request["data"] = {**request["data"], FIELD: token}
        response = cookie_client.post(
            url.format(doc=server.a_doc), headers=headers, follow_redirects=False, **request
        )
        assert response.status_code == 403, (name, response.status_code, response.text[:200])
        assert "set-cookie" not in response.headers, name  # neither logged in nor out
    assert snapshot(server) == before
    # the page's own request, with its token, goes through
    request = arguments(server)
    request["data"] = {**request["data"], FIELD: token_a}
    response = cookie_client.post(
        url.format(doc=server.a_doc),
        headers=BROWSER_SAME_ORIGIN,
        follow_redirects=False,
        **request,
    )
    assert response.status_code in (200, 303), (response.status_code, response.text[:200])


def test_the_streamed_ask_is_a_post_with_the_token(server: Any, cookie_client: TestClient) -> None:
    before = audit_count(server)
    url = "/ask/stream?question=shingles&mode=quote"
    for site in ("same-site", "cross-site", "same-origin"):
        response = cookie_client.get(url, headers={"Sec-Fetch-Site": site})
        assert response.status_code == 405
    assert audit_count(server) == before
    data = with_token(cookie_client, {"question": QUESTION, "mode": "quote"})
    with cookie_client.stream(
        "POST", "/ask/stream", data=data, headers=BROWSER_SAME_ORIGIN
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    assert "event: final" in text and "/answers/" in text
    assert audit_count(server) == before + 1


def test_no_auth_refuses_a_same_site_stream(server_with: Any) -> None:
    with server_with(auth=False) as server:
        client = server.client
        before = audit_count(server)
        data = with_token(client, {"question": QUESTION})
        for headers in ({"Sec-Fetch-Site": "same-site"}, {"Origin": "http://127.0.0.1:9"}):
            assert client.post("/ask/stream", data=data, headers=headers).status_code == 403
        assert client.post("/ask/stream", data={"question": QUESTION}).status_code == 403
        response = client.get(
            "/ask/stream?question=shingles", headers={"Sec-Fetch-Site": "same-site"}
        )
        assert response.status_code == 405
        assert audit_count(server) == before
        assert client.post("/ask/stream", data=data, headers=BROWSER_SAME_ORIGIN).status_code == 200
        assert audit_count(server) == before + 1
