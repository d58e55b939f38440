"""The ask page's "Context" menu beside the answer mode: what each form gives the
model, and the form chosen reaching the model, streamed and through htmx; a cited
knowledge-graph triplet drawn as a labelled fact, its supporting sentence the only
verbatim box."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from playwright.sync_api import expect

from helpers.llm_servers import content_text
from quoteproof.service import CONTEXT_CHOICES

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from conftest import GraphModel

Shoot = Callable[..., Path]

QUESTION = "Who must not be given VEKLURY?"
CONTRAINDICATION = "VEKLURY is contraindicated in patients with a history of clinically"


def cite_the_contraindication(body: dict[str, Any]) -> str:
    """A cite-mode reply: one sentence citing the contraindication's TID line."""
    prompt = "\n".join(content_text(m.get("content")) for m in body["messages"])
    (tid,) = re.findall(r"^(TID-\d+): VEKLURY \| contraindicated_in \|", prompt, re.M)
    return f"VEKLURY must not be given to patients with such hypersensitivity [{tid}]."


def test_the_context_chosen_reaches_the_model_and_cited_facts_are_no_quotes(
    page: Page, graph_model: GraphModel, shoot: Shoot
) -> None:
    posted: list[dict[str, list[str]]] = []
    page.on(
        "request",
        lambda r: posted.append(parse_qs(r.post_data or "")) if "/ask" in r.url else None,
    )
    page.goto(f"{graph_model.origin}/")
    menu = page.locator("#context")
    assert [o.get_attribute("value") for o in menu.locator("option").all()] == [
        c.form for c in CONTEXT_CHOICES
    ]
    expect(menu).to_have_value("paragraphs")
    help_text = " ".join(page.locator("#context-help").inner_text().split())
    assert all(c.title in help_text and c.summary in help_text for c in CONTEXT_CHOICES)
    mode_box, context_box = page.locator("#mode").bounding_box(), menu.bounding_box()
    assert mode_box and context_box and abs(mode_box["y"] - context_box["y"]) < 2  # side by side
    shoot(page, "40-context-menu", full_page=False)

    for stream in (True, False):
        graph_model.model.script = [
            "No fact here helps.",
            cite_the_contraindication,
            "C1: SUPPORTED — the fact says so.",  # the page's default: the model judges
        ]
        asked = len(graph_model.model.requests)
        page.goto(f"{graph_model.origin}/")
        page.locator("#question").fill(QUESTION)
        page.locator("#mode").select_option("cite")
        page.locator("#context").select_option(label="Passages and facts")
        page.locator("#stream").set_checked(stream)
        page.locator("#ask-submit").click()
        result = page.locator("#answer .answer-result")
        result.wait_for()
        assert posted[-1]["context"] == ["both"] and posted[-1]["mode"] == ["cite"]
        (extract, request, _judge) = graph_model.model.requests[asked:]  # triplets extracted too
        assert "knowledge-graph triplets" in content_text(extract["messages"][0]["content"])
        prompt = "\n".join(content_text(m.get("content")) for m in request["messages"])
        assert "<facts>" in prompt and "<source ref=" in prompt
        fact = result.locator("li.fact")
        expect(fact).to_have_count(1)
        expect(fact).to_contain_text("Imported fact — not a quote")
        expect(fact).to_contain_text("VEKLURY | contraindicated_in |")
        figures = result.locator("figure.verbatim")
        expect(figures).to_have_count(1)
        expect(figures.first.locator("blockquote")).to_contain_text(CONTRAINDICATION)
        assert "contraindicated_in" not in figures.first.inner_text()
        if not stream:  # htmx swaps the answer in; the form keeps the choice
            expect(page.locator("#context")).to_have_value("both")
    shoot(page, "41-answer-citing-a-fact")
