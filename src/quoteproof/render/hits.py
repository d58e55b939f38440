"""Rendering search hits: JSON-ready dicts, the batch JSONL form, and a terminal table;
and the knowledge-graph triplets a search matches, as facts (never as quotes).

Scores are shown with four significant digits (`score_text`): a fused (RRF) score
is small (about 0.03 for a chunk first in two lists) and a BM25 score of a word in
most chunks is tiny, so two decimals would show the same "0.03" or "0.00" for every
hit. A fused hit also says how each retriever ranked it (`via_text`).
"""

from __future__ import annotations

import re
from typing import Any

from rich.table import Table
from rich.text import Text
from typing_extensions import TypedDict

from quoteproof.model import EntityMatch, FactOrigin, Hit, Via
from quoteproof.render.visible import visible_line
from quoteproof.retrieval.triplets import TripletHit
from quoteproof.terms import query_stems, stem

SNIPPET_CHARS = 160
SNIPPET_LEAD = 30
"""Characters a query-biased snippet shows before its first matching word."""
_WORD = re.compile(r"\w+")


def hit_to_dict(hit: Hit, *, with_text: bool = False) -> dict[str, Any]:
    """Return a hit as `{"ref", "doc_id", "source_path", "score"}` (+ label, rank, text)."""
    data: dict[str, Any] = {
        "ref": hit.chunk.ref,
        "doc_id": hit.chunk.doc_id,
        "source_path": hit.chunk.source_path,
        "score": round(hit.score, 6),
    }
    if with_text:
        data.update(rank=hit.rank, label=hit.chunk.label, text=hit.chunk.text)
        data["via"] = [_via_to_dict(via) for via in hit.via]
    return data


def _via_to_dict(via: Via) -> dict[str, Any]:
    return {"retriever": via.retriever, "rank": via.rank, "score": round(via.score, 6)}


def score_text(score: float) -> str:
    """`score` with four significant digits: `12.79`, `0.03279`, `1e-06`."""
    return f"{score:.4g}"


def score_source(hit: Hit) -> str:
    """What gave the hit its score: the last reranking retriever (`rerank`), `rrf`
    for a fused hit, the retriever's name for a single list's hit; "" when unknown."""
    if not hit.via:
        return ""
    last = hit.via[-1].retriever
    if last == "rerank" or len(hit.via) == 1:
        return last
    return "rrf"


def via_text(hit: Hit, separator: str = " · ") -> str:
    """How each retriever behind a fused or reranked hit ranked it, in order, parts
    joined by `separator`: `bm25 #2 · dense #1`; "" for a single retriever's own hit."""
    if len(hit.via) < 2:
        return ""
    return separator.join(f"{via.retriever} #{via.rank}" for via in hit.via)


def snippet(text: str, limit: int = SNIPPET_CHARS, query: str = "") -> str:
    """Return `text` on one line, cut to `limit` characters with an ellipsis: from its
    start, or, when `query` is given and a later stretch holds more of its content
    words than the start does, from the start of a word at most SNIPPET_LEAD
    characters before that stretch's first one, or earlier when the stretch is near
    the end, so that the snippet runs to `limit` (an ellipsis before it too)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    start = _telling_start(flat, limit, query_stems(query)) if query else 0
    head = "…" if start else ""
    body = flat[start:]
    room = limit - len(head)
    return head + (body if len(body) <= room else body[: room - 1].rstrip() + "…")


def _telling_start(flat: str, limit: int, wanted: set[str]) -> int:
    """Where the snippet of `flat` (longer than `limit`) starts (`snippet`): the
    start, among those a word of `wanted` stems gives, whose `limit` characters hold
    the most of them, the earliest of equals; 0 when none holds more than the start
    does."""
    found = [(m.start(), m.end(), stem(m.group(0).lower())) for m in _WORD.finditer(flat)]
    found = [(at, end, s) for at, end, s in found if s in wanted]

    def held(start: int) -> int:
        return len({s for at, end, s in found if start <= at and end <= start + limit - 2})

    starts = [
        _word_start(flat, min(at - SNIPPET_LEAD, len(flat) - limit + 1)) for at, _, _ in found
    ]
    best = max(starts, key=held, default=0)
    return best if held(best) > held(0) else 0


def _word_start(flat: str, at: int) -> int:
    """The first start of a word of `flat` at or after `at` (0 for `at` <= 0)."""
    if at <= 0:
        return 0
    if flat[at - 1] == " ":
        return at
    space = flat.find(" ", at)
    return space + 1 if space != -1 else at


def hits_table(query: str, hits: list[Hit]) -> Table:
    """Return a rich table of hits: rank, score (`score_text` and `score_source`;
    under it, how each retriever ranked the hit: `via_text`, one line each, so that
    the column stays narrow), ref, the full label and a snippet of the stretch
    that holds most of the query's words (`snippet`). Query and cell text are shown
    with `visible_line` (control characters visible) and never parsed as markup."""
    title = Text(f"Search: {visible_line(query)}")
    table = Table(title=title, title_justify="left", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("ref")
    table.add_column("where / text")
    for hit in hits:
        score = " ".join(filter(None, (score_text(hit.score), score_source(hit))))
        via = via_text(hit, "\n")
        table.add_row(
            str(hit.rank),
            Text(score + (f"\n{via}" if via else "")),
            Text(visible_line(hit.chunk.ref)),
            Text(
                f"{visible_line(hit.chunk.label)}\n"
                f"{visible_line(snippet(hit.chunk.text, query=query))}"
            ),
        )
    return table


FACTS_TITLE = "Facts: knowledge-graph triplets (imported, not quotes)"
"""The title of the triplets a search matches: what they are, and that they are
not the documents' words."""


class FactHit(TypedDict):
    """A knowledge-graph triplet a search names, as search JSON gives it: the same
    fields, in this order, in `search --format json`, `GET /v1/search` and the MCP
    `search` tool (`fact_hit_to_dict`)."""

    rank: int
    score: float
    match: EntityMatch
    entity: str
    origin: FactOrigin
    triplet_id: str
    collection: str
    subject: str
    relation: str
    object: str
    graph_file: str
    row: int
    doc_id: str | None
    page: int | None
    claimed_quote: str | None


FACT_FIELDS = tuple(FactHit.__annotations__)
"""The fields of a matched triplet in search JSON, in order (`FactHit`)."""


def fact_hit_to_dict(hit: TripletHit) -> FactHit:
    """A matched triplet, with the fields `FACT_FIELDS` names: its rank, score, how
    it matched (`match`: exact, normalized, fuzzy or hop) and through which entity,
    `origin` (always `imported`: search finds only the triplets of imported graph
    files; the model extracts triplets only while answering), then the stored
    triplet's fields. `claimed_quote` is the supporting words its graph file claims,
    unchecked: not a quote of the documents, and never shown as one."""
    t = hit.triplet
    return {
        "rank": hit.rank,
        "score": round(hit.score, 6),
        "match": hit.match,
        "entity": hit.entity,
        "origin": "imported",
        "triplet_id": t.triplet_id,
        "collection": t.collection,
        "subject": t.subject,
        "relation": t.relation,
        "object": t.object,
        "graph_file": t.graph_file,
        "row": t.row,
        "doc_id": t.doc_id,
        "page": t.page,
        "claimed_quote": t.quote,
    }


def facts_table(hits: list[TripletHit]) -> Table:
    """A rich table of matched triplets under `FACTS_TITLE`: rank, score and how it
    matched, the triplet `subject | relation | object`, and where it comes from (graph
    file and line, collection), folded, never cut. No cell is drawn as a quote, and
    its text is shown with `visible_line`, never parsed as markup."""
    table = Table(title=Text(FACTS_TITLE), title_justify="left", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("fact", overflow="fold", ratio=3)
    table.add_column("from", overflow="fold", ratio=2)
    for hit in hits:
        t = hit.triplet
        table.add_row(
            str(hit.rank),
            Text(f"{score_text(hit.score)}\n{hit.match}"),
            Text(visible_line(f"{t.subject} | {t.relation} | {t.object}")),
            Text(visible_line(f"{t.graph_file}, line {t.row} ({t.collection})")),
        )
    return table
