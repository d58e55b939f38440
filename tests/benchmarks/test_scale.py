"""benchmarks/scale.py: its synthetic index (real text statistics, seeded vectors)
searched on a real store, and the figures and targets it reports. No timing is
asserted."""

from __future__ import annotations

from pathlib import Path

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


def row(store: str, chunks: int, hybrid_p95: float, rss: float = 300.0) -> object:
    return scale.Row(
        store, chunks, 100.0, 10.0, 1, 2, 1, 2, 3, hybrid_p95, 1.0, 1.0, None, 2.0, rss, rss, rss
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
