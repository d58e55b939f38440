"""benchmarks/scale.py: its synthetic index (real text statistics, seeded vectors)
searched on a real store, and the figures and targets it reports. No timing is
asserted."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers.bench_scripts import load_script
from quoteproof.store.sqlite import SQLiteStore

scale = load_script("scale")


def test_a_small_index_is_searched_exactly_and_reproducibly(tmp_path: Path) -> None:
    first = scale.Growing("sqlite", str(tmp_path / "a"), scale.TextModel())
    assert first.grow(100) > 0
    queries = [first.question(i) for i in (0, 50, 99)]
    assert scale.dense_recall(first, queries) == 1.0  # exact search below the ANN size
    assert scale.bm25_overlap(first, queries) is None  # SQLite: FTS5 only
    assert all(first.store.search_bm25(q.text, 10) for q in queries)
    second = scale.Growing("sqlite", str(tmp_path / "b"), scale.TextModel())
    second.grow(100)
    assert [first.model.text(w) for w in first.chunks] == [
        second.model.text(w) for w in second.chunks
    ]
    first.store.close()
    second.store.close()


def test_a_kept_index_grows_on_as_one_grown_at_once(tmp_path: Path) -> None:
    kept = scale.Growing("sqlite", str(tmp_path / "kept"), scale.TextModel())
    kept.grow(100)
    kept.question(3)  # questions asked on the way do not change what is drawn next
    stopped, _, _ = kept._next_document()  # a run stopped before this one's vectors
    kept.store.add_document(stopped)
    kept.store.close()
    resumed = scale.Growing("sqlite", str(tmp_path / "kept"), scale.TextModel())
    assert len(resumed.chunks) == 120 and resumed.store.pending_embeddings() == []
    resumed.grow(200)
    at_once = scale.Growing("sqlite", str(tmp_path / "at-once"), scale.TextModel())
    at_once.grow(200)
    assert [resumed.model.text(w) for w in resumed.chunks] == [
        at_once.model.text(w) for w in at_once.chunks
    ]
    assert np.array_equal(np.stack(resumed.vectors), np.stack(at_once.vectors))
    for number in (5, 110, 199):  # stored before, by the stopped run, after
        vector = at_once.vectors[number]
        assert [h.chunk.ref for h in resumed.store.search_dense(vector, 5)] == [
            h.chunk.ref for h in at_once.store.search_dense(vector, 5)
        ]
    resumed.store.close()
    at_once.store.close()


def test_bulk_growth_builds_the_vector_index_postgresql_makes(pg_database: str) -> None:
    index = scale.Growing("postgres", pg_database, scale.TextModel(), bulk=True)
    index.grow(60)

    def hnsw() -> list[Any]:
        return index.store._db.execute(  # type: ignore[attr-defined, no-any-return]
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'embeddings_hnsw'"
        ).fetchall()

    assert hnsw() == []  # grown without it
    assert index.build_vector_index() is not None
    assert "USING hnsw (vector vector_cosine_ops)" in hnsw()[0]["indexdef"]
    assert index.build_vector_index() is None  # there already
    queries = [index.question(i) for i in (0, 30, 59)]
    assert scale.dense_recall(index, queries) == 1.0
    index.store.close()


def test_serve_memory_is_read_from_a_real_server_that_answered(tmp_path: Path) -> None:
    index = scale.Growing("sqlite", str(tmp_path / "a"), scale.TextModel())
    index.grow(100)
    index.store.close()
    questions = [index.question(i).text for i in (0, 99)]
    peak = scale.serve_rss(index.location, questions)
    assert 30 < peak < 2048  # MB: a Python web server with its index open
    store = SQLiteStore.open(tmp_path / "a")
    assert len(store.audit_entries()) == 2  # both asks were answered and recorded
    store.close()
    (tmp_path / "not-an-index").write_text("a file where the index directory should be")
    with pytest.raises(RuntimeError, match="serve failed"):
        scale.serve_rss(str(tmp_path / "not-an-index"), questions)


def test_chunk_words_follow_the_corpus_frequencies() -> None:
    model = scale.TextModel()
    draws = np.concatenate([model.chunk() for _ in range(2000)])
    assert all(60 <= len(model.chunk()) <= 160 for _ in range(100))
    assert draws.min() >= 0 and draws.max() < len(model.words)
    seen = np.bincount(draws, minlength=len(model.words)) / len(draws)
    top = np.argsort(-model.p)[:20]  # the commonest words, each drawn thousands of times
    assert seen[top] == pytest.approx(model.p[top], rel=0.1)


def test_a_serve_that_fails_leaves_the_size_s_other_figures(tmp_path: Path) -> None:
    (tmp_path / "not-an-index").write_text("a file where the index directory should be")
    peak, error = scale.serve_figure(str(tmp_path / "not-an-index"), ["a question"])
    assert peak is None and error is not None and error.startswith("serve failed")
    rows = [row("sqlite", 10_000, 10.0), row("sqlite", 100_000, 20.0, serve=None)]
    rows[1].serve_error = error
    assert scale.line(rows[1]).endswith("  failed")
    assert scale.line(rows[0]).endswith("     300")
    rows[0].ingest_per_s = None  # a size a kept index already held
    assert scale.line(rows[0]).startswith("sqlite       10,000     kept ")
    assert "serve RSS failed, disk 1.00x" in scale.growth_lines(rows)[0]
    out = scale.figures(rows)
    assert out.notes[0] == f"sqlite 100,000: serve failed: {error}"
    served = {f.name: f.value for f in out.figures if "serve" in f.name}
    assert served == {
        "sqlite 10,000: serve peak RSS, MB": 300.0,
        "sqlite 100,000: serve peak RSS, MB": None,
    }
    assert out.data[1]["hybrid_p95"] == 20.0 and out.data[1]["serve_error"] == error


class SlowHealth(BaseHTTPRequestHandler):
    """Answers 200 after `delay` seconds, as a server opening a large index does."""

    delay = 0.0

    def do_GET(self) -> None:
        time.sleep(self.delay)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slow_health() -> Iterator[str]:
    """The URL of a server whose health check takes 3 s to answer."""
    handler = type("Slow", (SlowHealth,), {"delay": 3.0})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_slow_health_check_is_waited_for(
    slow_health: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = time.monotonic()
        scale._wait_healthy(slow_health, process)  # one check, answered after 3 s
        assert 3.0 <= time.monotonic() - started < scale.HEALTH_WAIT_S
        monkeypatch.setattr(scale, "HEALTH_WAIT_S", 1.0)
        monkeypatch.setattr(scale, "SERVE_START_S", 2.5)
        with pytest.raises(RuntimeError, match="did not start"):
            scale._wait_healthy(slow_health, process)  # each check gives up after 1 s
    finally:
        process.kill()
        process.wait()


def row(
    store: str, chunks: int, hybrid_p95: float, rss: float = 300.0, serve: float | None = 300.0
) -> Any:
    return scale.Row(
        store, chunks, 100.0, 10.0, 1, 2, 1, 2, 3, hybrid_p95, 1.0, 1.0, None, 2.0, rss, rss, serve
    )


def test_targets_are_checked_at_1m_only_and_growth_is_reported() -> None:
    small = [row("sqlite", 10_000, 10.0), row("sqlite", 100_000, 20.0)]
    out = scale.figures(small)
    assert all(out.targets.values()) and len(out.targets) == 2  # ask RSS at each size
    assert out.notes == ["1M chunks not run (--sizes ...,1000000): the 1M targets are not checked"]
    assert scale.growth_lines(small)[0].startswith(
        "sqlite 10,000 -> 100,000 (10x): hybrid p95 2.00x"
    )
    big = [*small, row("sqlite", 1_000_000, 80.0, rss=2000.0)]
    targets = scale.figures(big).targets
    assert targets["sqlite 1,000,000: hybrid p95 <= 500 ms"]
    assert not targets["sqlite 1,000,000: hybrid p95 growth <= 3x"]  # 4x
    assert not targets["sqlite 1,000,000: ask peak RSS <= 1024 MB"]
