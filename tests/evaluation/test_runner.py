"""Tests for quoteproof.evaluation.runner.run_eval against a real index."""

from __future__ import annotations

from pathlib import Path

import pytest

from quoteproof import Index
from quoteproof.evaluation.evalset import EvalItem
from quoteproof.evaluation.runner import AskOptions, ItemResult, run_eval


def test_run_eval_calls_back_and_scores_every_item(session_index_dir: Path) -> None:
    items = [
        EvalItem("sign", "What is the first sign of shingles?", True, ("shingles.md",),
                 ("burning or tingling pain",)),
        EvalItem("none", "Which moon of Jupiter is largest?", False),
    ]  # fmt: skip
    started: list[int] = []
    done: list[ItemResult] = []
    with Index.open(session_index_dir) as index:
        run = run_eval(
            index,
            items,
            AskOptions(top_k=3),
            recall_ks=[1, 10],
            on_start=started.append,
            on_item=done.append,
        )
        with pytest.raises(ValueError, match="at least 1"):
            run_eval(index, items, recall_ks=[0])
    assert started == [2] and [r.item.id for r in done] == ["sign", "none"]
    assert run.items == tuple(done) and run.ks == (1, 3, 10) and run.depth == 10
    sign, none = run.items
    assert sign.status == "answered" and sign.scores.ranks == {"shingles.md": 1}
    assert sign.scores.overlap is not None and sign.scores.overlap.covered_chars == 24
    assert none.status == "refused" and none.scores.ranks is None
    metrics = run.metrics
    assert metrics.verbatim_rate == 1.0 and metrics.quote_recall == 1.0
    assert metrics.retrieval_recall == {1: 1.0, 3: 1.0, 10: 1.0}
    assert metrics.refusal_correct == 1.0 and metrics.false_refusal_rate == 0.0
    assert metrics.prompt_tokens is None and metrics.latency_p50_ms is not None
