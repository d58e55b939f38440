"""A quote of a hard-wrapped paragraph is drawn as its reader reads it, and nothing
but line breaks changes."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from helpers.answers import make_quote
from quoteproof.render.html import render_quote_html
from quoteproof.render.terminal import quote_panel
from quoteproof.render.wrapped import shown_unwrapped

WRAPPED = (
    "The instructor who taught the Saturday morning beginners group left in the\n"
    "summer, and no replacement could be found before the autumn term. Therefore,\n"
    "the group was cancelled."
)
ONE_LINE = (
    "The instructor who taught the Saturday morning beginners group left in the "
    "summer, and no replacement could be found before the autumn term. Therefore, "
    "the group was cancelled."
)


def test_a_paragraph_wrapped_at_a_margin_reads_as_one_line() -> None:
    assert shown_unwrapped(WRAPPED, "notes/pool.md") == ONE_LINE
    assert shown_unwrapped(WRAPPED, "notes/POOL.TXT") == ONE_LINE
    # a quote that starts at the end of a source line: its first line is short
    assert shown_unwrapped("The\ninstructor left.", "pool.md") == "The instructor left."


LEAD = "The learner pool stayed open throughout the works, with these changes"


def test_breaks_that_may_mean_a_break_stay() -> None:
    kept = [
        "Riverside Leisure Centre\n12 High Street\nOldtown",  # short lines: an address
        "You will need\nflour\nsugar\nbutter",  # a list without marks
        f"{LEAD}:\nlessons moved to weekday evenings",  # a lead-in's colon
        f"{LEAD}  \nlessons moved",  # a Markdown hard break (two spaces)
        f"{LEAD}.\n\nlessons moved",  # a paragraph break
        f"## {LEAD}\nlessons moved to weekday evenings",  # a heading, then its text
        f"{LEAD}\n======================",  # a heading's underline
        f"> {LEAD}\n> lessons moved",  # a block quote
        f"{LEAD} | Day\nMonday | 07:00",  # a table, with or without a leading pipe
        f"{LEAD}\n```\nprint(total)\n```",  # a code fence
        "    total = sum(prices) + the_cost_of_shipping_for_the_order\n    return total",
        f"DOCTOR: {LEAD} for you\nPATIENT: thank you",  # a speaker's turn
        f"2024-01-01 12:00:05 INFO {LEAD}\n2024-01-01 12:00:07 WARN pool closed",  # a log
        "Monday          07:00      22:00    the main pool and the learner pool\n"
        "tuesday         07:00      22:00",  # columns laid out by spaces
    ]
    kept += [
        f"{LEAD}\n{mark} lessons moved" for mark in ("-", "*", "•", "▪", "–", "1.", "(2)", "a)")
    ]
    for text in kept:
        assert shown_unwrapped(text, "pool.md") == text, text


def test_other_formats_keep_every_break() -> None:
    """A PDF's lines are joined when it is read; a break in its text is meant."""
    for path in ("pool.pdf", "pool.docx", "pool.html", "pool", "pool.csv"):
        assert shown_unwrapped(WRAPPED, path) == WRAPPED


@given(st.text(alphabet=st.sampled_from("ab C:-|#1. \n\t\x0b\x1c\xa0\u3000"), max_size=200))
def test_only_line_breaks_and_the_spaces_beside_them_change(text: str) -> None:
    """Drawn as a space, a break takes the spaces and tabs beside it along: nothing
    else changes, control characters and other white space included."""
    shown = shown_unwrapped(text, "pool.md")
    at_breaks = re.compile(r"[ \t]*\n[ \t]*")
    assert at_breaks.sub(" ", shown) == at_breaks.sub(" ", text)


def test_a_control_character_before_a_break_is_kept() -> None:
    text = f"{LEAD}\x1c\nlessons moved to weekday evenings while the main pool was shut"
    assert shown_unwrapped(text, "pool.txt") == f"{LEAD}\x1c lessons moved to weekday " + (
        "evenings while the main pool was shut"
    )


def test_the_terminal_panel_draws_a_wrapped_quote_unwrapped() -> None:
    """The panel's body is the paragraph as one text that rich wraps to the panel's
    width: no line of it ends after "The" or "and"."""
    source = f"Swimming lessons\n\n{WRAPPED}"
    start = source.index("The instructor")
    console = Console(width=60, record=True, color_system=None)
    console.print(quote_panel(make_quote(source, start, len(source), source_path="pool.md")))
    body = [line.strip("│ ") for line in console.export_text().splitlines()[1:-1]]
    assert " ".join(body).split() == ONE_LINE.split()
    assert all(len(line) >= 40 for line in body[:-1])  # filled to the panel's width


def test_the_web_page_blockquote_draws_a_wrapped_quote_unwrapped_and_escaped() -> None:
    """The web page's blockquote holds the paragraph on one line (its CSS keeps line
    breaks), escaped; the same quote from a PDF keeps its breaks."""
    source = f"<b>Lessons</b> & times\n\n{WRAPPED}"
    for path, expected in (("pool.md", ONE_LINE), ("pool.pdf", WRAPPED)):
        html = render_quote_html(make_quote(source, 0, len(source), source_path=path))
        body = html.split("<blockquote", 1)[1].split(">", 1)[1].split("</blockquote>")[0]
        assert body == f"&lt;b&gt;Lessons&lt;/b&gt; &amp; times\n\n{expected}"
