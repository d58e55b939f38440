"""Reading the web page in real headless Chromium: the quote text opens the source at
the quote (mouse and keyboard, the text unchanged), the library table fits 1280 and
800 pixel wide windows, an upload appears in the library without a reload, history
shows local human times, and the source viewer opens centred on the highlight.

Every test fails when the page logs a console error or warning, throws, or breaks
the Content-Security-Policy (see conftest). Screenshots: `artifacts/browser/3x-*`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote as url_quote
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import pytest

from browser.test_browser import (
    PDF_QUESTION,
    ask,
    check_figures,
    check_pdf_viewer,
    quote_segments,
    recorded,
)
from quoteproof.index import Index

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from conftest import DemoServer, HeldServer

Shoot = Callable[..., Path]
TIME_ZONE = "America/St_Johns"
"""`zoned_page`'s time zone (conftest's `ZONED_TIME_ZONE`)."""
PDF_NAME = "veklury_remdesivir_label_oct2020.pdf"
PDF_PAGE_END = "The following adverse reactions are discussed in other sections of the labeling"
"""A sentence at the foot of page 8 of the PDF."""
LONG_HTML = "23_0115.htm"


# --- helpers -------------------------------------------------------------------------


def focused_class(page: Page) -> str:
    return str(page.evaluate("() => document.activeElement.className || ''"))


def document_of(index_dir: Path, file_name: str) -> tuple[str, int, str]:
    """The doc id, version and text of the document whose file is `file_name`."""
    with Index.open(index_dir) as index:
        (summary,) = [
            s for s in index.store.list_documents() if Path(s.source_path).name == file_name
        ]
        document = index.store.get_document(summary.doc_id)
        assert document is not None
        return summary.doc_id, summary.version, document.text


def viewer_at(origin: str, doc_id: str, version: int, start: int, end: int) -> str:
    query = urlencode({"version": version, "start": start, "end": end})
    return f"{origin}/sources/{url_quote(doc_id, safe='')}?{query}#quote"


def settled(page: Page) -> None:
    """Wait until the page has loaded and drawn two frames since."""
    page.wait_for_load_state("load")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def check_centred(page: Page, target: Locator) -> None:
    """`target` lies wholly in the viewport, its middle near the viewport's middle
    (or the page is scrolled as far as it goes)."""
    place = target.evaluate(
        """e => { const r = e.getBoundingClientRect();
                  const root = document.scrollingElement;
                  return {top: r.top, bottom: r.bottom, height: innerHeight, y: scrollY,
                          maxY: root.scrollHeight - root.clientHeight}; }"""
    )
    assert 0 <= place["top"] < place["bottom"] <= place["height"], place
    middle = (place["top"] + place["bottom"]) / 2
    at_end = place["y"] >= place["maxY"] - 1
    assert abs(middle - place["height"] / 2) <= place["height"] * 0.2 or at_end, place
    assert place["y"] > 0, place  # the page was scrolled to it


# --- 1. the quote text opens the source ------------------------------------------------


def test_clicking_the_quote_text_opens_the_source_at_it(
    page: Page, demo_origin: str, shoot: Shoot
) -> None:
    result = ask(page, demo_origin, PDF_QUESTION, stream=False)
    answer = recorded(page, demo_origin)
    check_figures(result, answer)  # the text is exactly the quote's, nothing added
    text = result.locator("figure.verbatim blockquote.quote-text").first
    assert text.evaluate("e => e.children.length") == 0
    assert text.get_attribute("role") == "link" and text.get_attribute("tabindex") == "0"
    assert text.evaluate("e => getComputedStyle(e).cursor") == "pointer"
    first_quote = quote_segments(answer)[0]["text"]
    assert text.text_content() == first_quote

    # selecting words of the quote (to copy them) does not leave the page
    box = text.bounding_box()
    assert box
    url = page.url
    page.mouse.move(box["x"] + 30, box["y"] + 12)  # on the first line
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 12, steps=20)
    page.mouse.up()
    assert page.evaluate("() => getSelection().toString().length") > 0
    assert page.url == url
    text.hover()
    shoot(page, "30-quote-text-is-a-link")

    text.click()
    page.wait_for_url(re.compile(r"/sources/[^?]+\?.*#quote$"))
    check_pdf_viewer(page)
    assert page.locator(".span-text-body").text_content() == first_quote
    shoot(page, "31-quote-text-opened-the-source", full_page=False)


def test_the_quote_text_opens_the_source_from_the_keyboard(page: Page, demo_origin: str) -> None:
    result = ask(page, demo_origin, PDF_QUESTION, stream=True)  # drawn by app.js
    target = result.locator("a.source-link").first.get_attribute("href")
    page.locator("#question").focus()
    for _ in range(60):
        page.keyboard.press("Tab")
        if focused_class(page) == "quote-text":
            break
    else:
        raise AssertionError("no quote text reached with Tab")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/sources/[^?]+\?.*#quote$"))
    assert target and page.url.endswith(target)
    check_pdf_viewer(page)


# --- 2. the library table fits the window ---------------------------------------------


LIBRARY_FIT = """() => {
  const table = document.querySelector('#library-table table');
  const main = document.querySelector('main');
  const style = getComputedStyle(main);
  const right = main.getBoundingClientRect().right - parseFloat(style.paddingRight);
  const cells = [...table.querySelectorAll('th, td')];
  return {
    page: document.documentElement.scrollWidth, window: innerWidth,
    tableRight: table.getBoundingClientRect().right, contentRight: right,
    overflowing: cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent),
    title: table.querySelector('thead th:nth-child(1)').getBoundingClientRect().width,
    file: table.querySelector('thead th:nth-child(2)').getBoundingClientRect().width,
    table: table.getBoundingClientRect().width,
  };
}"""


LINE_BREAKS = """e => {
  const range = document.createRange();
  const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
  const breaks = [];
  let top = null, last = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const y = range.getBoundingClientRect().top;
      if (top !== null && y > top + 1) breaks.push(last);
      top = y;
      last = node.data[i];
    }
  }
  return breaks;
}"""
"""The character before each line break inside an element's text."""


@pytest.mark.parametrize("width", [1280, 800])
def test_the_library_table_fits_the_window(
    page: Page, demo_server: DemoServer, shoot: Shoot, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{demo_server.origin}/library")
    fit = page.evaluate(LIBRARY_FIT)
    assert fit["page"] <= fit["window"], fit  # no horizontal scrolling
    assert fit["tableRight"] <= fit["contentRight"] + 0.5, fit
    assert not fit["overflowing"], fit
    assert fit["title"] >= fit["file"] and fit["title"] >= 0.3 * fit["table"], fit

    # the file column: the whole path on hover, its folders cut, its file name whole
    with Index.open(demo_server.index_dir) as index:
        paths = {Path(s.source_path).name: s.source_path for s in index.store.list_documents()}
    row = page.locator("#library-table tbody tr", has_text=PDF_NAME)
    path = row.locator(".path")
    assert path.get_attribute("title") == paths[PDF_NAME]
    assert path.text_content() == paths[PDF_NAME]  # all of it, for copying and screen readers
    tail = path.locator(".path-tail")
    end = tail.text_content() or ""
    assert end == PDF_NAME  # the file name whole, at any width
    assert tail.evaluate("e => e.scrollWidth <= e.clientWidth")
    breaks = tail.evaluate(LINE_BREAKS)
    assert all(after in "_.-" for after in breaks), breaks  # between its parts, not in a word
    if width == 800:
        assert breaks  # it does wrap there
        assert path.locator(".path-head").evaluate("e => e.scrollWidth > e.clientWidth")
    shoot(page, f"32-library-{width}px")


# --- 3. an upload appears in the library without a reload -----------------------------


# Records, when the page first says the job is done ("Ingested"), whether the
# document table already lists the uploaded file: the two arrive together, so no
# screenshot or reader sees one without the other.
DONE_WATCH = """name => {
  window.__qpSamePage = true;
  new MutationObserver((records, observer) => {
    const summary = document.querySelector('#upload-status .job-summary');
    if (!summary || !summary.textContent.trim().startsWith('Ingested')) return;
    const rows = [...document.querySelectorAll('#library-table tbody tr')];
    window.__qpListedWhenDone = rows.some(row => row.textContent.includes(name));
    observer.disconnect();
  }).observe(document.body, { childList: true, subtree: true });
}"""


def test_an_upload_appears_in_the_library_without_a_reload(
    page: Page, held_server: HeldServer, shoot: Shoot, tmp_path: Path
) -> None:
    word = "zq" + uuid.uuid4().hex[:10]
    upload = tmp_path / f"live-{word}.md"
    upload.write_text(f"# Live notes\n\nThe mineral {word} hums at night.\n", "utf-8")
    origin = held_server.origin
    page.goto(f"{origin}/library")
    page.evaluate(DONE_WATCH, upload.name)
    table = page.locator("#library-table")
    page.locator("#upload-files").set_input_files(upload)
    page.locator("#upload-collection").fill("default")
    page.locator("#upload-submit").click()
    page.locator("#upload-status .job-queued").wait_for()  # held: the page polls the job
    for _ in range(3):  # the polling goes on while the job waits
        with page.expect_response(lambda r: "/library/jobs/" in r.url):
            pass
    page.locator("#upload-status .job-queued").wait_for()
    assert table.get_by_text(upload.name).count() == 0
    shoot(page, "33-upload-queued")

    held_server.hold.unlink()  # the file ingests now
    try:
        page.locator("#upload-status .job-done").wait_for()
    finally:
        held_server.hold.touch()
    assert page.evaluate("() => window.__qpListedWhenDone") is True
    assert page.evaluate("() => window.__qpSamePage === true")  # no reload
    row = table.locator("tbody tr", has_text=upload.name)
    assert "Live notes" in row.inner_text()
    shoot(page, "34-upload-in-the-library")


# --- 4. history: local human times; no cited-passages link without prose ---------------


def human_local(iso: str) -> str:
    when = datetime.fromisoformat(iso).astimezone(ZoneInfo(TIME_ZONE))
    return f"{when.day} {when:%b %Y, %H:%M}"


def test_history_shows_local_human_times_and_no_prose_link_without_prose(
    zoned_page: Page, demo_origin: str, shoot: Shoot
) -> None:
    page = zoned_page
    page.goto(f"{demo_origin}/history")
    offset = datetime.now(ZoneInfo(TIME_ZONE)).utcoffset()
    assert offset is not None and offset.total_seconds() % 3600  # minutes differ from UTC's
    assert page.evaluate("() => -new Date().getTimezoneOffset()") == offset.total_seconds() / 60
    ask(page, demo_origin, PDF_QUESTION, stream=False)  # the extractive backend: no prose
    answer: dict[str, Any] = recorded(page, demo_origin)
    assert not [s for s in answer["segments"] if s["type"] == "prose"]
    href = page.locator("#permalink").get_attribute("href")

    page.goto(f"{demo_origin}/history")
    assert page.locator("#history-table thead th").first.inner_text() == "Time"
    row = page.locator("#history-table tbody tr").filter(has=page.locator(f'a[href="{href}"]'))
    when = row.locator("time")
    iso = when.get_attribute("datetime")
    assert iso and datetime.fromisoformat(iso).tzinfo is not None
    assert when.get_attribute("title") == iso
    assert when.inner_text() == human_local(iso)
    assert re.fullmatch(r"just now|\d+ min ago", row.locator(".time-ago").inner_text())
    shoot(page, "35-history-human-times")

    row.locator(f'a[href="{href}"]').click()
    page.wait_for_url(re.compile(r"/answers/[^/?#]+$"))
    assert page.locator("#answer figure.verbatim").count() >= 1
    assert page.get_by_text("passages the prose cites").count() == 0
    assert page.locator(".entry-meta time").inner_text() == human_local(iso)
    shoot(page, "36-recorded-answer-without-prose")


# --- 5. the source viewer opens centred on the highlight ------------------------------


def test_the_pdf_viewer_opens_centred_on_a_highlight_low_on_the_page(
    page: Page, demo_server: DemoServer, shoot: Shoot
) -> None:
    doc_id, version, text = document_of(demo_server.index_dir, PDF_NAME)
    start = text.index(PDF_PAGE_END)
    page.goto(viewer_at(demo_server.origin, doc_id, version, start, start + len(PDF_PAGE_END)))
    check_pdf_viewer(page)
    settled(page)
    highlight = page.locator("#quote rect.highlight").first
    frame = page.locator("#quote.page-frame").bounding_box()
    box = highlight.bounding_box()
    assert frame and box and box["y"] - frame["y"] > 900  # low on a page taller than the window
    check_centred(page, highlight)
    shoot(page, "37-pdf-viewer-centred", full_page=False)


def test_the_text_viewer_opens_centred_on_a_passage_far_down(
    page: Page, demo_server: DemoServer, shoot: Shoot
) -> None:
    doc_id, version, text = document_of(demo_server.index_dir, LONG_HTML)
    start = text.index(" ", len(text) * 3 // 4) + 1
    end = text.index(" ", start + 80)
    page.goto(viewer_at(demo_server.origin, doc_id, version, start, end))
    settled(page)
    mark = page.locator("mark#quote")
    assert mark.text_content() == text[start:end]
    check_centred(page, mark)
    shoot(page, "38-text-viewer-centred", full_page=False)
