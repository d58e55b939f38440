"""benchmarks/ann_recall.py: recall@10 of a real usearch index, built and calibrated as
the SQLite store builds its file, and of a real pgvector index (whole and filtered
searches), by search breadth. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.bench_scripts import load_script

pytest.importorskip("usearch", reason="the vector index needs usearch (the dense extra)")
ann_recall = load_script("ann_recall")


def test_recall_by_breadth_with_the_calibrated_default_marked(tmp_path: Path) -> None:
    stored, asked = ann_recall.make_data("clustered", 3000, 10)
    search, default = ann_recall.usearch_search(stored, tmp_path)
    points = list(ann_recall.sweep(search, stored, asked, [64, 1000], default))
    tried = [(mode, breadth) for mode, breadth, *_ in points]
    assert ("top 10", 64) in tried and ("depth 100", 64) not in tried  # 64 < 400 fetched
    assert [mode for mode, _, _, _, _, chosen in points if chosen] == ["top 10", "depth 100"]
    assert all(recall >= 0.95 for _, breadth, recall, *_ in points if breadth == 1000)
    random, _ = ann_recall.make_data("random", 3000, 10)
    assert nearest_cosine(stored) > 0.4 > nearest_cosine(random)  # clustered: near neighbours


def nearest_cosine(vectors: object) -> float:
    """The mean cosine of the first 50 vectors to their nearest other vector."""
    similarity = vectors[:50] @ vectors.T  # type: ignore[index, attr-defined]
    similarity[range(50), range(50)] = -1.0
    return float(similarity.max(axis=1).mean())


def test_postgres_recall_by_breadth_with_a_filtered_search(pg_database: str) -> None:
    stored, asked = ann_recall.make_data("clustered", 2000, 10)
    search = ann_recall.pgvector_search(stored, pg_database, "recall_test", iterative=True)
    modes = ann_recall.MODES | ann_recall.FILTERED
    points = list(ann_recall.sweep(search, stored, asked, [160, 1000], ann_recall.ef_search, modes))
    assert {mode for mode, *_ in points} == {"top 10", "depth 100", "1/10 rows"}
    # a tenth of the rows qualify: the answer holds only those, and near the exact top 10
    assert all(row % 10 == 0 for row in search(asked[0], 40, 160, 10))
    assert all(recall >= 0.95 for _, breadth, recall, *_ in points if breadth == 1000)
