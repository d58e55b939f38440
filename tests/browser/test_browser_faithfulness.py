"""The web page shows an answer's faithfulness beside its generated prose, as text,
never inside a verbatim box: streamed and through htmx, with a scripted model that
judges the claims (the page's default)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import expect

from browser.test_browser import ask, recorded

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from conftest import Hostile

Shoot = Callable[..., Path]
QUESTION = "What is obstructive sleep apnea?"
FIGURE = "Faithfulness: 1 of 2 claims supported (50%); 1 removed counts as unsupported"

PLACE = """() => {
  const faith = document.querySelector('#answer section.faithfulness');
  const blocks = [...faith.parentElement.children];
  const before = blocks.slice(0, blocks.indexOf(faith)).map(e => e.className);
  return {
    inBox: faith.closest('figure, blockquote') !== null,
    boxesHolding: [...document.querySelectorAll('figure, blockquote')]
      .filter(e => e.textContent.includes('claims supported')).length,
    before: before,
    sameArticle: faith.parentElement.matches('article.answer'),
  };
}"""
"""Where the faithfulness section is: inside a box or not, how many boxes hold its
words, the classes of the answer's blocks before it."""


def top_ref(page: Page, origin: str) -> str:
    """The ref of the passage the server finds first for `QUESTION`."""
    found = page.request.get(f"{origin}/v1/search", params={"q": QUESTION})
    assert found.ok, found.text()
    ref: str = found.json()["hits"][0]["ref"]
    return ref


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "htmx"])
def test_the_faithfulness_figure_is_beside_the_prose_never_in_a_box(
    page: Page, hostile: Hostile, shoot: Shoot, stream: bool
) -> None:
    ref = top_ref(page, hostile.scripted)
    hostile.model.script = [
        f"Sleep apnea is explained in the source [{ref}]. "
        f'It affects 97 million sleepers [{ref}]. <quote ref="{ref}"/>',
        "C1: SUPPORTED — the source explains it.",  # the page's default: the model judges
    ]
    result = ask(page, hostile.scripted, QUESTION, stream=stream)
    faith = result.locator("section.faithfulness")
    expect(faith).to_be_visible()
    assert " ".join(faith.inner_text().split()).startswith(FIGURE)
    assert "judged by the model" in faith.inner_text()
    place: dict[str, Any] = page.evaluate(PLACE)
    assert place["sameArticle"] and not place["inBox"] and place["boxesHolding"] == 0, place
    assert "generated" in place["before"], place  # it follows the prose it scores
    assert result.locator("figure.verbatim").count() >= 1
    for box in result.locator("figure.verbatim").all():
        assert "Faithfulness" not in box.inner_text()
    # the page's figure is the recorded one
    answer = recorded(page, hostile.scripted)
    found = answer["faithfulness"]
    assert found["score"] == 0.5 and found["removed"] == 1 and found["method"] == "model"
    assert [call["stage"] for call in answer["calls"]][-1] == "faithfulness"
    shoot(page, f"40-faithfulness-{'streamed' if stream else 'htmx'}")
