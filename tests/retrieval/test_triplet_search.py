"""Triplet search: exact, normalised and fuzzy entity matches of the question's
phrases, one hop along the relations, ranked; and RRF fusion with paragraph hits."""

from __future__ import annotations

from pathlib import Path

from quoteproof.model import Chunk, Hit
from quoteproof.retrieval.triplets import fuse_context, search_triplets
from quoteproof.store.kg import NewTriplet
from quoteproof.store.sqlite import SQLiteStore

GRAPH = [
    NewTriplet("Remdesivir", "adverse_reaction", "transaminase elevations", 2),
    NewTriplet("transaminase elevations", "monitored_by", "liver function tests", 3),
    NewTriplet("Remdesivir", "interacts_with", "hydroxychloroquine", 4),
    NewTriplet("Aspirin", "treats", "pain", 5),
]


def store(tmp_path: Path) -> SQLiteStore:
    opened = SQLiteStore.open(tmp_path / "idx", create=True)
    opened.import_triplets("default", "g.csv", GRAPH)
    opened.import_triplets("other", "g.csv", [NewTriplet("Remdesivir", "secret", "x", 2)])
    return opened


def found(tmp_path: Path, question: str, limit: int = 10) -> list[tuple[str, str, str]]:
    hits = search_triplets(store(tmp_path), question, limit, ["default"])
    return [(h.triplet.relation, h.match, h.entity) for h in hits]


def test_exact_match_then_one_hop_ranked_by_relation(tmp_path: Path) -> None:
    assert found(tmp_path, "What adverse reactions does remdesivir have?") == [
        ("adverse_reaction", "exact", "remdesivir"),
        ("interacts_with", "exact", "remdesivir"),
        ("monitored_by", "hop", "transaminase elevations"),
    ]


def test_normalised_and_fuzzy_entity_matches(tmp_path: Path) -> None:
    assert found(tmp_path, "How is a transaminase elevation monitored?")[0] == (
        "monitored_by",
        "normalized",
        "transaminase elevations",
    )
    assert found(tmp_path, "Does remdesivr interact with anything?", 1) == [
        ("interacts_with", "fuzzy", "remdesivir")
    ]


def test_no_entity_named_finds_nothing_and_scope_holds(tmp_path: Path) -> None:
    assert found(tmp_path, "What is the capital of France?") == []
    assert "secret" not in [relation for relation, _, _ in found(tmp_path, "remdesivir")]


def test_fusion_keeps_the_best_of_both_lists(tmp_path: Path) -> None:
    triplets = search_triplets(store(tmp_path), "remdesivir adverse reactions", 10, ["default"])
    chunks = [Chunk(f"r.{n}", "d", 1, n, 0, 1, "x", (), "L", "/p") for n in range(1, 5)]
    hits = [Hit(chunk, 1.0, rank) for rank, chunk in enumerate(chunks, start=1)]
    paragraphs, facts = fuse_context(hits, triplets, 4)
    assert [h.rank for h in paragraphs] == [1, 2] and [t.rank for t in facts] == [1, 2]
    only, none = fuse_context(hits[:1], triplets, 1)
    assert [h.rank for h in only] == [1] and none == []
