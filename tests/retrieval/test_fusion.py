"""Reciprocal Rank Fusion against hand-computed scores."""

from __future__ import annotations

import pytest

from quoteproof.model import Chunk, Hit, Via
from quoteproof.retrieval.fusion import reciprocal_rank_fusion


def chunk(ref: str) -> Chunk:
    return Chunk(ref, "d", 1, 1, 0, 1, ref, (), ref, "/d.txt")


def ranked(*refs: str) -> list[Hit]:
    return [Hit(chunk(ref), 10.0 - rank, rank) for rank, ref in enumerate(refs, start=1)]


def test_weighted_fusion_matches_the_hand_computed_example() -> None:
    # bm25 ranks a, b, c; dense ranks c, a, d; k = 60, dense weighted 0.5:
    #   a = 1/61 + 0.5/62 = 0.0163934 + 0.0080645 = 0.0244580
    #   c = 1/63 + 0.5/61 = 0.0158730 + 0.0081967 = 0.0240697
    #   b = 1/62                                  = 0.0161290
    #   d = 0.5/63                                = 0.0079365
    fused = reciprocal_rank_fusion(
        {"bm25": ranked("a", "b", "c"), "dense": ranked("c", "a", "d")},
        k=60,
        weights={"bm25": 1.0, "dense": 0.5},
    )
    assert [h.chunk.ref for h in fused] == ["a", "c", "b", "d"]
    assert [round(h.score, 7) for h in fused] == [0.024458, 0.0240697, 0.016129, 0.0079365]
    assert [h.rank for h in fused] == [1, 2, 3, 4]
    assert fused[0].via == (Via("bm25", 1, 9.0), Via("dense", 2, 8.0))
    assert fused[3].via == (Via("dense", 3, 7.0),)


def test_equal_weights_and_k_zero() -> None:
    # k = 0: a = 1/1 + 1/3 = 1.3333, b = 1/2 + 1/1 = 1.5, c = 1/3 + 1/2 = 0.8333
    fused = reciprocal_rank_fusion({"x": ranked("a", "b", "c"), "y": ranked("b", "c", "a")}, k=0)
    assert [(h.chunk.ref, round(h.score, 4)) for h in fused] == [
        ("b", 1.5),
        ("a", 1.3333),
        ("c", 0.8333),
    ]


def test_ties_break_by_best_single_rank_then_ref_and_limit_applies() -> None:
    fused = reciprocal_rank_fusion({"x": ranked("b", "a"), "y": ranked("a", "b")})
    assert [h.chunk.ref for h in fused] == ["a", "b"]  # same score, same best rank: by ref
    assert len(reciprocal_rank_fusion({"x": ranked("a", "b", "c")}, limit=2)) == 2
    assert reciprocal_rank_fusion({"x": [], "y": []}) == []


def test_zero_weight_drops_a_list_and_bad_settings_fail() -> None:
    fused = reciprocal_rank_fusion(
        {"x": ranked("a"), "y": ranked("b")}, weights={"x": 0.0, "y": 1.0}
    )
    assert [h.chunk.ref for h in fused] == ["b", "a"]
    assert fused[1].score == 0.0
    with pytest.raises(ValueError, match="k"):
        reciprocal_rank_fusion({"x": ranked("a")}, k=-1)
    with pytest.raises(ValueError, match="weights"):
        reciprocal_rank_fusion({"x": ranked("a")}, weights={"x": -1.0})
