"""Reciprocal Rank Fusion of ranked lists (a pure function).

A chunk's fused score is the sum, over the lists that contain it, of
`weight / (k + rank)`; a list that misses the chunk adds nothing. k = 60 is the
value of Cormack, Clarke and Büttcher (SIGIR 2009).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quoteproof.defaults import DEFAULT_RRF_K as DEFAULT_RRF_K
from quoteproof.model import Chunk, Hit, Via


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[Hit]],
    *,
    k: int = DEFAULT_RRF_K,
    weights: Mapping[str, float] | None = None,
    limit: int | None = None,
) -> list[Hit]:
    """Fuse named ranked lists into one, best first, keeping at most `limit` hits.

    `rankings` maps a retriever name to its hits (ranks taken from `Hit.rank`);
    `weights` gives each list's weight (1.0 when absent). Each fused hit's `via`
    records its rank and score in every list that had it, in `rankings` order.
    Ties are broken by the best single-list rank, then by ref, so the result is
    deterministic. Raises ValueError for k < 0 or a negative weight.
    """
    if k < 0:
        raise ValueError(f"RRF k must be at least 0, got {k}")
    weights = weights or {}
    if any(w < 0 for w in weights.values()):
        raise ValueError(f"RRF weights must not be negative, got {dict(weights)}")
    scores: dict[str, float] = {}
    chunks: dict[str, Chunk] = {}
    vias: dict[str, list[Via]] = {}
    for name, hits in rankings.items():
        weight = weights.get(name, 1.0)
        for hit in hits:
            ref = hit.chunk.ref
            scores[ref] = scores.get(ref, 0.0) + weight / (k + hit.rank)
            chunks.setdefault(ref, hit.chunk)
            vias.setdefault(ref, []).append(Via(name, hit.rank, hit.score))
    order = sorted(scores, key=lambda ref: (-scores[ref], min(v.rank for v in vias[ref]), ref))
    if limit is not None:
        order = order[:limit]
    return [
        Hit(chunks[ref], scores[ref], rank, tuple(vias[ref]))
        for rank, ref in enumerate(order, start=1)
    ]
