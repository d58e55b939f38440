"""Tests for the web page (quoteproof.server.web): pages, the answer fragment, the
streamed draft, the source viewer, the library, history and login."""

from __future__ import annotations

import io
import json
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from conftest import write_corpus
from helpers.dom import Node, parse
from helpers.forms import with_token
from helpers.llm_servers import ScriptedOpenAIServer, content_text
from helpers.pdfs import GIANT_SIDE, GIANT_WORDS, TWO_LINES, giant_page_pdf, report_pdf
from quoteproof import Index
from quoteproof.ingest.formats import SUPPORTED_SUFFIXES
from quoteproof.keys import create_key
from quoteproof.model import Box, sha256_text
from quoteproof.server import pdf_pages
from quoteproof.server.app import create_app
from quoteproof.server.pdf_pages import (
    MAX_PAGE_PIXELS,
    PAGE_SCALE,
    PageGeometry,
    render_scale,
)
from quoteproof.server.state import AppState, ServerConfig
from quoteproof.service import CONTEXT_CHOICES
from quoteproof.store.sqlite import DB_FILENAME

PDF_QUESTION = "hand hygiene single most important measure"
HTML_QUESTION = "What is normal blood pressure?"

# ----------------------------------------------------------------- page checks


def assert_no_inline_code(root: Node) -> None:
    """What the CSP forbids, and what would run: no inline script or style, no `style`
    attribute, no handler attribute, no `javascript:` URL; scripts only from /static."""
    for node in root.iter()[1:]:
        for name, value in node.attrs.items():
            assert not name.startswith("on"), f"handler {name} on <{node.tag}>"
            assert name != "style", f"style attribute on <{node.tag}>"
            assert "javascript:" not in value.lower().replace(" ", ""), (name, value)
        assert node.tag != "style", "inline <style>"
        if node.tag == "script":
            assert node.attrs.get("src", "").startswith("/static/"), node.attrs
            assert not node.text().strip(), "inline script"


def assert_accessible_page(root: Node) -> None:
    """One `<main>`, a skip link to it, and a label for every form field."""
    (main,) = root.find_all("main")
    skip = [a for a in root.find_all("a", "skip-link")]
    assert skip and skip[0].attrs["href"] == f"#{main.attrs['id']}"
    labelled = {n.attrs.get("for") for n in root.find_all("label")}
    for node in root.iter():
        if node.tag in ("input", "select", "textarea") and node.attrs.get("type") != "hidden":
            assert node.attrs.get("id") in labelled or "aria-label" in node.attrs, node.attrs
    for button in root.find_all("button"):
        assert button.text().strip() or button.attrs.get("aria-label"), button.attrs


def verbatim_figures(root: Node) -> list[Node]:
    return [n for n in root.iter() if "verbatim" in n.classes()]


def page_ok(client: TestClient, url: str) -> Node:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("text/html")
    root = parse(response.text)
    assert_no_inline_code(root)
    assert_accessible_page(root)
    return root


# ----------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def web_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small corpus plus a 4-page PDF, in collection `default`; one Markdown file
    in collection `other`."""
    root = tmp_path_factory.mktemp("web")
    corpus = write_corpus(root)
    (corpus / "report.pdf").write_bytes(report_pdf())
    secret = root / "secret"
    secret.mkdir()
    (secret / "secret.md").write_text("# Secret plans\n\nThe launch code is swordfish.\n")
    location = root / "index"
    with Index.open(location, create=True) as index:
        assert all(r.status == "added" for r in index.ingest([corpus], embed=False))
        assert all(
            r.status == "added" for r in index.ingest([secret], embed=False, collection="other")
        )
    return location


def make_client(index: Path, tmp_path: Path, **config: Any) -> Iterator[TestClient]:
    settings = {"index": str(index), "upload_dir": tmp_path / "uploads", "embed": False}
    app = create_app(ServerConfig(**{**settings, **config}))
    with TestClient(app) as client:
        yield client


@pytest.fixture
def client(web_index: Path, tmp_path: Path) -> Iterator[TestClient]:
    """A no-auth app on the shared index."""
    yield from make_client(web_index, tmp_path, auth=False)


@pytest.fixture
def fresh_client(tmp_path: Path) -> Iterator[TestClient]:
    """A no-auth app on an index of its own (for uploads and deletes)."""
    location = tmp_path / "own-index"
    with Index.open(location, create=True) as index:
        index.ingest([write_corpus(tmp_path)], embed=False)
    yield from make_client(location, tmp_path, auth=False, ingest_hold=hold_file(tmp_path))


@dataclass(frozen=True)
class Keys:
    default: str
    other: str


@pytest.fixture(scope="module")
def keys(web_index: Path) -> Keys:
    with Index.open(web_index) as index:
        default, _ = create_key(index.store, "alice", ["default"])
        other, _ = create_key(index.store, "bob", ["other"])
    return Keys(default, other)


@pytest.fixture
def keyed(web_index: Path, tmp_path: Path, keys: Keys) -> Iterator[TestClient]:
    """An app that needs a key."""
    yield from make_client(web_index, tmp_path, auth=True)


def ask_fragment(client: TestClient, question: str, mode: str = "quote") -> tuple[Node, str]:
    data = with_token(client, {"question": question, "mode": mode})
    response = client.post("/ask", data=data, headers={"HX-Request": "true"})
    assert response.status_code == 200, response.text
    root = parse(response.text)
    (permalink,) = [a for a in root.find_all("a") if a.attrs.get("id") == "permalink"]
    return root, permalink.attrs["href"].removeprefix("/answers/")


def recorded_answer(client: TestClient, entry_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/answers/{entry_id}")
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()["answer"]
    return answer


def quote_segments(answer: dict[str, Any]) -> int:
    return sum(segment["type"] == "quote" for segment in answer["segments"])


def sse_events(client: TestClient, fields: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """The events of the stream answering the ask form's `fields` (posted with the
    form token, as the page's script does)."""
    events = []
    with client.stream("POST", "/ask/stream", data=with_token(client, fields)) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                assert name is not None
                events.append((name, json.loads(line.removeprefix("data: "))))
                name = None
    return events


def quoting_reply(prose: str, words: str, tail: str = "") -> Callable[[dict[str, Any]], str]:
    """A model reply: `prose` citing, then quoting `words` from, the source that holds them."""

    def build(body: dict[str, Any]) -> str:
        prompt = "\n".join(content_text(m.get("content")) for m in body["messages"])
        sources = re.findall(r'<source ref="([^"]+)">(.*?)</source>', prompt, re.S)
        ref = next(ref for ref, text in sources if words in text)
        return f'{prose} [{ref}] <quote ref="{ref}">{words}</quote>{tail}'

    return build


# ----------------------------------------------------------------- pages


def test_every_page_renders_without_inline_code(client: TestClient) -> None:
    _, entry_id = ask_fragment(client, HTML_QUESTION)
    answer = recorded_answer(client, entry_id)
    quote = answer["quotes"][0]
    pdf_doc = next(
        d for d in client.get("/v1/documents").json()["documents"] if d["format"] == "pdf"
    )
    urls = [
        "/",
        "/library",
        "/history",
        "/login",
        f"/answers/{entry_id}",
        f"/answers/{entry_id}?cited=1",
        f"/sources/{quote['doc_id']}?version=1&start={quote['start']}&end={quote['end']}",
        f"/sources/{quote['doc_id']}",
        f"/sources/{pdf_doc['doc_id']}",
        f"/sources/{pdf_doc['doc_id']}?start=0&end=40&view=text",
    ]
    for url in urls:
        page_ok(client, url)
    ask = page_ok(client, "/")
    form = ask.by_id("ask-form")
    assert form is not None and form.attrs["hx-post"] == "/ask"
    assert form.attrs["hx-target"] == "#answer"
    region = ask.by_id("answer")
    assert region is not None and region.attrs["aria-live"] == "polite"
    assert ask.by_id("question") is not None and ask.by_id("question").tag == "textarea"  # type: ignore[union-attr]
    scripts = [n.attrs["src"] for n in ask.find_all("script")]
    assert scripts == ["/static/htmx.min.js", "/static/app.js"]
    for path in ("/static/app.js", "/static/app.css", "/static/htmx.min.js"):
        assert client.get(path).status_code == 200


def test_static_script_draws_model_text_as_text_only(repo_root: Path) -> None:
    script = (repo_root / "src/quoteproof/server/static/app.js").read_text()
    assert 'fetch("/ask/stream", {\n      method: "POST"' in script
    assert "EventSource" not in script and "textContent = data.text" in script
    # innerHTML / insertAdjacentHTML only ever take `data.html` (server-made HTML)
    for match in re.finditer(r"(innerHTML\s*=|insertAdjacentHTML\()([^;]*)", script):
        assert "data.html" in match.group(2), match.group(0)
    assert "eval(" not in script and "new Function" not in script


def test_answer_fragment_has_one_figure_per_quote(client: TestClient) -> None:
    root, entry_id = ask_fragment(client, HTML_QUESTION)
    answer = recorded_answer(client, entry_id)
    assert answer["status"] == "answered" and quote_segments(answer) >= 1
    figures = verbatim_figures(root)
    assert len(figures) == quote_segments(answer)
    assert all(f.tag == "figure" for f in figures)
    texts = [f.find_all("blockquote")[0].text() for f in figures]
    by_id = {q["id"]: q["text"] for q in answer["quotes"]}
    assert texts == [by_id[s["quote_id"]] for s in answer["segments"] if s["type"] == "quote"]
    for figure in figures:
        (link,) = figure.find_all("a", "source-link")
        assert link.attrs["href"].startswith("/sources/")
    assert_no_inline_code(root)


def test_plain_form_post_returns_the_whole_page(client: TestClient) -> None:
    response = client.post("/ask", data=with_token(client, {"question": HTML_QUESTION}))
    assert response.status_code == 200
    root = parse(response.text)
    assert_no_inline_code(root)
    answer = root.by_id("answer")
    assert answer is not None and verbatim_figures(answer)
    question = root.by_id("question")
    assert question is not None and question.text() == HTML_QUESTION


def test_a_link_with_a_question_fills_the_box_and_asks_nothing(client: TestClient) -> None:
    """A newcomer found no way to link to a question: `/?q=...` fills the question
    box, escaped, and shows no answer until the reader asks."""
    question = 'What is <b>"the dose"</b> & for whom?'
    root = page_ok(client, "/?" + urlencode({"q": question}))
    box = root.by_id("question")
    assert box is not None and box.text() == question
    answer = root.by_id("answer")
    assert answer is None or not verbatim_figures(answer)
    assert "<b>" not in client.get("/?" + urlencode({"q": question})).text


def test_bad_questions_are_errors_not_answers(client: TestClient) -> None:
    htmx = {"HX-Request": "true"}
    data = with_token(client, {"question": "  ", "mode": "quote"})
    response = client.post("/ask", data=data, headers=htmx)
    assert response.status_code == 400 and 'role="alert"' in response.text
    response = client.post("/ask", data={**data, "question": "x", "mode": "evil"}, headers=htmx)
    assert response.status_code == 400
    # `cite` needs a model; the extractive backend cannot serve it
    response = client.post("/ask", data={**data, "question": "x", "mode": "cite"}, headers=htmx)
    assert response.status_code == 400 and "mode cite needs a language model" in response.text
    assert "--" not in parse(response.text).text()  # no command-line options on the page
    assert client.post("/ask/stream", data=data).status_code == 400


def offered_modes(client: TestClient) -> list[str]:
    """The values of the ask page's answer-mode options."""
    select = page_ok(client, "/").by_id("mode")
    assert select is not None
    return [option.attrs["value"] for option in select.find_all("option")]


def test_the_page_offers_only_the_modes_the_backend_can_run(
    client: TestClient, web_index: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    assert offered_modes(client) == ["quote"]
    for model_client in make_client(
        web_index, tmp_path, auth=False, llm="openai", model="m", base_url=openai_server.base_url
    ):
        assert offered_modes(model_client) == ["quote", "cite", "rationale", "agent"]


def offered_contexts(client: TestClient) -> list[str]:
    """The values of the ask page's context options ([] when it offers no menu)."""
    select = page_ok(client, "/").by_id("context")
    return [] if select is None else [option.attrs["value"] for option in select.find_all("option")]


def test_without_a_model_the_page_offers_only_the_contexts_that_do_something(
    fresh_client: TestClient, tmp_path: Path
) -> None:
    assert offered_contexts(fresh_client) == []  # passages alone: no menu
    graph = tmp_path / "graph.csv"
    graph.write_text("subject,relation,object\nshingles,causes,painful rash\n", "utf-8")
    with Index.open(tmp_path / "own-index") as index:
        index.import_graph(graph, collection="default")
    assert offered_contexts(fresh_client) == ["paragraphs", "triplets", "both"]


def test_the_ask_form_passes_the_context_chosen_to_the_service(
    client: TestClient, web_index: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    model = {"llm": "openai", "model": "m", "base_url": openai_server.base_url}
    for with_model in make_client(web_index, tmp_path / "menu", auth=False, **model):
        page = page_ok(with_model, "/")
        select = page.by_id("context")
        assert select is not None
        options = select.find_all("option")
        assert [o.attrs["value"] for o in options] == [c.form for c in CONTEXT_CHOICES]
        assert [o.attrs.get("selected") is not None for o in options] == [True, False, False, False]
        help_text = " ".join((page.by_id("context-help") or page).text().split())
        assert all(choice.summary in help_text for choice in CONTEXT_CHOICES)
    htmx = {"HX-Request": "true"}
    data = with_token(client, {"question": HTML_QUESTION, "mode": "quote", "context": "whole"})
    response = client.post("/ask", data=data, headers=htmx)
    assert response.status_code == 200, response.text
    (link,) = [a for a in parse(response.text).find_all("a") if a.attrs.get("id") == "permalink"]
    answer = recorded_answer(client, link.attrs["href"].removeprefix("/answers/"))
    assert answer["context"] == "whole" and answer["status"] == "answered"
    # a plain post redraws the form with the context chosen
    for with_model in make_client(web_index, tmp_path / "redraw", auth=False, **model):
        redrawn = with_token(with_model, {"question": HTML_QUESTION, "context": "whole"})
        openai_server.script = ['<quote ref="PID-1">x</quote>']
        chosen = parse(with_model.post("/ask", data=redrawn).text).by_id("context")
        assert chosen is not None
        selected = [o.attrs["value"] for o in chosen.find_all("option") if "selected" in o.attrs]
        assert selected == ["whole"]
    events = sse_events(client, {"question": HTML_QUESTION, "context": "whole"})
    final = events[-1][1]["permalink"].removeprefix("/answers/")
    assert recorded_answer(client, final)["context"] == "whole"
    refused = client.post("/ask", data={**data, "context": "evil"}, headers=htmx)
    assert refused.status_code == 400 and "Unknown context 'evil'" in parse(refused.text).text()
    assert client.post("/ask/stream", data={**data, "context": "evil"}).status_code == 400
    for with_model in make_client(web_index, tmp_path / "model", auth=False, **model):
        agent = with_token(with_model, {"question": HTML_QUESTION, "mode": "agent"})
        response = with_model.post("/ask", data={**agent, "context": "both"}, headers=htmx)
        assert response.status_code == 400 and "agent mode searches for itself" in response.text
        assert "--" not in parse(response.text).text()  # no command-line options on the page
    assert len(openai_server.requests) == 1  # the redrawn form's answer; agent never asked


def test_cross_site_posts_are_refused(client: TestClient) -> None:
    data = with_token(client, {"question": HTML_QUESTION})
    for foreign in [
        {"Origin": "http://evil.example", "HX-Request": "true"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},  # a page on another port of this host
        {"Origin": "http://testserver:8001"},
        {"Origin": "null"},
    ]:
        assert client.post("/ask", data=data, headers=foreign).status_code == 403, foreign
    same = client.post(
        "/ask", data=data, headers={"Origin": "http://testserver", "HX-Request": "true"}
    )
    assert same.status_code == 200
    # a plain form post under `Referrer-Policy: no-referrer`: Chromium sends
    # `Origin: null` with `Sec-Fetch-Site: same-origin`, which only the page can send
    plain = {"Origin": "null", "Sec-Fetch-Site": "same-origin"}
    assert client.post("/ask", data=data, headers=plain).status_code == 200


# ----------------------------------------------------------------- streaming


def test_stream_yields_prose_then_quotes_then_the_final_fragment(
    web_index: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.script = [quoting_reply("Normal is below 120/80 mmHg.", "lower than 120/80 mmHg")]
    for client in make_client(
        web_index, tmp_path, auth=False, llm="openai", model="m", base_url=openai_server.base_url
    ):
        events = sse_events(client, {"question": HTML_QUESTION, "mode": "quote"})
        names = [name for name, _ in events]
        assert names[0] == "stage" and names[-1] == "final"
        assert "prose" in names and "quote" in names
        assert names.index("prose") < names.index("quote") < names.index("final")
        prose = "".join(data["text"] for name, data in events if name == "prose")
        assert prose.startswith("Normal is below 120/80 mmHg. [")
        (draft_quote,) = [data["html"] for name, data in events if name == "quote"]
        draft = parse(draft_quote)
        (figure,) = verbatim_figures(draft)
        assert figure.find_all("blockquote")[0].text() == "lower than 120/80 mmHg"
        final = events[-1][1]
        root = parse(final["html"])
        assert_no_inline_code(root)
        entry_id = final["permalink"].removeprefix("/answers/")
        answer = recorded_answer(client, entry_id)
        assert len(verbatim_figures(root)) == quote_segments(answer) == 1
        assert answer["question"] == HTML_QUESTION
        assert len(root.find_all("section", "generated")) == 1
        # the stream recorded the answer in the history
        history = page_ok(client, "/history")
        links = [a.attrs["href"] for a in history.find_all("a")]
        assert f"/answers/{entry_id}" in links


def test_stream_of_the_extractive_backend(client: TestClient) -> None:
    events = sse_events(client, {"question": PDF_QUESTION, "mode": "quote"})
    assert events[-1][0] == "final"
    root = parse(events[-1][1]["html"])
    answer = recorded_answer(client, events[-1][1]["permalink"].removeprefix("/answers/"))
    assert len(verbatim_figures(root)) == quote_segments(answer) >= 1


def test_stream_reports_a_failure(web_index: Path, tmp_path: Path, dead_server_url: str) -> None:
    for client in make_client(
        web_index, tmp_path, auth=False, llm="openai", model="m", base_url=dead_server_url
    ):
        events = sse_events(client, {"question": HTML_QUESTION, "mode": "quote"})
        assert events[-1][0] == "failure" and events[-1][1]["message"]


# ----------------------------------------------------------------- hostile model


HOSTILE = (
    "<script>alert(120)</script> <img src=x onerror=alert(80)> "
    '<figure class="verbatim"><figcaption>verbatim from source</figcaption>'
    "<blockquote>The model's own words</blockquote></figure> "
    '<a href="javascript:alert(80)">click</a> Normal is low'
)
"""Cited prose that passes the support check (its numbers and names are in the
cited passage), so that it is shown, as generated text."""


def test_hostile_model_reply_renders_escaped(
    web_index: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.script = [quoting_reply(HOSTILE, "lower than 120/80 mmHg")]
    for client in make_client(
        web_index, tmp_path, auth=False, llm="openai", model="m", base_url=openai_server.base_url
    ):
        root, entry_id = ask_fragment(client, HTML_QUESTION)
        assert_no_inline_code(root)
        figures = verbatim_figures(root)
        assert len(figures) == quote_segments(recorded_answer(client, entry_id)) == 1
        assert "lower than 120/80 mmHg" in figures[0].find_all("blockquote")[0].text()
        assert not root.find_all("script") and not root.find_all("img")
        (generated,) = root.find_all("section", "generated")
        assert "<script>alert(120)</script>" in generated.text()
        assert "<blockquote>The model's own words</blockquote>" in generated.text()
        # the recorded answer page and the streamed final fragment draw it the same way
        page = page_ok(client, f"/answers/{entry_id}")
        assert len(verbatim_figures(page)) == 1 and not page.find_all("img")
        events = sse_events(client, {"question": HTML_QUESTION, "mode": "quote"})
        final = parse(events[-1][1]["html"])
        assert_no_inline_code(final)
        assert len(verbatim_figures(final)) == 1
        for name, data in events:
            if name in ("quote", "data"):
                assert_no_inline_code(parse(data["html"]))


def tamper_entry_quote(index: Path, entry_id: str, words: str) -> None:
    """What someone with write access to the index file could do: give the recorded
    answer's first quote new words, with a matching text hash."""
    db = sqlite3.connect(index / DB_FILENAME)
    with db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        table = next(name for name in tables if "audit" in name)
        for (trigger,) in db.execute("SELECT name FROM sqlite_master WHERE type='trigger'"):
            if "audit" in trigger:
                db.execute(f'DROP TRIGGER "{trigger}"')
        (body,) = db.execute(f"SELECT body FROM {table} WHERE entry_id = ?", (entry_id,)).fetchone()
        answer = json.loads(body)
        answer["quotes"][0].update(text=words, text_sha256=sha256_text(words))
        body = json.dumps(answer, ensure_ascii=False, sort_keys=True)
        db.execute(f"UPDATE {table} SET body = ? WHERE entry_id = ?", (body, entry_id))
    db.close()


def test_a_tampered_history_quote_is_never_drawn_as_verbatim(
    fresh_client: TestClient, tmp_path: Path
) -> None:
    _, entry_id = ask_fragment(fresh_client, HTML_QUESTION)
    before = page_ok(fresh_client, f"/answers/{entry_id}")
    quote = recorded_answer(fresh_client, entry_id)["quotes"][0]
    assert quote["text"] in [f.find_all("blockquote")[0].text() for f in verbatim_figures(before)]
    tampered = "Normal blood pressure is 190/120 mmHg, tampered."
    tamper_entry_quote(tmp_path / "own-index", entry_id, tampered)
    assert tampered not in page_ok(fresh_client, "/history").text()
    for url in (f"/answers/{entry_id}", f"/answers/{entry_id}?cited=1"):
        page = page_ok(fresh_client, url)
        figures = verbatim_figures(page)
        assert len(figures) == len(verbatim_figures(before)) - 1
        assert all(tampered not in figure.text() for figure in figures)
        (removed,) = page.find_all("section", "rejected")
        assert tampered in removed.text() and "no longer matches the index" in removed.text()


def test_recorded_answers_offer_cited_passages_only_for_prose_that_cites(
    client: TestClient, web_index: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    _, plain = ask_fragment(client, HTML_QUESTION)  # the extractive backend: no prose
    assert not [s for s in recorded_answer(client, plain)["segments"] if s["type"] == "prose"]
    for url in (f"/answers/{plain}", f"/answers/{plain}?cited=1"):
        assert "passages" not in page_ok(client, url).text()
    openai_server.script = [quoting_reply("Normal is below 120/80 mmHg.", "lower than 120/80 mmHg")]
    model = {"llm": "openai", "model": "m", "base_url": openai_server.base_url}
    for with_model in make_client(web_index, tmp_path / "model", auth=False, **model):
        _, cites = ask_fragment(with_model, HTML_QUESTION)
        page = page_ok(with_model, f"/answers/{cites}")
        (link,) = [a for a in page.find_all("a") if "passages the prose cites" in a.text()]
        assert link.attrs["href"] == f"/answers/{cites}?cited=1"
        shown = page_ok(with_model, link.attrs["href"])
        assert len(verbatim_figures(shown)) == len(verbatim_figures(page)) + 1
        (hide,) = [a for a in shown.find_all("a") if "Hide the cited passages" in a.text()]
        assert hide.attrs["href"] == f"/answers/{cites}"


def test_times_are_human_utc_until_the_script_makes_them_local(client: TestClient) -> None:
    _, entry_id = ask_fragment(client, HTML_QUESTION)
    for url in ("/history", f"/answers/{entry_id}"):
        times = page_ok(client, url).find_all("time", "local-time")
        assert times
        for node in times:
            iso = node.attrs["datetime"]
            assert node.attrs["title"] == iso
            when = datetime.fromisoformat(iso).astimezone(UTC)
            assert node.text() == f"{when.day} {when:%b %Y, %H:%M} UTC"


# ----------------------------------------------------------------- source viewer


def test_source_viewer_marks_exactly_the_quote_span(client: TestClient, web_index: Path) -> None:
    root, entry_id = ask_fragment(client, HTML_QUESTION)
    quote = recorded_answer(client, entry_id)["quotes"][0]
    href = verbatim_figures(root)[0].find_all("a", "source-link")[0].attrs["href"]
    assert href.endswith("#quote")
    page = page_ok(client, href.removesuffix("#quote"))
    (mark,) = page.find_all("mark")
    assert mark.attrs["id"] == "quote" and mark.attrs["tabindex"] == "-1"
    assert mark.text() == quote["text"]
    (pre,) = page.find_all("pre", "source-text")
    with Index.open(web_index) as index:
        document = index.store.get_document(quote["doc_id"], quote["doc_version"])
    assert document is not None
    # the browser drops the newline right after <pre>; the rest is the canonical text
    assert pre.text().removeprefix("\n") == document.text
    before = pre.text().removeprefix("\n").split(quote["text"])[0]
    assert len(before) == quote["start"]
    assert page.find_all("body")[0].attrs["class"] == "page source-page"


def test_source_viewer_escapes_source_text(fresh_client: TestClient) -> None:
    text = "Notes <script>alert(1)</script> and <mark>fake</mark> end.\n"
    response = fresh_client.post(
        "/library/upload",
        files={"file": ("notes.txt", text.encode(), "text/plain")},
        data=with_token(fresh_client, {"collection": "default"}),
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"].startswith("/library?job=")
    page_ok(fresh_client, response.headers["location"])
    wait_for_jobs(fresh_client)
    documents = fresh_client.get("/v1/documents").json()["documents"]
    doc = next(d for d in documents if d["source_path"].endswith("notes.txt"))
    start = text.index("<script>")
    page = page_ok(fresh_client, f"/sources/{doc['doc_id']}?start={start}&end={start + 25}")
    (mark,) = page.find_all("mark")
    assert mark.text() == text[start : start + 25]
    assert not page.find_all("script", None) or all(
        s.attrs.get("src", "").startswith("/static/") for s in page.find_all("script")
    )


def test_pdf_viewer_highlights_each_box_and_serves_the_page(client: TestClient) -> None:
    root, entry_id = ask_fragment(client, PDF_QUESTION)
    answer = recorded_answer(client, entry_id)
    by_id = {q["id"]: q for q in answer["quotes"]}
    shown = [by_id[s["quote_id"]] for s in answer["segments"] if s["type"] == "quote"]
    position, quote = next((i, q) for i, q in enumerate(shown) if q["boxes"])
    assert TWO_LINES[0] in quote["text"]
    link = verbatim_figures(root)[position].find_all("a", "source-link")[0].attrs["href"]
    url = (
        f"/sources/{quote['doc_id']}?version={quote['doc_version']}"
        f"&start={quote['start']}&end={quote['end']}"
    )
    assert link == url + "#quote"
    page = page_ok(client, url)
    rects = page.find_all("rect", "highlight")
    assert len(rects) == len(quote["boxes"]) >= 2
    pages = page.find_all("section", "pdf-page")
    assert [p.attrs["aria-label"] for p in pages] == [f"Page {n}" for n in quote["pages"]]
    first = pages[0]
    (svg,) = first.find_all("svg")
    assert svg.attrs["viewbox"] == "0 0 612 792"
    assert svg.attrs["preserveaspectratio"] == "none"
    frame = first.find_all("div", "page-frame")[0]
    assert frame.attrs["id"] == "quote"
    # PDF points (origin bottom-left) to the overlay's top-down coordinates
    for rect, box in zip(rects, quote["boxes"], strict=True):
        assert float(rect.attrs["x"]) == pytest.approx(box["x0"], abs=0.01)
        assert float(rect.attrs["y"]) == pytest.approx(792 - box["y1"], abs=0.01)
        assert float(rect.attrs["width"]) == pytest.approx(box["x1"] - box["x0"], abs=0.01)
        assert float(rect.attrs["height"]) == pytest.approx(box["y1"] - box["y0"], abs=0.01)
    (img,) = first.find_all("img")
    assert img.attrs["alt"].startswith("Page 1 of ")
    image = client.get(img.attrs["src"])
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    assert image.content.startswith(b"\x89PNG\r\n\x1a\n")
    size = Image.open(io.BytesIO(image.content)).size
    assert size == (int(img.attrs["width"]), int(img.attrs["height"])) == (918, 1188)
    assert client.get(img.attrs["src"]).content == image.content  # cached
    missing = img.attrs["src"].replace("/pages/1.png", "/pages/99.png")
    assert client.get(missing).status_code == 404


def dark_pixels(image: Image.Image, box: tuple[float, float, float, float]) -> int:
    """How many pixels of `image` inside `box` (left, top, right, bottom) are dark."""
    left, top, right, bottom = (round(v) for v in box)
    crop = image.convert("L").crop((left, top, right, bottom))
    return sum(crop.histogram()[:128])


def test_a_giant_pdf_page_is_rendered_within_the_pixel_cap(tmp_path: Path) -> None:
    (tmp_path / "giant.pdf").write_bytes(giant_page_pdf())
    location = tmp_path / "giant-index"
    with Index.open(location, create=True) as index:
        (result,) = index.ingest([tmp_path / "giant.pdf"], embed=False)
    assert result.status == "added"
    for client in make_client(location, tmp_path, auth=False):
        doc = client.get("/v1/documents").json()["documents"][0]
        text = client.get(f"/v1/sources/{doc['doc_id']}").json()["text"]
        start = text.index(GIANT_WORDS)
        span = client.get(
            f"/v1/sources/{doc['doc_id']}?start={start}&end={start + len(GIANT_WORDS)}"
        ).json()
        assert span["boxes"]
        page = page_ok(client, f"/sources/{doc['doc_id']}?start={start}&end={span['end']}")
        (img,) = page.find_all("img")
        (svg,) = page.find_all("svg")
        assert svg.attrs["viewbox"] == "0 0 7200 7200"
        response = client.get(img.attrs["src"])
        assert response.status_code == 200
        image = Image.open(io.BytesIO(response.content))
        width, height = image.size
        assert width * height <= MAX_PAGE_PIXELS < (GIANT_SIDE * PAGE_SCALE) ** 2
        assert (width, height) == (int(img.attrs["width"]), int(img.attrs["height"]))
        scale = width / GIANT_SIDE
        assert width == pytest.approx(GIANT_SIDE * render_scale(GIANT_SIDE, GIANT_SIDE), abs=1)
        # each highlight, drawn in points over the image, lies on the words in its pixels
        rects = page.find_all("rect", "highlight")
        assert len(rects) == len(span["boxes"])
        for rect, box in zip(rects, span["boxes"], strict=True):
            x, y, w, h = (float(rect.attrs[k]) for k in ("x", "y", "width", "height"))
            left, top = x * scale, y * scale
            assert left == pytest.approx(box["x0"] * scale, abs=0.5)
            assert top == pytest.approx((GIANT_SIDE - box["y1"]) * scale, abs=0.5)
            on_words = (left, top, left + w * scale, top + h * scale)
            assert dark_pixels(image, on_words) > 0.05 * (w * scale) * (h * scale)
            below = (left, top + 1000 * scale, left + w * scale, top + (1000 + h) * scale)
            assert dark_pixels(image, below) == 0


def test_the_page_image_cache_is_bounded_in_bytes() -> None:
    cache = pdf_pages._Cache(max_items=10, max_size=100, size=len)
    for number in range(8):
        assert cache.get(number, lambda: b"x" * 30) == b"x" * 30
    assert cache._total == 90 and list(cache._items) == [5, 6, 7]  # the newest that fit
    assert cache.get(7, lambda: b"not made again") == b"x" * 30
    assert cache.get("big", lambda: b"y" * 101) == b"y" * 101 and "big" not in cache._items


def test_source_viewer_errors(client: TestClient) -> None:
    assert client.get("/sources/nope").status_code == 404
    doc = client.get("/v1/documents").json()["documents"][0]
    response = client.get(f"/sources/{doc['doc_id']}?start=5&end=999999")
    assert response.status_code == 400
    response = client.get(f"/sources/{doc['doc_id']}/pages/1.png")
    assert response.status_code == 404 or doc["format"] == "pdf"


def test_page_geometry_maps_boxes_for_every_rotation() -> None:
    box = Box(1, 10, 700, 110, 720)  # 100 wide, 20 high, near the top left
    plain = PageGeometry(0, 0, 612, 792)
    assert plain.rect(box) == (10, 72, 100, 20)
    # 90° clockwise: the top left corner goes to the top right
    assert PageGeometry(0, 0, 612, 792, 90).rect(box) == (700, 10, 20, 100)
    assert PageGeometry(0, 0, 612, 792, 90).view_size == (792, 612)
    assert PageGeometry(0, 0, 612, 792, 180).rect(box) == (502, 700, 100, 20)
    assert PageGeometry(0, 0, 612, 792, 270).rect(box) == (72, 502, 20, 100)
    assert PageGeometry(10, 20, 592, 772).rect(box) == (0, 72, 100, 20)


# ----------------------------------------------------------------- library


def client_state(client: TestClient) -> AppState:
    state: AppState = client.app.state.quoteproof  # type: ignore[attr-defined]
    return state


def hold_file(tmp_path: Path) -> Path:
    """The file that holds `fresh_client`'s ingest while it exists."""
    return tmp_path / "hold-ingest"


def wait_for_jobs(client: TestClient) -> None:
    """Wait until the ingest jobs queued so far have run."""
    assert client_state(client).jobs.wait_idle(60)


def test_library_lists_uploads_and_deletes(fresh_client: TestClient, tmp_path: Path) -> None:
    page = page_ok(fresh_client, "/library")
    table = page.by_id("library-table")
    assert table is not None and len(table.find_all("tr")) == 1 + 3
    form = page.by_id("upload-form")
    assert form is not None
    assert form.attrs["hx-post"] == "/library/upload"
    assert form.attrs["hx-encoding"] == "multipart/form-data"
    assert form.attrs["enctype"] == "multipart/form-data"
    files = page.by_id("upload-files")
    assert files is not None and files.attrs["accept"] == ",".join(SUPPORTED_SUFFIXES)
    help = page.by_id("upload-help")
    assert help is not None and help.text().startswith(
        "PDF, Word (.docx), HTML, Markdown, text, FDA SPL XML, CSV, TSV or JSON; at most"
    )

    # Hold the ingest so that the job is still queued when the page shows it.
    hold = hold_file(tmp_path)
    hold.touch()
    try:
        response = fresh_client.post(
            "/library/upload",
            files={"file": ("notes.md", b"# Notes\n\nOrange juice has C.\n", "text/markdown")},
            data=with_token(fresh_client, {"collection": "default"}),
            headers={"HX-Request": "true"},
        )
        assert response.status_code == 202, response.text
        job = parse(response.text).iter()[1]
        poll = "/library/jobs/" + job.attrs["id"].removeprefix("job-")
        assert job.attrs["hx-get"] == poll and job.attrs["hx-trigger"] == "every 1s"
        assert job.attrs["hx-swap"] == "outerHTML"
        assert "Waiting to ingest 0 of 1 file" in " ".join(job.text().split())
        waiting = fresh_client.get(poll, headers={"HX-Request": "true"})
        assert "HX-Trigger" not in waiting.headers
    finally:
        hold.unlink()
    deadline = time.monotonic() + 60
    while True:
        polled = fresh_client.get(poll, headers={"HX-Request": "true"})
        assert polled.status_code == 200
        node = parse(polled.text).iter()[1]
        if "hx-get" not in node.attrs:
            break
        assert node.attrs["hx-trigger"] == "every 1s"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert "notes.md: added" in node.text()
    # the finished job brings the document table with it, swapped in out of band
    assert "HX-Trigger" not in polled.headers
    oob = parse(polled.text).by_id("library-table")
    assert oob is not None and oob.attrs["hx-swap-oob"] == "outerHTML"
    assert "Notes" in [th.text().strip() for th in oob.find_all("th")]
    whole = page_ok(fresh_client, "/library").by_id("library-table")
    assert whole is not None and "hx-swap-oob" not in whole.attrs

    table = parse(fresh_client.get("/library/table").text)
    titles = [th.text().strip() for th in table.find_all("th") if th.attrs.get("scope") == "row"]
    assert "Notes" in titles
    doc = next(
        d for d in fresh_client.get("/v1/documents").json()["documents"] if d["title"] == "Notes"
    )
    # Delete… leads to a confirmation page (a GET: nothing is retired yet) that says
    # how to undo; only its form retires the document.
    retire = f"/library/{doc['doc_id']}/retire"
    links = [a for a in table.find_all("a") if a.attrs.get("href") == retire]
    assert [a.text() for a in links] == ["Delete…"]
    confirm = page_ok(fresh_client, retire)
    assert "To undo, upload the same file again" in " ".join(confirm.text().split())
    (form,) = [f for f in confirm.find_all("form") if f.attrs.get("action") == retire]
    assert form.attrs["method"] == "post"
    listed = fresh_client.get("/v1/documents").json()["documents"]
    assert doc["doc_id"] in [d["doc_id"] for d in listed]
    token = with_token(fresh_client)
    retired = fresh_client.post(retire, data=token, follow_redirects=False)
    assert retired.status_code == 303
    assert retired.headers["location"] == f"/library?retired={doc['doc_id']}"
    after = page_ok(fresh_client, retired.headers["location"])
    (notice,) = after.find_all("p", "retired-notice")
    assert " ".join(notice.text().split()) == (
        "Deleted “Notes” (notes.md) from the library. To undo, upload the same file again."
    )
    assert "Notes" not in [th.text().strip() for th in after.find_all("th")]
    listed = fresh_client.get("/v1/documents").json()["documents"]
    assert doc["doc_id"] not in [d["doc_id"] for d in listed]
    assert fresh_client.post(retire, data=token).status_code == 404
    assert fresh_client.get(retire).status_code == 404


def test_a_finished_upload_counts_its_failed_files(fresh_client: TestClient) -> None:
    response = fresh_client.post(
        "/library/upload",
        files=[
            ("file", ("ok.txt", b"Oxygen is given by mask.\n", "text/plain")),
            ("file", ("latin.txt", "Fi\u00e8vre.\n".encode("latin-1"), "text/plain")),
        ],
        data=with_token(fresh_client, {"collection": "default"}),
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 202, response.text
    poll = "/library/jobs/" + parse(response.text).iter()[1].attrs["id"].removeprefix("job-")
    deadline = time.monotonic() + 60
    while "hx-get" in (node := parse(fresh_client.get(poll).text).iter()[1]).attrs:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    summary = " ".join(node.text().split())
    assert "Ingested 1 of 2 files into collection default; 1 failed" in summary
    assert "latin.txt: failed — not valid UTF-8" in summary


def test_upload_checks_are_the_apis(fresh_client: TestClient) -> None:
    bad_type = fresh_client.post(
        "/library/upload",
        files={"file": ("tool.exe", b"MZ...", "application/octet-stream")},
        data=with_token(fresh_client, {"collection": "default"}),
        headers={"HX-Request": "true"},
    )
    assert bad_type.status_code == 415 and "unsupported file type" in bad_type.text
    mislabelled = fresh_client.post(
        "/library/upload",
        files={"file": ("page.pdf", b"<html><body>hi</body></html>", "application/pdf")},
        data=with_token(fresh_client, {"collection": "default"}),
        headers={"HX-Request": "true"},
    )
    assert mislabelled.status_code == 415
    bad_collection = fresh_client.post(
        "/library/upload",
        files={"file": ("a.txt", b"hello", "text/plain")},
        data=with_token(fresh_client, {"collection": "no spaces/please"}),
        headers={"HX-Request": "true"},
    )
    assert bad_collection.status_code == 400
    for response in (bad_type, mislabelled, bad_collection):
        (alert,) = [n for n in parse(response.text).iter() if n.attrs.get("role") == "alert"]
        assert alert.text().startswith("Error:")


# ----------------------------------------------------------------- auth


def test_pages_need_a_key_in_auth_mode(keyed: TestClient) -> None:
    for url in ("/", "/library", "/history", "/sources/x"):
        response = keyed.get(url, follow_redirects=False)
        assert response.status_code == 303
        assert response.headers["location"].startswith("/login?next=")
    htmx = keyed.post("/ask", data={"question": "x"}, headers={"HX-Request": "true"})
    assert htmx.status_code == 401 and htmx.headers["HX-Redirect"].startswith("/login")
    assert keyed.post("/ask/stream", data={"question": "x"}).status_code == 401
    page_ok(keyed, "/login")


def test_login_sets_the_cookie_and_scopes_every_page(keyed: TestClient, keys: Keys) -> None:
    bad = keyed.post("/login", data=with_token(keyed, {"key": "qp_nope", "next": "/library"}))
    assert bad.status_code == 401 and 'role="alert"' in bad.text
    login = with_token(keyed, {"key": keys.default, "next": "/library"})
    response = keyed.post("/login", data=login, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/library"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"qp_key={keys.default};")
    attributes = {part.strip().lower() for part in cookie.split(";")}
    assert {"httponly", "path=/", "samesite=strict"} <= attributes
    assert (
        keyed.post(
            "/login",
            data=with_token(keyed, {"key": keys.default, "next": "//evil.example"}),
            follow_redirects=False,
        ).headers["location"]
        == "/"
    )

    library = page_ok(keyed, "/library")
    assert "Signed in as alice" in " ".join(library.text().split())
    table = library.by_id("library-table")
    assert table is not None and "Secret plans" not in table.text()
    documents = keyed.get("/v1/documents", headers={"Authorization": f"Bearer {keys.other}"})
    secret = documents.json()["documents"][0]
    assert keyed.get(f"/sources/{secret['doc_id']}").status_code == 404
    assert keyed.get(f"/sources/{secret['doc_id']}/pages/1.png").status_code == 404

    _, entry_id = ask_fragment(keyed, HTML_QUESTION)
    history = page_ok(keyed, "/history")
    assert f"/answers/{entry_id}" in [a.attrs["href"] for a in history.find_all("a")]
    assert HTML_QUESTION in history.text()
    page_ok(keyed, f"/answers/{entry_id}")

    # bob sees neither alice's documents nor her answers
    keyed.cookies.clear()
    assert keyed.post("/login", data=with_token(keyed, {"key": keys.other})).status_code == 200
    assert keyed.get(f"/answers/{entry_id}").status_code == 404
    history = page_ok(keyed, "/history")
    assert f"/answers/{entry_id}" not in [a.attrs["href"] for a in history.find_all("a")]
    _, bob_entry = ask_fragment(keyed, "What is the launch code?")
    answer = recorded_answer(keyed, bob_entry)
    assert all(q["doc_id"] == secret["doc_id"] for q in answer["quotes"])

    assert keyed.post("/logout", follow_redirects=False).status_code == 403  # no token
    out = keyed.post("/logout", data=with_token(keyed), follow_redirects=False)
    assert out.status_code == 303 and 'qp_key=""' in out.headers["set-cookie"]


def test_no_auth_login_page_says_no_key_is_needed(client: TestClient) -> None:
    page = page_ok(client, "/login")
    assert "no key is needed" in page.text()
    assert not page.find_all("form", "login-form")


def test_the_answer_page_shows_cited_triplets_as_facts_not_quotes(tmp_path: Path) -> None:
    location = tmp_path / "index"
    graph = tmp_path / "graph.csv"
    graph.write_text(
        "subject,relation,object,document,quote\n"
        "remdesivir,has_dose,<b>200 mg</b> on day 1,dosing.txt,"
        "The recommended dose is 200 mg on day 1\n",
        "utf-8",
    )
    with Index.open(location, create=True) as index:
        index.ingest([write_corpus(tmp_path)], embed=False)
        index.import_graph(graph)
    clients = make_client(location, tmp_path, auth=False)
    client = next(clients)
    asked = client.post(
        "/v1/ask", json={"question": "What is the remdesivir dose?", "context": "triplets"}
    )
    assert asked.status_code == 200, asked.text
    page = page_ok(client, f"/answers/{asked.headers['X-Answer-Id']}")
    clients.close()
    (facts,) = page.find_all("section", "facts")
    (fact,) = facts.find_all("li", "fact")
    assert "Imported fact — not a quote" in fact.text()
    assert "remdesivir | has_dose | <b>200 mg</b> on day 1" in fact.text()  # escaped, not bold
    assert not page.find_all("b")
    (figure,) = verbatim_figures(page)
    assert "The recommended dose is 200 mg on day 1" in figure.text()
    assert "has_dose" not in figure.text()
