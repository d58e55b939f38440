"""The web page in real headless Chromium: asking (streamed and htmx), the blue
verbatim boxes, the source viewers (PDF page images with highlight rectangles, text
with the quote marked), permalinks and history, uploads (and deleting), keyboard-only
use, logging in with an API key, the plain form post without JavaScript, and the
answer modes offered with and without a model.

Every test fails when the page logs a console error or warning, throws, or breaks
the Content-Security-Policy (see conftest). Screenshots: `artifacts/browser/`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playwright.sync_api import expect

from quoteproof.render.html import HTML_LABEL_CHARS
from quoteproof.render.provenance import NO_MODEL_NOTICE
from quoteproof.text.labels import fit_label

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

    from conftest import AuthServer, Hostile, Problems

PDF_QUESTION = "What should be done if signs of a hypersensitivity reaction to remdesivir occur?"
HTML_QUESTION = (
    "How did cigarette smoking change among people living with HIV "
    "in the Michigan Tobacco Use Reduction Program?"
)
Shoot = Callable[["Page", str], Path]


# --- helpers -------------------------------------------------------------------------


def ask(page: Page, origin: str, question: str, *, stream: bool = True) -> Locator:
    """Ask `question` on the ask page (streamed or through htmx); return the final
    answer (`#answer .answer-result`) once it is there."""
    page.goto(f"{origin}/")
    page.locator("#question").fill(question)
    page.locator("#stream").set_checked(stream)
    page.locator("#ask-submit").click()
    return final_answer(page)


def final_answer(page: Page) -> Locator:
    """The final answer fragment, once drawn (and the page no longer busy)."""
    result = page.locator("#answer .answer-result")
    result.wait_for()
    expect(page.locator("#answer")).not_to_have_attribute("aria-busy", "true")
    expect(page.locator("#ask-submit")).to_be_enabled()
    return result


def recorded(page: Page, origin: str) -> dict[str, Any]:
    """The answer JSON recorded for the answer the page shows (via its permalink)."""
    href = page.locator("#permalink").get_attribute("href")
    assert href and href.startswith("/answers/")
    response = page.request.get(f"{origin}/v1{href}")
    assert response.ok, response.text()
    answer: dict[str, Any] = response.json()["answer"]
    return answer


def quote_segments(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer's quotes in the order they are drawn."""
    quotes = {quote["id"]: quote for quote in answer["quotes"]}
    return [quotes[s["quote_id"]] for s in answer["segments"] if s["type"] == "quote"]


def rgb(css_colour: str) -> tuple[int, int, int]:
    found = re.fullmatch(r"rgba?\((\d+), (\d+), (\d+)(?:, [\d.]+)?\)", css_colour)
    assert found, css_colour
    red, green, blue = (int(part) for part in found.groups())
    return red, green, blue


def check_figures(answer_region: Locator, answer: dict[str, Any]) -> None:
    """One blue verbatim figure per quote of `answer`, in order: caption with the
    label, blockquote with exactly the quote's text, a link to the source viewer."""
    quotes = quote_segments(answer)
    figures = answer_region.locator("figure.verbatim")
    assert figures.count() == len(quotes) >= 1
    for position, quote in enumerate(quotes):
        figure = figures.nth(position)
        caption = figure.locator("figcaption")
        assert "Verbatim from source" in caption.inner_text()
        full_label = " ".join(quote["label"].split())
        shown = caption.locator(".quote-label")
        assert shown.get_attribute("title") == full_label  # the whole label on hover
        assert shown.inner_text() == fit_label(full_label, HTML_LABEL_CHARS)
        assert figure.locator("blockquote.quote-text").text_content() == quote["text"]
        href = figure.locator("a.source-link").get_attribute("href")
        assert href and href.startswith("/sources/") and href.endswith("#quote")
        red, green, blue = rgb(figure.evaluate("e => getComputedStyle(e).borderLeftColor"))
        assert blue >= 150 and blue > red + 80 and blue > green + 40, (red, green, blue)
        assert figure.evaluate("e => getComputedStyle(e).borderLeftStyle") == "solid"
    # model prose (none from the extractive backend) is never inside a figure
    assert answer_region.locator("figure.verbatim section.generated").count() == 0


def in_viewport(locator: Locator) -> bool:
    return bool(
        locator.evaluate(
            """e => { const r = e.getBoundingClientRect();
                      return r.bottom > 0 && r.top < innerHeight
                          && r.width > 0 && r.height > 0; }"""
        )
    )


def check_pdf_viewer(page: Page) -> None:
    """The PDF viewer at a quote: the anchored page's image is loaded and at least
    one highlight rectangle lies on it, in the overlay drawn over the image."""
    frame = page.locator("#quote.page-frame")
    image = frame.locator("img.page-image")
    image.wait_for()
    page.wait_for_function(
        "() => { const i = document.querySelector('#quote img.page-image');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )
    assert image.evaluate("i => i.naturalWidth") > 0
    overlay = frame.locator("svg.page-overlay")
    assert overlay.is_visible()
    image_box, overlay_box = image.bounding_box(), overlay.bounding_box()
    assert image_box and overlay_box
    for key in ("x", "y", "width", "height"):  # the overlay covers exactly the image
        assert abs(image_box[key] - overlay_box[key]) <= 1.5, (key, image_box, overlay_box)
    rects = overlay.locator("rect.highlight")
    assert rects.count() >= 1
    first = rects.first
    assert first.is_visible()
    box = first.bounding_box()
    assert box and box["width"] > 1 and box["height"] > 1
    assert overlay_box["x"] - 1 <= box["x"] <= overlay_box["x"] + overlay_box["width"]
    assert overlay_box["y"] - 1 <= box["y"] <= overlay_box["y"] + overlay_box["height"]
    assert in_viewport(first), "the first highlight is scrolled into view"
    assert page.evaluate("() => document.activeElement && document.activeElement.id") == "quote"


# --- tests ---------------------------------------------------------------------------


def test_streamed_answer_from_the_pdf_and_its_page_view(
    page: Page, demo_origin: str, shoot: Shoot
) -> None:
    result = ask(page, demo_origin, PDF_QUESTION, stream=True)
    answer = recorded(page, demo_origin)
    assert answer["question"] == PDF_QUESTION and answer["status"] == "answered"
    check_figures(result, answer)
    quotes = quote_segments(answer)
    assert all(q["source_path"].endswith("veklury_remdesivir_label_oct2020.pdf") for q in quotes)
    assert any("hypersensitivity" in q["text"].lower() for q in quotes)
    shoot(page, "01-ask-streamed-pdf-answer")

    figure = result.locator("figure.verbatim").first
    figure.locator("a.source-link").click()
    page.wait_for_url(re.compile(r"/sources/[^?]+\?.*#quote$"))
    assert page.locator("h1.source-title").is_visible()
    check_pdf_viewer(page)
    # the selected text above the pages is the quote, verbatim
    assert page.locator(".span-text-body").text_content() == quotes[0]["text"]
    shoot(page, "02-pdf-source-viewer")


# Records, from before the question is sent, the order in which the answer region
# gets a draft verbatim figure (drawn from a `quote` event) and the final answer.
ORDER_WATCH = """
() => {
  const order = [];
  window.__qpOrder = order;
  const note = (what) => { if (!order.includes(what)) order.push(what); };
  new MutationObserver(records => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType !== 1) continue;
        const figures = node.matches('figure.verbatim') ? [node]
          : [...node.querySelectorAll('figure.verbatim')];
        if (figures.some(f => f.closest('.draft'))) note('draft figure');
        if (node.matches('.answer-result') || node.querySelector('.answer-result')) note('final');
      }
    }
  }).observe(document.getElementById('answer'), { childList: true, subtree: true });
}
"""


def test_the_streamed_answer_is_posted_and_drawn_as_a_draft_first(
    page: Page, demo_origin: str
) -> None:
    sent: list[tuple[str, str, str]] = []
    page.on(
        "request",
        lambda r: sent.append((r.method, r.url, r.post_data or "")) if "/ask" in r.url else None,
    )
    page.goto(f"{demo_origin}/")
    page.evaluate(ORDER_WATCH)
    page.locator("#question").fill(PDF_QUESTION)
    assert page.locator("#stream").is_checked()
    page.locator("#ask-submit").click()
    result = final_answer(page)
    assert page.evaluate("() => window.__qpOrder") == ["draft figure", "final"]
    ((method, url, body),) = sent
    assert (method, url) == ("POST", f"{demo_origin}/ask/stream")
    token = page.locator("#ask-form input[name=csrf_token]").get_attribute("value")
    assert token and f"csrf_token={token}" in body
    check_figures(result, recorded(page, demo_origin))


def test_html_source_viewer_marks_the_quote(page: Page, demo_origin: str, shoot: Shoot) -> None:
    result = ask(page, demo_origin, HTML_QUESTION)
    answer = recorded(page, demo_origin)
    check_figures(result, answer)
    figures = result.locator("figure.verbatim")
    htm = [
        i for i, quote in enumerate(quote_segments(answer)) if quote["source_path"].endswith(".htm")
    ]
    assert htm, "a quote from a CDC page"
    figure = figures.nth(htm[-1])  # the last one: its link is further down the page
    quote_text = figure.locator("blockquote.quote-text").text_content()
    assert ".htm" in figure.locator(".where").inner_text()
    shoot(page, "03-ask-html-answer")

    figure.locator("a.source-link").click()
    page.wait_for_url(re.compile(r"/sources/.*#quote$"))
    mark = page.locator("mark#quote")
    mark.wait_for()
    assert mark.is_visible()
    assert mark.text_content() == quote_text
    assert mark.evaluate("e => e.children.length") == 0  # the span is text only
    assert page.evaluate("() => document.activeElement && document.activeElement.id") == "quote"
    assert in_viewport(mark)
    shoot(page, "04-html-source-viewer")


def test_htmx_answer_permalink_and_history(page: Page, demo_origin: str, shoot: Shoot) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(f"{request.method} {request.url}"))
    result = ask(page, demo_origin, PDF_QUESTION, stream=False)
    assert f"POST {demo_origin}/ask" in requests
    assert not any("/ask/stream" in r for r in requests)
    assert page.url == f"{demo_origin}/"  # htmx swapped the answer in place
    answer = recorded(page, demo_origin)
    check_figures(result, answer)
    assert result.locator("h2.question").inner_text() == f"Question: {PDF_QUESTION}"
    shoot(page, "05-ask-htmx-answer")

    texts = result.locator("blockquote.quote-text").all_text_contents()
    page.locator("#permalink").click()
    page.wait_for_url(re.compile(r"/answers/[^/?#]+$"))
    assert page.locator("h1").inner_text() == "Recorded answer"
    recorded_region = page.locator("#answer")
    assert recorded_region.locator("blockquote.quote-text").all_text_contents() == texts
    check_figures(recorded_region, answer)
    shoot(page, "06-recorded-answer")

    page.goto(f"{demo_origin}/history")
    table = page.locator("#history-table")
    link = table.get_by_role("link", name=PDF_QUESTION).first
    assert link.is_visible()
    shoot(page, "07-history")
    link.click()
    page.wait_for_url(re.compile(r"/answers/"))
    assert page.locator("#answer figure.verbatim").count() >= 1


def test_upload_makes_a_document_searchable(
    page: Page, demo_origin: str, shoot: Shoot, tmp_path: Path
) -> None:
    word = "zq" + uuid.uuid4().hex[:10]
    sentence = f"The rare mineral {word} glows green under ultraviolet light."
    upload = tmp_path / f"notes-{word}.md"
    upload.write_text(f"# Field notes\n\n{sentence}\n\nNothing else is known.\n", "utf-8")

    page.goto(f"{demo_origin}/library")
    assert page.locator("#library-table").get_by_text(upload.name).count() == 0
    page.locator("#upload-files").set_input_files(upload)
    page.locator("#upload-collection").fill("default")
    with page.expect_response(lambda r: r.url.endswith("/library/upload")) as posted:
        page.locator("#upload-submit").click()
    if "job-done" in posted.value.text():  # it ended at once: the table comes with it
        assert 'id="library-table" class="library-table" hx-swap-oob' in posted.value.text()
    done = page.locator("#upload-status .job-done")
    done.wait_for()
    assert "Ingested 1 of 1 file" in done.inner_text()
    assert done.locator(".file-added").inner_text() == f"{upload.name}: added"
    # the document table comes with the finished job (swapped in out of band)
    page.locator("#library-table").get_by_text(upload.name).wait_for()
    shoot(page, "08-library-upload-done")

    response = page.request.get(f"{demo_origin}/v1/search", params={"q": word})
    assert response.ok
    hits = response.json()["hits"]
    assert hits and word in hits[0]["text"] and hits[0]["source_path"].endswith(upload.name)

    result = ask(page, demo_origin, f"What does {word} do under ultraviolet light?")
    texts = result.locator("figure.verbatim blockquote.quote-text").all_text_contents()
    assert any(word in text for text in texts), texts
    shoot(page, "09-ask-uploaded-document")

    # Delete… asks first, on a page of its own (no browser dialog, which a browser
    # may block or a user wave through), and says how to undo; Cancel keeps it
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    page.goto(f"{demo_origin}/library")
    row = page.locator("#library-table tr", has_text=upload.name)
    row.get_by_role("link", name="Delete Field notes…").click()
    page.wait_for_url(re.compile(r"/library/[^/]+/retire$"))
    assert page.locator("h1").inner_text() == "Delete “Field notes” from the library?"
    expect(page.locator("main")).to_contain_text("To undo, upload the same file again")
    shoot(page, "10-delete-confirmation")
    page.get_by_role("link", name="Cancel, keep it").click()
    page.wait_for_url(f"{demo_origin}/library")
    expect(page.locator("#library-table tr", has_text=upload.name)).to_have_count(1)
    response = page.request.get(f"{demo_origin}/v1/search", params={"q": word})
    assert response.ok and response.json()["hits"]

    # confirmed, it leaves the table and search, and the page says how to undo
    row.get_by_role("link", name="Delete Field notes…").click()
    page.get_by_role("button", name="Delete from the library").click()
    notice = page.get_by_role("status").filter(has_text="Deleted")
    expect(notice).to_have_text(
        f"Deleted “Field notes” ({upload.name}) from the library. "
        "To undo, upload the same file again."
    )
    expect(page.locator("#library-table tr", has_text=upload.name)).to_have_count(0)
    shoot(page, "11-deleted-with-undo-note")
    assert dialogs == []
    response = page.request.get(f"{demo_origin}/v1/search", params={"q": word})
    assert response.ok and not response.json()["hits"]


def test_keyboard_only(page: Page, demo_origin: str, shoot: Shoot) -> None:
    page.goto(f"{demo_origin}/")
    # form fields have accessible names from their labels
    assert page.get_by_label("Question", exact=True).evaluate("e => e.id") == "question"
    assert page.get_by_label("Answer mode").evaluate("e => e.id") == "mode"
    assert page.get_by_label("Context", exact=True).count() == 0  # no model: passages only
    draft_box = page.get_by_label("Show a draft while the answer is written")
    assert draft_box.evaluate("e => e.id") == "stream"
    assert page.get_by_role("button", name="Ask").evaluate("e => e.id") == "ask-submit"

    def focused() -> dict[str, str]:
        info: dict[str, str] = page.evaluate(
            """() => { const e = document.activeElement;
                       return {tag: e.tagName.toLowerCase(), id: e.id || '',
                               cls: e.className || '', text: (e.textContent || '').trim()}; }"""
        )
        return info

    page.keyboard.press("Tab")
    first = focused()
    assert first["cls"] == "skip-link" and first["text"] == "Skip to main content"
    assert page.locator(".skip-link").is_visible()  # shown when focused
    shoot(page, "10-keyboard-skip-link")
    page.keyboard.press("Enter")
    assert focused()["id"] == "main"
    page.keyboard.press("Tab")
    assert focused()["id"] == "question"
    page.keyboard.type(PDF_QUESTION)
    assert page.locator("#question").input_value() == PDF_QUESTION
    order = []
    for _ in range(3):
        page.keyboard.press("Tab")
        order.append(focused()["id"])
    assert order == ["mode", "stream", "ask-submit"]
    page.keyboard.press("Enter")
    result = final_answer(page)
    assert result.locator("figure.verbatim").count() >= 1
    shoot(page, "11-keyboard-answer")

    # the first source link is reachable with Tab and opens with Enter
    target = result.locator("a.source-link").first.get_attribute("href")
    for _ in range(60):
        page.keyboard.press("Tab")
        if focused()["cls"] == "source-link":
            break
    else:
        raise AssertionError("no source link reached with Tab")
    assert page.evaluate("() => document.activeElement.getAttribute('href')") == target
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/sources/.*#quote$"))
    check_pdf_viewer(page)
    shoot(page, "12-keyboard-source-viewer")


def test_ctrl_enter_in_the_question_asks(page: Page, demo_origin: str) -> None:
    page.goto(f"{demo_origin}/")
    page.locator("#question").focus()
    page.keyboard.type(HTML_QUESTION)
    page.keyboard.press("Control+Enter")
    result = final_answer(page)
    assert result.locator("figure.verbatim").count() >= 1


def test_login_with_an_api_key(
    page: Page, problems: Problems, auth_server: AuthServer, shoot: Shoot
) -> None:
    origin = auth_server.origin
    problems.expect(r"status of 401 .*/login\)$")  # the refused login's page is a 401
    page.goto(f"{origin}/history")
    page.wait_for_url(f"{origin}/login?next=%2Fhistory")
    form = page.locator("#login-form")
    assert form.is_visible()
    key = page.get_by_label("API key")
    assert key.evaluate("e => e.id") == "api-key"
    key.fill("qp_not-a-valid-key")
    form.get_by_role("button", name="Log in").click()
    alert = page.get_by_role("alert")
    assert "not valid" in alert.inner_text()
    assert page.locator("#api-key").get_attribute("aria-invalid") == "true"
    shoot(page, "13-login-refused")

    page.get_by_label("API key").fill(auth_server.token)
    page.locator("#login-form").get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{origin}/history")
    assert "Signed in as alice" in page.locator(".session").inner_text()
    assert "qp_key" not in page.evaluate("() => document.cookie")  # HttpOnly
    result = ask(page, origin, PDF_QUESTION)
    answer = recorded(page, origin)
    check_figures(result, answer)
    shoot(page, "14-signed-in-answer")

    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(f"{origin}/login")
    page.goto(f"{origin}/")
    page.wait_for_url(re.compile(r"/login\?next="))


def test_without_javascript_the_forms_post(
    browser: Browser, demo_origin: str, shoot: Shoot
) -> None:
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    try:
        page = context.new_page()
        page.goto(f"{demo_origin}/")
        page.locator("#question").fill(PDF_QUESTION)
        page.locator("#stream").set_checked(False)
        page.locator("#ask-submit").click()
        page.wait_for_url(f"{demo_origin}/ask")  # a plain form post: the page with the answer
        result = page.locator("#answer .answer-result")
        assert result.locator("figure.verbatim").count() >= 1
        check_figures(result, recorded(page, demo_origin))
        shoot(page, "15-no-javascript-answer")
    finally:
        context.close()


def mode_values(page: Page, origin: str) -> list[str]:
    """The answer modes the ask page at `origin` offers."""
    page.goto(f"{origin}/")
    return [o.get_attribute("value") or "" for o in page.locator("#mode option").all()]


def test_modes_offered_and_which_model_answered(page: Page, hostile: Hostile, shoot: Shoot) -> None:
    # without a model: only quote mode, and the answer says it was made without one
    assert mode_values(page, hostile.extractive) == ["quote"]
    result = ask(page, hostile.extractive, "How often does moonpetal need watering?")
    expect(result.locator("p.no-model-notice")).to_have_text(f"Note: {NO_MODEL_NOTICE}")
    expect(result.locator("p.answer-meta")).to_have_count(0)
    shoot(page, "16-answer-without-a-model")
    # with a model: every mode, no such notice, the model and its server named
    assert mode_values(page, hostile.scripted) == ["quote", "cite", "rationale", "agent"]
    hostile.model.script = ["<no-answer/>"]
    result = ask(page, hostile.scripted, "How often does moonpetal need watering?")
    expect(result.locator("p.no-model-notice")).to_have_count(0)
    expect(result.locator("p.answer-meta")).to_contain_text(
        f"model: m (openai) · server: {hostile.model.base_url}"
    )
    shoot(page, "17-answer-with-a-model")
