"""The ask page's "Answer mode" and "Context" menus show each choice's whole name
(no text cut by the menu's width), and say what each choice does beside them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from quoteproof.service import CONTEXT_CHOICES
from quoteproof.strategies.registry import STRATEGIES

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from conftest import Hostile

Shoot = Callable[..., Path]

FITS = """(selector) => {
  const menu = document.querySelector(selector);
  const style = getComputedStyle(menu);
  const pen = document.createElement('canvas').getContext('2d');
  pen.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const room = menu.clientWidth - parseFloat(style.paddingLeft)
    - parseFloat(style.paddingRight) - 24;  // the menu's arrow
  return [...menu.options].map(o => [o.text, pen.measureText(o.text).width <= room]);
}"""
"""Each option's text and whether it fits the closed menu (the one `selector` finds)."""


def test_every_mode_name_fits_the_menu(page: Page, hostile: Hostile, shoot: Shoot) -> None:
    for width in (1280, 390):  # a desktop window, a phone
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{hostile.scripted}/")
        fits = page.evaluate(FITS, "#mode")
        assert [text for text, _ in fits] == [entry.title for entry in STRATEGIES]
        assert all(fit for _, fit in fits), fits
        help_text = page.locator("#mode-help").inner_text()
        assert all(entry.summary in " ".join(help_text.split()) for entry in STRATEGIES)
        fits = page.evaluate(FITS, "#context")
        assert [text for text, _ in fits] == [choice.title for choice in CONTEXT_CHOICES]
        assert all(fit for _, fit in fits), fits
        shoot(page, f"30-answer-modes-{width}", full_page=False)
