"""Search hits: the batch JSON shape and a terminal table that never parses markup."""

from __future__ import annotations

import io

from rich.console import Console

from quoteproof.model import Chunk, Hit
from quoteproof.render.hits import hit_to_dict, hits_table, snippet

HOSTILE = "[/bold] closes nothing; [red]not red[/red] and [link=http://x]no link[/link]"


def hit(text: str) -> Hit:
    chunk = Chunk("d.1", "d", 1, 1, 0, len(text), text, (), "[b]Label[/b] › ¶1", "/d.txt")
    return Hit(chunk, 3.14159, 1)


def test_table_shows_markup_literally() -> None:
    buffer = io.StringIO()
    Console(file=buffer, width=200, force_terminal=True).print(hits_table("[/x] q", [hit(HOSTILE)]))
    out = buffer.getvalue()
    assert "[/bold] closes nothing; [red]not red[/red]" in out
    assert "[b]Label[/b]" in out and "Search: [/x] q" in out
    assert "\x1b]8;" not in out  # no hyperlink escape


def test_batch_shape_and_snippet() -> None:
    assert hit_to_dict(hit("abc")) == {
        "ref": "d.1",
        "doc_id": "d",
        "source_path": "/d.txt",
        "score": 3.14159,
    }
    assert set(hit_to_dict(hit("abc"), with_text=True)) >= {"rank", "label", "text"}
    assert snippet("a  b\n c" + "x" * 300, limit=20).endswith("…")
    assert len(snippet("y" * 300, limit=20)) == 20
