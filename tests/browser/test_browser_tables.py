"""A quoted table row on the web page: drawn as a table inside the verbatim box, the
source's header row as its column names, readable at the page's width (screenshot
`20-table-quote-answer.png`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from browser.conftest import live_server, server_config
from browser.test_browser import ask, recorded
from helpers.llm_servers import ScriptedOpenAIServer
from helpers.table_docs import COLUMNS, ROWS, ingest_table_docs
from quoteproof.index import Index
from quoteproof.render.table_quote import CARRIED_HEADER_NOTE

if TYPE_CHECKING:
    from playwright.sync_api import Page

Shoot = Callable[["Page", str], Path]
ROW = " | ".join(ROWS[1])


@dataclass(frozen=True)
class TableServer:
    origin: str
    model: ScriptedOpenAIServer
    ref: str
    """The chunk that holds the table."""


@pytest.fixture(scope="module")
def table_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TableServer]:
    """A server whose scripted model quotes from the table documents."""
    root = tmp_path_factory.mktemp("tables")
    paths = ingest_table_docs(root / "index", root / "docs")
    with Index.open(root / "index") as index:
        doc = next(d for d in index.store.list_documents() if d.source_path == str(paths["html"]))
        chunks = index.store.chunks_of(doc.doc_id, doc.version)
        ref = next(chunk.ref for chunk in chunks if ROW in chunk.text)
    model = ScriptedOpenAIServer()
    model.start()
    try:
        config = server_config(root / "index", llm="openai", model="m", base_url=model.base_url)
        with live_server(config) as origin:
            yield TableServer(origin, model, ref)
    finally:
        model.stop()


def test_a_quoted_table_row_reads_as_a_table(
    page: Page, table_server: TableServer, shoot: Shoot
) -> None:
    table_server.model.script = [
        f"Intracranial hemorrhage is listed [{table_server.ref}]. "
        f'<quote ref="{table_server.ref}">{ROW}</quote>'
    ]
    result = ask(page, table_server.origin, "How often was intracranial hemorrhage seen?")
    box = result.locator("figure.verbatim")
    expect(box).to_have_count(1)
    table = box.locator("blockquote table.quote-table")
    expect(table).to_be_visible()
    assert table.locator("thead th").all_inner_texts() == list(COLUMNS)
    assert table.locator("tbody tr").count() == 1
    assert table.locator("tbody td").all_inner_texts() == list(ROWS[1])
    for cell in table.locator("th, td").all():
        size = cell.bounding_box()
        assert size is not None and size["width"] > 60 and size["height"] < 60  # no word columns
    expect(box.locator("figcaption")).to_contain_text(CARRIED_HEADER_NOTE)
    answer = recorded(page, table_server.origin)
    (quote,) = answer["quotes"]
    assert quote["text"] == ROW
    rows = quote["tables"][0]["rows"]
    assert [[cell["text"] for cell in row["cells"]] for row in rows] == [
        list(COLUMNS),
        list(ROWS[1]),
    ]
    assert [row["quoted"] for row in rows] == [False, True]
    shoot(page, "20-table-quote-answer")


# Every word of a table cell whose characters lie on more than one line (split).
SPLIT_WORDS = """
() => [...document.querySelectorAll('table.quote-table th, table.quote-table td')].flatMap(cell => {
  const split = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const tops = new Set([...range.getClientRects()].map(rect => Math.round(rect.top)));
      if (tops.size > 1) split.push(match[0]);
    }
  }
  return split;
})
"""


@pytest.mark.parametrize("width", [1280, 300])
def test_table_cells_keep_their_words_whole(
    page: Page, table_server: TableServer, shoot: Shoot, width: int
) -> None:
    """A cell wraps between words, never inside one ("Epistaxi/s"); a table wider than
    a phone's screen scrolls inside its box instead of widening the page."""
    page.set_viewport_size({"width": width, "height": 900})
    table_server.model.script = [f'<quote ref="{table_server.ref}">{ROW}</quote>']
    result = ask(page, table_server.origin, "How often was intracranial hemorrhage seen?")
    expect(result.locator("table.quote-table")).to_be_visible()
    assert page.evaluate(SPLIT_WORDS) == []
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    shoot(page, f"21-table-quote-{width}px")
