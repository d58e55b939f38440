"""`GET /metrics` of a real `quoteproof serve --workers 2` on 127.0.0.1: once both
worker processes have answered, every scrape, whichever worker serves it, counts
every answer of the server (prometheus-client's multiprocess mode, in a directory
of the server's own that is removed when it stops), and a scoped key still sees
only its own collection's series."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2 as httpx

from conftest import write_corpus
from helpers.load import serving
from quoteproof.index import Index
from quoteproof.keys import create_key
from server.test_metrics import Samples, samples, value

ROUNDS = 10
BATCH = 8
QUESTION = "What are the early signs of shingles?"


def answers(found: Samples, collection: str) -> float:
    """The answers counted over `collection`, whatever their mode and status."""
    return sum(
        count
        for (name, labels), count in found.items()
        if name == "quoteproof_answers_total" and ("collection", collection) in labels
    )


def test_every_scrape_counts_the_answers_of_every_worker(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    heron = tmp_path / "heron" / "heron.md"
    heron.parent.mkdir()
    heron.write_text("# Herons\n\nThe grey heron nests in colonies called heronries.\n")
    with Index.open(index_dir, create=True) as index:
        index.ingest([write_corpus(tmp_path)], embed=False, collection="A")
        index.ingest([heron], embed=False, collection="B")
        key_a, _ = create_key(index.store, "alice", ["A"])
        key_b, _ = create_key(index.store, "bob", ["B"])
        admin, _ = create_key(index.store, "ops", [], admin=True)
    temp = tmp_path / "tmp"
    temp.mkdir()

    def ask(key: str, question: str) -> int:
        response = httpx.post(
            f"{url}/v1/ask",
            json={"question": question},
            headers={"Authorization": f"Bearer {key}"},
            timeout=120,
        )
        return response.status_code

    def scrape(key: str) -> str:
        response = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 200, response.text
        return response.text

    log = tmp_path / "serve.log"
    workers = ("--workers", "2")
    with serving(index_dir, tmp_path / "up", log, workers, {"TMPDIR": str(temp)}) as (url, _):
        [metrics_dir] = temp.glob("quoteproof-metrics-*")
        asked_a = 0
        with ThreadPoolExecutor(BATCH) as pool:
            for _ in range(ROUNDS):  # until both workers have counted an answer
                statuses = list(pool.map(ask, [key_a] * BATCH, [QUESTION] * BATCH))
                assert statuses == [200] * BATCH
                asked_a += BATCH
                if len(list(metrics_dir.glob("counter_*.db"))) == 2:
                    break
        assert len(list(metrics_dir.glob("counter_*.db"))) == 2, log.read_text()
        assert [ask(key_b, "Where does the grey heron nest?") for _ in range(3)] == [200] * 3

        for _ in range(10):  # each a new connection, to either worker
            found = samples(scrape(admin))
            assert answers(found, "A") == asked_a and answers(found, "B") == 3
            assert value(found, "quoteproof_answer_seconds_count", collection="A") == asked_a
            assert value(found, "quoteproof_retrieval_seconds_count", collection="B") == 3

        scoped = scrape(key_a)
        assert value(samples(scoped), "quoteproof_answer_seconds_count", collection="A") == asked_a
        assert 'collection="B"' not in scoped and 'collection="*"' not in scoped
    assert not list(temp.glob("quoteproof-metrics-*"))
