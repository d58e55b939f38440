"""Rendering search hits: JSON-ready dicts, the batch JSONL form, and a terminal table."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from quoteproof.model import Hit
from quoteproof.render.visible import visible_line

SNIPPET_CHARS = 160


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
    return data


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """Return `text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def hits_table(query: str, hits: list[Hit]) -> Table:
    """Return a rich table of hits; query and cell text are shown with `visible_line`
    (control characters visible) and never parsed as markup."""
    title = Text(f"Search: {visible_line(query)}")
    table = Table(title=title, title_justify="left", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("ref")
    table.add_column("where / text")
    for hit in hits:
        table.add_row(
            str(hit.rank),
            f"{hit.score:.2f}",
            Text(visible_line(hit.chunk.ref)),
            Text(f"{visible_line(hit.chunk.label)}\n{visible_line(snippet(hit.chunk.text))}"),
        )
    return table
