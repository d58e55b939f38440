"""PDF pages for the source viewer are rendered in limited child processes: a page
too costly to render is refused within its budget (and not tried again), a page
asked for by many at once is rendered once, and one document's costly page does
not hold another document's."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from helpers.pdfs import report_pdf, strokes_pdf
from quoteproof.index import Index
from quoteproof.limited_call import Limits
from quoteproof.server import pdf_pages
from quoteproof.server.app import create_app
from quoteproof.server.state import ServerConfig


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """A no-auth app on an index of a costly page (`costly.pdf`: 150,000 strokes
    across the page, about ten seconds of CPU time to render), a page that takes
    about a second (`busy.pdf`) and an ordinary report."""
    (tmp_path / "costly.pdf").write_bytes(strokes_pdf(150_000))
    (tmp_path / "busy.pdf").write_bytes(strokes_pdf(15_000))
    (tmp_path / "report.pdf").write_bytes(report_pdf())
    location = tmp_path / "index"
    with Index.open(location, create=True) as index:
        results = index.ingest(sorted(tmp_path.glob("*.pdf")), embed=False)
    assert [r.status for r in results] == ["added"] * 3
    config = ServerConfig(
        index=str(location), upload_dir=tmp_path / "uploads", embed=False, auth=False
    )
    with TestClient(create_app(config)) as test_client:
        yield test_client


def page_url(client: TestClient, name: str, page: int) -> str:
    (doc,) = [
        d
        for d in client.get("/v1/documents").json()["documents"]
        if d["source_path"].endswith(name)
    ]
    return f"/sources/{doc['doc_id']}/pages/{page}.png"


def test_a_page_past_its_render_budget_is_refused_and_not_tried_again(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pdf_pages, "RENDER_LIMITS", Limits(512 * 2**20, 1, 60))
    url = page_url(client, "costly.pdf", 1)
    renders = pdf_pages.renderer.renders
    response = client.get(url)
    assert response.status_code == 422
    assert response.text == "page 1 is not shown: it needs more than 1 s of CPU time (the limit)"
    assert client.get(url).text == response.text
    assert pdf_pages.renderer.renders == renders + 1


def test_a_page_asked_for_by_many_at_once_is_rendered_once(client: TestClient) -> None:
    # 45 requests for one uncached page rendered it 45 times.
    url = page_url(client, "busy.pdf", 1)
    renders = pdf_pages.renderer.renders
    with ThreadPoolExecutor(12) as pool:
        responses = list(pool.map(client.get, [url] * 12))
    assert {r.status_code for r in responses} == {200}
    assert len({r.content for r in responses}) == 1
    assert pdf_pages.renderer.renders == renders + 1


def test_a_costly_page_does_not_hold_another_documents_page(client: TestClient) -> None:
    # A page of a million strokes rendered in 22 s under the process's PDFium lock,
    # and another document's page waited 21.8 s.
    costly, other = page_url(client, "costly.pdf", 1), page_url(client, "report.pdf", 2)
    renders = pdf_pages.renderer.renders
    costly_done = threading.Event()

    def get_costly() -> None:
        client.get(costly)
        costly_done.set()

    threading.Thread(target=get_costly, daemon=True).start()
    deadline = time.monotonic() + 60
    while pdf_pages.renderer.renders == renders:  # the costly page's render has begun
        assert time.monotonic() < deadline
        time.sleep(0.01)
    response = client.get(other)
    assert response.status_code == 200 and response.content.startswith(b"\x89PNG")
    assert not costly_done.is_set()
    assert costly_done.wait(120)
