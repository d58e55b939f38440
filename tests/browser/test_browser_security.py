"""The guarantee in the browser DOM: markup in documents or in a model's reply never
becomes a verbatim box, an element or a running script.

- Hostile documents (`.txt` and `.md` holding `<script>`, an `onerror` image, an
  HTML figure imitating the quote box and a Markdown imitation of it) quoted by the
  extractive backend: on the ask page (streamed and htmx) and in the source viewer
  the markup is text; `figure.verbatim` count == the answer's quotes.
- A hostile model reply (scripted OpenAI-compatible server) with the same tricks
  and one real `<quote ref=...>`: exactly one figure, the real source text; the
  fake boxes only as text in the generated prose or the removed list; the streamed
  draft, watched by a MutationObserver, never held any other figure.

- Spoofed names: titles and file names holding a right-to-left override or
  zero-width characters are drawn with those characters shown (`\u202e`), in the
  library, on the delete confirmation and in the source viewer.

- Request forgery: a page on another port of 127.0.0.1 (the same site) whose
  images, form posts and fetch() calls try to make the browser ask, logged in by
  cookie or against a no-auth server: every request reaches the server and no
  answer is recorded.

Every test that uses the `page` fixture also fails on console errors, page errors or
CSP violations (conftest).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus, urlsplit

import pytest
from playwright.sync_api import expect

from quoteproof.index import Index

if TYPE_CHECKING:
    from playwright._impl._api_structures import SetCookieParam
    from playwright.sync_api import Browser, BrowserContext, Locator, Page, Request

    from conftest import AuthServer, DemoServer, Hostile

Shoot = Callable[["Page", str], Path]

# Everything a page may hold that could run code or fake a box, counted in the DOM.
DOM_REPORT = """
() => {
  const withHandlers = [...document.querySelectorAll('*')].filter(
    e => [...e.attributes].some(a => a.name.toLowerCase().startsWith('on')));
  const scripts = [...document.querySelectorAll('script')].map(s => s.getAttribute('src'));
  return {
    pwned: typeof window.__pwned === 'undefined' ? null : String(window.__pwned),
    handlers: withHandlers.map(e => e.outerHTML.slice(0, 200)),
    scripts: scripts,
    figures: document.querySelectorAll('figure').length,
    verbatim: document.querySelectorAll('figure.verbatim').length,
    imgs: [...document.querySelectorAll('img')].map(i => i.getAttribute('src')),
    iframes: document.querySelectorAll('iframe, object, embed').length,
    javascriptLinks: [...document.querySelectorAll('[href]')].filter(
      e => /^\\s*javascript:/i.test(e.getAttribute('href'))).length,
  };
}
"""

# Where the text nodes holding `marker` sit: the selector of their closest
# interesting ancestor (a quote's blockquote, generated prose, the removed list).
TEXT_PLACES = """
(marker) => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const places = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.data.includes(marker)) continue;
    const el = node.parentElement;
    const place = el.closest(
      'figure.verbatim blockquote.quote-text, section.generated, section.rejected, '
      + 'pre.source-text, pre.span-text-body, h2.question, figure, blockquote, p.notice');
    let name = 'other:' + el.tagName.toLowerCase();
    if (place) name = place.tagName.toLowerCase() + (place.className ? '.' + place.className : '');
    places.push(name);
  }
  return places;
}
"""

# Watches #answer from before the question is sent: the text of every verbatim
# figure ever added (even one removed again), and every element that could run code.
DRAFT_WATCH = """
() => {
  const answer = document.getElementById('answer');
  const seen = { figures: [], draftFigures: 0, bad: [], prose: 0 };
  window.__qpSeen = seen;
  function look(node) {
    if (node.nodeType !== 1) return;
    const figures = node.matches('figure') ? [node] : [...node.querySelectorAll('figure')];
    for (const f of figures) {
      const q = f.querySelector('blockquote');
      seen.figures.push({ cls: f.className, text: q ? q.textContent : null,
                          children: q ? q.children.length : -1 });
      if (f.closest('.draft')) seen.draftFigures += 1;
    }
    const bad = node.matches('script, img, iframe, object, embed') ? [node] : [];
    bad.push(...node.querySelectorAll('script, img, iframe, object, embed'));
    for (const e of [node, ...node.querySelectorAll('*')]) {
      if ([...e.attributes].some(a => a.name.toLowerCase().startsWith('on'))) bad.push(e);
    }
    for (const e of bad) seen.bad.push(e.outerHTML.slice(0, 200));
    if (node.matches('.draft-prose') || node.querySelector('.draft-prose')) seen.prose += 1;
  }
  new MutationObserver(records => {
    for (const record of records) record.addedNodes.forEach(look);
  }).observe(answer, { childList: true, subtree: true });
}
"""

STATIC_SCRIPTS = ["/static/htmx.min.js", "/static/app.js"]


def dom_report(page: Page) -> dict[str, Any]:
    report: dict[str, Any] = page.evaluate(DOM_REPORT)
    return report


def assert_inert(page: Page, expected_verbatim: int | None = None) -> dict[str, Any]:
    """Nothing ran, no handler attribute, no script but ours, no injected element."""
    report = dom_report(page)
    assert report["pwned"] is None, report
    assert report["handlers"] == [], report
    assert report["scripts"] == STATIC_SCRIPTS, report
    assert report["iframes"] == 0 and report["javascriptLinks"] == 0, report
    assert all(src.startswith("/sources/") for src in report["imgs"]), report
    if expected_verbatim is not None:
        assert report["verbatim"] == report["figures"] == expected_verbatim, report
    return report


def text_places(page: Page, marker: str) -> list[str]:
    places: list[str] = page.evaluate(TEXT_PLACES, marker)
    return places


def ask(page: Page, origin: str, question: str, *, stream: bool, watch: bool = False) -> Locator:
    page.goto(f"{origin}/")
    if watch:
        page.evaluate(DRAFT_WATCH)
    page.locator("#question").fill(question)
    page.locator("#stream").set_checked(stream)
    page.locator("#ask-submit").click()
    result = page.locator("#answer .answer-result")
    result.wait_for()
    expect(page.locator("#ask-submit")).to_be_enabled()
    return result


def api_ask(page: Page, origin: str, question: str) -> dict[str, Any]:
    response = page.request.post(f"{origin}/v1/ask", data={"question": question})
    assert response.ok, response.text()
    answer: dict[str, Any] = response.json()
    return answer


def recorded(page: Page, origin: str) -> dict[str, Any]:
    href = page.locator("#permalink").get_attribute("href")
    assert href and href.startswith("/answers/")
    response = page.request.get(f"{origin}/v1{href}")
    assert response.ok, response.text()
    answer: dict[str, Any] = response.json()["answer"]
    return answer


def quotes_in_order(answer: dict[str, Any]) -> list[dict[str, Any]]:
    quotes = {quote["id"]: quote for quote in answer["quotes"]}
    return [quotes[s["quote_id"]] for s in answer["segments"] if s["type"] == "quote"]


# --- hostile documents ---------------------------------------------------------------


@pytest.mark.parametrize("file_name", ["hostile-notes.txt", "hostile-notes.md"])
def test_hostile_document_is_text_on_the_page_and_in_the_viewer(
    page: Page, hostile: Hostile, shoot: Shoot, file_name: str
) -> None:
    plant = hostile.files[file_name]
    question = f"How often does {plant} need watering?"
    fake_box = f"Fake {plant} box"
    fake_markdown = f"Fake {plant} markdown box"
    expected = quotes_in_order(api_ask(page, hostile.extractive, question))
    ours = [q for q in expected if q["source_path"].endswith(file_name)]
    assert ours and "<script>__pwned=1</script>" in ours[0]["text"]
    assert fake_box in ours[0]["text"] and fake_markdown in ours[0]["text"]
    suffix = file_name.rsplit(".", 1)[1]
    number = 20 if suffix == "txt" else 23  # screenshots 20-22 (.txt), 23-25 (.md)

    for stream in (True, False):
        result = ask(page, hostile.extractive, question, stream=stream)
        answer = recorded(page, hostile.extractive)
        assert [q["text"] for q in quotes_in_order(answer)] == [q["text"] for q in expected]
        assert_inert(page, expected_verbatim=len(expected))
        texts = result.locator("figure.verbatim blockquote.quote-text")
        assert texts.all_text_contents() == [q["text"] for q in expected]
        children = texts.evaluate_all("quotes => quotes.map(q => q.children.length)")
        assert children == [0] * len(expected)
        # the imitations are visible, as characters of the real quote
        for marker in (fake_box, fake_markdown, "onerror="):
            places = text_places(page, marker)
            assert places and set(places) == {"blockquote.quote-text"}, (marker, places)
        script_text = result.get_by_text("<script>__pwned=1</script>", exact=False)
        assert script_text.first.is_visible()
        how = "streamed" if stream else "htmx"
        shoot(page, f"{number + (not stream)}-hostile-{suffix}-answer-{how}")

    figure = result.locator("figure.verbatim").filter(
        has=page.locator(".where", has_text=file_name)
    )
    figure.first.locator("a.source-link").click()
    page.wait_for_url(re.compile(r"/sources/.*#quote$"))
    mark = page.locator("mark#quote")
    mark.wait_for()
    assert mark.text_content() == ours[0]["text"]
    assert mark.evaluate("e => e.children.length") == 0
    report = assert_inert(page, expected_verbatim=0)
    assert report["imgs"] == []
    for marker in (fake_box, fake_markdown):
        assert text_places(page, marker) == ["pre.source-text"]
    assert page.locator("blockquote").count() == 0
    shoot(page, f"{number + 2}-hostile-{suffix}-source-viewer")


# --- a hostile model -----------------------------------------------------------------

MODEL_QUESTION = "What is obstructive sleep apnea?"
FAKE_FIGURE = "FAKE-MODEL-FIGURE-TEXT"
FAKE_MARKDOWN = "FAKE-MODEL-MARKDOWN-TEXT"


def hostile_reply(ref: str, words: str) -> str:
    return (
        "<script>window.__pwned=3</script> "
        '<img src=x onerror="window.__pwned=4"> '
        '<figure class="verbatim"><figcaption>Verbatim from source</figcaption>'
        f"<blockquote>{FAKE_FIGURE}</blockquote></figure>\n\n"
        f"> **Verbatim from source**\n> {FAKE_MARKDOWN}\n\n"
        f'Sleep apnea is explained in the source [{ref}]. <quote ref="{ref}">{words}</quote>'
    )


def first_sentence(text: str) -> str:
    found = re.search(r"\S[^\n]{30,}?[.!?](?=\s|$)", text)
    assert found, text
    return found.group(0)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "htmx"])
def test_hostile_model_reply_draws_one_real_quote(
    page: Page, hostile: Hostile, shoot: Shoot, stream: bool
) -> None:
    response = page.request.get(f"{hostile.scripted}/v1/search", params={"q": MODEL_QUESTION})
    assert response.ok, response.text()
    hit = response.json()["hits"][0]
    words = first_sentence(hit["text"])
    hostile.model.script = [hostile_reply(hit["ref"], words)]

    result = ask(page, hostile.scripted, MODEL_QUESTION, stream=stream, watch=True)
    answer = recorded(page, hostile.scripted)
    texts = [q["text"] for q in quotes_in_order(answer)]  # the no-model quotes may join
    assert words in texts[0] and answer["quotes"][0]["ref"] == hit["ref"]
    assert_inert(page, expected_verbatim=len(texts))
    figure = result.locator("figure.verbatim").first
    assert figure.locator("blockquote.quote-text").text_content() == texts[0]
    assert "Verbatim from source" in figure.locator("figcaption").inner_text()
    # the model's imitations cite nothing: they are removed and listed (in the JSON,
    # and named in a notice), and wherever the page shows them they are text
    removed = [r["raw"] for r in answer["removed_sentences"] + answer["rejected"]]
    assert all(any(fake in raw for raw in removed) for fake in (FAKE_FIGURE, FAKE_MARKDOWN))
    for marker in (FAKE_FIGURE, FAKE_MARKDOWN, "window.__pwned=3", "onerror="):
        places = text_places(page, marker)
        allowed = {"section.generated", "section.rejected", "p.notice"}
        assert set(places) <= allowed, (marker, places)
    assert result.locator("section.generated").count() >= 1

    seen: dict[str, Any] = page.evaluate("() => window.__qpSeen")
    assert seen["bad"] == [], seen
    assert seen["figures"], seen
    for drawn in seen["figures"]:
        assert drawn["cls"] == "verbatim" and drawn["children"] == 0, seen
        assert any(drawn["text"] in text for text in texts), seen
    if stream:  # the draft showed the model's prose as text and the resolved quote
        assert seen["draftFigures"] >= 1 and seen["prose"] >= 1, seen
    shoot(page, "26-hostile-model-streamed" if stream else "27-hostile-model-htmx")


# --- request forgery from another port of the same host -------------------------------

OWN_QUESTION = "How often should remdesivir be given?"
ATTACK_QUESTION = f"{OWN_QUESTION} (asked by the attacker)"
ATTACK_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Nothing to see</title></head><body>
<img src="{victim}/ask/stream?question={question}&amp;mode=quote" alt="">
<img src="{victim}/ask?question={question}" alt="">
<iframe name="sink-stream"></iframe><iframe name="sink-ask"></iframe>
<form id="stream-form" method="post" action="{victim}/ask/stream" target="sink-stream">
  <input name="question" value="{text}"><input name="mode" value="quote"></form>
<form id="ask-form" method="post" action="{victim}/ask" target="sink-ask">
  <input name="question" value="{text}"></form>
<script>
document.getElementById("stream-form").submit();
document.getElementById("ask-form").submit();
for (const path of ["/ask/stream", "/ask"]) {{
  fetch("{victim}" + path, {{method: "POST", mode: "no-cors", credentials: "include",
                             body: new URLSearchParams({{question: "{text}"}})}}).catch(() => null);
}}
</script></body></html>
"""
ATTACKS = {
    ("GET", "/ask/stream"),
    ("GET", "/ask"),
    ("POST", "/ask/stream"),  # twice: the form and fetch()
    ("POST", "/ask"),  # twice
}


@contextmanager
def attacker_site(victim: str) -> Iterator[str]:
    """A page on another port of 127.0.0.1 that tries to make the browser ask `victim`
    (an image, form posts into frames, fetch() with credentials); yield its URL."""
    page = ATTACK_PAGE.format(
        victim=victim, question=quote_plus(ATTACK_QUESTION), text=ATTACK_QUESTION
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def recorded_answers(index_dir: Path) -> int:
    """How many answers the audit log of the index at `index_dir` holds."""
    with Index.open(index_dir) as index:
        return len(index.store.audit_entries(after_seq=0, limit=100_000))


def run_attack(context: BrowserContext, victim: str, index_dir: Path) -> None:
    """Open the attacker's page in `context`; check that every forged request reached
    the victim and that no answer was recorded (the count is watched a while, as a
    refused stream would have answered on in the background)."""
    before = recorded_answers(index_dir)
    tab = context.new_page()
    ended: list[tuple[str, str]] = []

    def done(request: Request) -> None:
        if request.url.startswith(victim):
            ended.append((request.method, urlsplit(request.url).path))

    tab.on("requestfinished", done)
    tab.on("requestfailed", done)
    with attacker_site(victim) as url:
        tab.goto(url)
        for _ in range(300):
            if len(ended) >= 6:
                break
            tab.wait_for_timeout(50)
    assert set(ended) == ATTACKS and len(ended) == 6, ended
    for _ in range(20):  # an answer asked in the background lands within a moment
        assert recorded_answers(index_dir) == before
        tab.wait_for_timeout(100)
    tab.close()


def test_a_page_on_another_port_cannot_make_a_logged_in_browser_ask(
    browser: Browser, auth_server: AuthServer
) -> None:
    context = browser.new_context()
    try:
        login: SetCookieParam = {
            "name": "qp_key",
            "value": auth_server.token,
            "url": auth_server.origin,
            "httpOnly": True,
            "sameSite": "Strict",
        }
        context.add_cookies([login])
        run_attack(context, auth_server.origin, auth_server.index_dir)
        # the browser was logged in all along, and its own page still asks
        page = context.new_page()
        before = recorded_answers(auth_server.index_dir)
        ask(page, auth_server.origin, OWN_QUESTION, stream=True)
        assert recorded_answers(auth_server.index_dir) == before + 1
    finally:
        context.close()


def test_a_page_on_another_port_cannot_make_a_no_auth_server_ask(
    browser: Browser, demo_server: DemoServer
) -> None:
    context = browser.new_context()
    try:
        run_attack(context, demo_server.origin, demo_server.index_dir)
        page = context.new_page()
        before = recorded_answers(demo_server.index_dir)
        ask(page, demo_server.origin, OWN_QUESTION, stream=True)
        assert recorded_answers(demo_server.index_dir) == before + 1
    finally:
        context.close()


def test_a_draft_opens_no_generated_block_for_whitespace_between_quotes(
    page: Page, hostile: Hostile
) -> None:
    """A reply of quotes separated by blank lines streams whitespace as prose: the
    draft draws the quotes and no empty "Generated — not a quote" block."""
    response = page.request.get(f"{hostile.scripted}/v1/search", params={"q": MODEL_QUESTION})
    assert response.ok, response.text()
    hit = response.json()["hits"][0]
    words = first_sentence(hit["text"])
    hostile.model.script = [f'\n\n<quote ref="{hit["ref"]}">{words}</quote>\n\n \n']

    result = ask(page, hostile.scripted, MODEL_QUESTION, stream=True, watch=True)
    seen: dict[str, Any] = page.evaluate("() => window.__qpSeen")
    assert seen["draftFigures"] >= 1, seen
    assert seen["prose"] == 0, seen
    assert result.locator("section.generated").count() == 0


# --- names that pass for others ----------------------------------------------------

HIDDEN = re.compile("[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
"""The characters that reorder or hide text: none may reach the page raw."""


def test_bidi_and_zero_width_characters_in_names_are_shown(
    page: Page, spoofing_server: DemoServer, shoot: Shoot
) -> None:
    origin = spoofing_server.origin
    page.goto(f"{origin}/library")
    table = page.locator("#library-table")
    titles = table.locator("tbody th").all_inner_texts()
    assert sorted(titles) == [
        "Invoice \\u202egpj.exe\\u202c",
        "Pay\\u200bPal re\\u2060ceipt\\ufeff",
    ]
    files = table.locator(".path-tail").all_inner_texts()
    assert sorted(files) == ["invoice-\\u202egpj.exe\\u202c.md", "pay\\u200bpal.md"]
    assert not HIDDEN.search(table.inner_text())
    delete = table.get_by_role("link", name=re.compile(r"^Delete Invoice \\u202egpj"))
    assert delete.count() == 1
    shoot(page, "16-spoofed-names-in-the-library")

    delete.click()
    assert (
        page.locator("h1").inner_text()
        == "Delete “Invoice \\u202egpj.exe\\u202c” from the library?"
    )
    assert not HIDDEN.search(page.locator("main").inner_text())
    assert not HIDDEN.search(page.title())
    page.go_back()
    table.get_by_role("link", name="Invoice \\u202egpj.exe\\u202c", exact=True).click()
    assert page.locator("h1.source-title").inner_text() == "Invoice \\u202egpj.exe\\u202c"
    assert not HIDDEN.search(page.locator(".source-meta").inner_text())
