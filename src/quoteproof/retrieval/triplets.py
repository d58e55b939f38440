"""Triplet search: the knowledge-graph triplets whose entities the question names,
and those one hop away, ranked; and their fusion with paragraph hits (RRF).

The question's phrases (runs of 1 to `MAX_PHRASE_WORDS` words that are not all
stopwords) are matched against the entity keys of the triplets in scope
(`store.kg.entity_key`): *exact* when a phrase's key is the entity's key (1.0),
*normalized* when they agree word by word after stemming ("transaminase
elevations" / "transaminase elevation", 0.9), *fuzzy* when their similarity
(rapidfuzz `ratio`) is at least `FUZZY_CUTOFF` for keys of 5 characters or more
(a misspelt drug name, 0.8 times the similarity). A triplet's score is the sum of
the scores of its matched subject and object, plus up to 0.3 for the question's
words its relation holds. Then one hop: the triplets that share an entity with a
matched triplet score half of that triplet's score, plus the same for their
relation. Ties are broken by collection,
graph file and row, so the order is deterministic.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from quoteproof.defaults import DEFAULT_RRF_K
from quoteproof.model import EntityMatch, Hit, Triplet
from quoteproof.store.base import Store
from quoteproof.store.kg import entity_key
from quoteproof.terms import STOPWORDS, stem, stems, words

__all__ = [
    "FUZZY_CUTOFF",
    "MAX_PHRASE_WORDS",
    "EntityMatch",
    "TripletHit",
    "fuse_context",
    "search_triplets",
]

MAX_PHRASE_WORDS = 4
FUZZY_CUTOFF = 88.0
_FUZZY_MIN_CHARS = 5
_RELATION_WEIGHT = 0.3
_HOP_FACTOR = 0.5


@dataclass(frozen=True)
class TripletHit:
    """A triplet found for a question: its score (higher is better), rank (1-based),
    how it was found (`match`: the best entity match, or `hop`) and the entity key
    through which it was found."""

    triplet: Triplet
    score: float
    rank: int
    match: EntityMatch
    entity: str


def _phrases(question: str) -> dict[str, int]:
    """The keys of the question's phrases, each with its word count."""
    tokens = words(question)
    phrases: dict[str, int] = {}
    for size in range(1, MAX_PHRASE_WORDS + 1):
        for start in range(len(tokens) - size + 1):
            run = tokens[start : start + size]
            if all(word in STOPWORDS for word in run):
                continue
            key = entity_key(" ".join(run))
            if key:
                phrases.setdefault(key, size)
    return phrases


def _stemmed(key: str) -> str:
    return " ".join(stem(word) for word in key.split())


def _entity_scores(question: str, entities: Sequence[str]) -> dict[str, tuple[float, EntityMatch]]:
    """The entities the question names, each with its best score and match kind."""
    phrases = _phrases(question)
    stems: dict[str, int] = {}
    for phrase, size in phrases.items():
        stems.setdefault(_stemmed(phrase), size)
    found: dict[str, tuple[float, EntityMatch]] = {}

    def keep(entity: str, score: float, kind: EntityMatch) -> None:
        if entity not in found or found[entity][0] < score:
            found[entity] = (score, kind)

    long_phrases = [p for p in phrases if len(p) >= _FUZZY_MIN_CHARS]
    for entity in entities:
        if not entity or entity in STOPWORDS:
            continue
        if entity in phrases:
            keep(entity, 1.0 + 0.01 * phrases[entity], "exact")
            continue
        stemmed = _stemmed(entity)
        if stemmed in stems:
            keep(entity, 0.9 + 0.01 * stems[stemmed], "normalized")
            continue
        if len(entity) >= _FUZZY_MIN_CHARS and long_phrases:
            best = process.extractOne(
                entity, long_phrases, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF
            )
            if best is not None:
                keep(entity, 0.8 * best[1] / 100, "fuzzy")
    return found


def _relation_score(relation: str, question_stems: set[str]) -> float:
    parts = [stem(w) for w in words(relation.replace("_", " ")) if w not in STOPWORDS]
    if not parts:
        return 0.0
    return _RELATION_WEIGHT * sum(p in question_stems for p in parts) / len(parts)


def _order(triplet: Triplet) -> tuple[str, str, int]:
    return (triplet.collection, triplet.graph_file, triplet.row)


def search_triplets(
    store: Store, question: str, limit: int, collections: Collection[str] | None = None
) -> list[TripletHit]:
    """The `limit` best current triplets of `collections` (all when None) for
    `question`, best first (see the module docstring); [] when the question names no
    entity of the graph."""
    entities = _entity_scores(question, store.triplet_entities(collections))
    if not entities or limit <= 0:
        return []
    question_stems = stems(question)
    scored: dict[str, tuple[float, EntityMatch, str, Triplet]] = {}
    for triplet in store.triplets_with_entities(entities, collections):
        ends = [
            (entities[key], key)
            for key in (entity_key(triplet.subject), entity_key(triplet.object))
            if key in entities
        ]
        (_, kind), entity = max(ends, key=lambda end: end[0][0])
        score = sum(s for (s, _), _ in ends) + _relation_score(triplet.relation, question_stems)
        scored[triplet.triplet_id] = (score, kind, entity, triplet)
    reached: dict[str, float] = {}
    for score, _, _, triplet in scored.values():
        for key in (entity_key(triplet.subject), entity_key(triplet.object)):
            if key not in entities:
                reached[key] = max(reached.get(key, 0.0), score * _HOP_FACTOR)
    for triplet in store.triplets_with_entities(reached, collections):
        if triplet.triplet_id in scored:
            continue
        key = next(
            k for k in (entity_key(triplet.subject), entity_key(triplet.object)) if k in reached
        )
        score = reached[key] + _relation_score(triplet.relation, question_stems)
        scored[triplet.triplet_id] = (score, "hop", key, triplet)
    ranked = sorted(scored.values(), key=lambda item: (-item[0], _order(item[3])))[:limit]
    return [
        TripletHit(triplet, score, rank, kind, entity)
        for rank, (score, kind, entity, triplet) in enumerate(ranked, start=1)
    ]


def fuse_context(
    hits: Sequence[Hit], triplets: Sequence[TripletHit], limit: int, k: int = DEFAULT_RRF_K
) -> tuple[list[Hit], list[TripletHit]]:
    """The paragraphs and triplets kept for a context of at most `limit` items of
    both kinds: the two rankings fused by Reciprocal Rank Fusion (each item scores
    1 / (k + rank) in its own list; ties go to the paragraph), cut to `limit`,
    keeping at least the best paragraph when there is one. Each kind keeps its own
    order."""
    scored = [(1 / (k + hit.rank), 0, i) for i, hit in enumerate(hits)]
    scored += [(1 / (k + hit.rank), 1, i) for i, hit in enumerate(triplets)]
    kept = sorted(scored, key=lambda item: (-item[0], item[1], item[2]))[: max(limit, 1)]
    paragraphs = sorted(i for _, kind, i in kept if kind == 0)
    facts = sorted(i for _, kind, i in kept if kind == 1)
    if hits and not paragraphs:
        paragraphs = [0]
    return [hits[i] for i in paragraphs], [triplets[i] for i in facts]
