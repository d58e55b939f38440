"""Search hits: the batch JSON shape and a terminal table that never parses markup."""

from __future__ import annotations

import io

from rich.console import Console

from quoteproof.model import Chunk, Hit, Via
from quoteproof.render.hits import (
    hit_to_dict,
    hits_table,
    score_source,
    score_text,
    snippet,
    via_text,
)

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


def test_fused_scores_are_told_apart_and_say_their_retrievers() -> None:
    chunk = hit("abc").chunk
    first = Hit(chunk, 1 / 61 + 1 / 62, 1, (Via("bm25", 1, 12.5), Via("dense", 2, 0.81)))
    second = Hit(chunk, 1 / 62 + 1 / 63, 2, (Via("bm25", 2, 9.1), Via("dense", 3, 0.8)))
    assert f"{first.score:.2f}" == f"{second.score:.2f}"  # what the table used to show
    assert score_text(first.score) == "0.03252" and score_text(second.score) == "0.032"
    assert [score_source(first), via_text(first)] == ["rrf", "bm25 #1 · dense #2"]
    bm25_only = Hit(chunk, 1e-6, 1, (Via("bm25", 1, 1e-6),))
    assert score_text(bm25_only.score) == "1e-06" and score_source(bm25_only) == "bm25"
    assert via_text(bm25_only) == ""
    buffer = io.StringIO()
    Console(file=buffer, width=200, color_system=None).print(hits_table("q", [first, second]))
    out = buffer.getvalue()
    assert "0.03252 rrf" in out and "0.032 rrf" in out
    assert [line.split("│")[2].strip() for line in out.splitlines() if "bm25 #2 " in line] == [
        "bm25 #2"
    ]  # each retriever on its own line of the score column, which stays narrow
    assert hit_to_dict(first, with_text=True)["via"][1] == {
        "retriever": "dense",
        "rank": 2,
        "score": 0.81,
    }


def test_a_snippet_shows_the_stretch_that_holds_the_query_s_words() -> None:
    """Snippets were the start of the passage, not the part that matched: a long
    passage whose first lines do not name the query showed only those."""
    filler = "Intro words about nothing in particular. " * 8
    text = f"{filler}The vaccine refrigerator is kept at 2 to 8 degrees. " + "Filler. " * 20
    shown = snippet(text, limit=100, query="How cold is the vaccine refrigerator?")
    assert "vaccine refrigerator is kept at 2 to 8 degrees" in shown
    assert shown.startswith("…") and shown.endswith("…") and len(shown) <= 100
    assert shown[1] != " " and " ".join(text.split()).find(shown[1:-1]) > 0  # starts at a word
    assert snippet(text, limit=100, query="zebra") == snippet(text, limit=100)
    assert not snippet(text, limit=100).startswith("…")
    opening = "The vaccine refrigerator log. " + filler + "vaccine " * 3
    assert snippet(opening, limit=100, query="vaccine refrigerator").startswith("The vaccine")
    at_end = snippet(f"{filler}the vaccine refrigerator.", limit=100, query="refrigerator")
    assert at_end.endswith("the vaccine refrigerator.") and 95 <= len(at_end) <= 100
    token = "Intro words. https://example.org/" + "a" * 200 + " then the vaccine refrigerator."
    assert "vaccine refrigerator" in snippet(token, limit=100, query="vaccine refrigerator")
    assert snippet(text, limit=100, query="") == snippet(text, limit=100)
