"""A bounded load run on 127.0.0.1: concurrent clients ask and search through a real
`quoteproof serve` (extractive backend) while an upload is ingested in the
background. No timing is asserted here (`benchmarks/serve.py` prints them); the run
must have no errors and lose or duplicate no document."""

from __future__ import annotations

from pathlib import Path

from conftest import write_corpus
from helpers.load import make_documents, run_load, running_server
from quoteproof import Index

CLIENTS = 8
SECONDS = 6.0
UPLOADS = 30


def test_concurrent_clients_during_a_background_ingest(tmp_path: Path) -> None:
    index = tmp_path / "index"
    with Index.open(index, create=True) as opened:
        opened.ingest([write_corpus(tmp_path)], embed=False)
    documents = make_documents(tmp_path / "uploads", UPLOADS)
    with running_server(index, tmp_path / "server.log") as url:
        report = run_load(url, documents, CLIENTS, SECONDS)
    assert report.errors == []
    assert report.requests > CLIENTS  # every client got answers
    assert set(report.latencies) == {"ask", "search"}
    assert report.job_state == "done"
    assert report.listed_after == report.listed_before + UPLOADS
    assert report.distinct_paths_after == report.listed_after
    with Index.open(index) as opened:
        assert opened.store.stats().documents == report.listed_after
        for number in (0, UPLOADS - 1):
            hits = opened.search(f"qp{number:04d}x", top_k=1)
            assert hits and f"qp{number:04d}x" in hits[0].chunk.text
