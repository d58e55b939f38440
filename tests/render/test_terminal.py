"""Tests for quoteproof.render.terminal: only Quote objects are drawn as verbatim panels."""

from __future__ import annotations

import io
import re
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from helpers.answers import hostile_answers, shown_segments
from helpers.answers import make_answer as build_answer
from helpers.answers import make_quote as build_quote
from quoteproof.model import (
    Answer,
    ProseSegment,
    QuoteSegment,
    Rejected,
)
from quoteproof.render.terminal import (
    GENERATED_MARKER,
    PROSE_GUTTER,
    VERBATIM_SUBTITLE,
    quote_panel,
    render_terminal,
    render_text,
)

SOURCE = "Call me Ishmael. Some years ago [bold]never mind[/bold] how long precisely."

make_quote = partial(
    build_quote,
    ref="moby-1",
    label="Moby-Dick › Loomings › ¶1",
    doc_id="moby",
    source_path="corpus/moby.txt",
    section=("Loomings",),
)
make_answer = partial(build_answer, question="Who narrates?")

PANEL_EDGES = ("╭", "│", "╰")


def panel_bottoms(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("╰")]


def ansi_render(answer: Answer, width: int = 80) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=True, color_system="standard")
    render_terminal(answer, console)
    return buffer.getvalue()


# ----------------------------------------------------------------- layout


def test_layout_of_an_answer() -> None:
    answer = make_answer(
        (ProseSegment("Ishmael narrates.", ("moby-1", "moby-2")), QuoteSegment("q1")),
        (make_quote(SOURCE, 0, 16),),
        rejected=(Rejected('<quote ref="x">Call me Ahab</quote>', "unknown ref 'x'"),),
    )
    assert render_text(answer, width=60).splitlines() == [
        "┆ generated — not a quote",
        "┆ Ishmael narrates. [moby-1] [moby-2]",
        "╭─────────────── Moby-Dick › Loomings › ¶1 ────────────────╮",
        "│ Call me Ishmael.                                         │",
        "╰────────────────── verbatim from source ──────────────────╯",
        "",
        "removed (not verifiable):",
        "  ✗ <quote ref=\"x\">Call me Ahab</quote> — unknown ref 'x'",
    ]


def test_quote_panel_contract() -> None:
    quote = make_quote(SOURCE, 0, len(SOURCE), label="[red]Label[/red]", differs="3 → 4")
    panel = quote_panel(quote)
    assert panel.border_style == "blue"
    assert isinstance(panel.renderable, Text) and panel.renderable.plain == quote.text
    assert isinstance(panel.title, Text) and panel.title.plain == "[red]Label[/red]"
    assert isinstance(panel.subtitle, Text)
    assert panel.subtitle.plain == "verbatim from source · differs: 3 → 4"


def test_markup_in_text_prints_literally() -> None:
    answer = make_answer(
        (ProseSegment("[bold]x[/bold] and [blue] :smile:"), QuoteSegment("q1")),
        (make_quote(SOURCE, 0, len(SOURCE), label="[i]Moby[/i]"),),
    )
    out = render_text(answer)
    assert "┆ [bold]x[/bold] and [blue] :smile:" in out
    assert "[bold]never mind[/bold]" in out
    assert "[i]Moby[/i]" in out


def test_colours_blue_panel_and_escape_safe_prose() -> None:
    answer = make_answer(
        (ProseSegment("[bold]x[/bold] \x1b[31mEVIL"), QuoteSegment("q1")),
        (make_quote(SOURCE, 0, 16),),
    )
    out = ansi_render(answer)
    assert "\x1b[34m╭" in out and "\x1b[34m╰" in out  # blue borders
    assert "[bold]x[/bold]" in out
    assert "\x1b[31mEVIL" not in out and "␛[31mEVIL" in out


def test_refusal_is_yellow_and_clear() -> None:
    answer = make_answer(
        (ProseSegment("The sources contain no answer to this question."),),
        (),
        status="refused",
        refusal_reason="no source passed the threshold",
    )
    text = render_text(answer)
    assert "! The sources contain no answer to this question. (no source passed" in text
    assert GENERATED_MARKER not in text
    assert "\x1b[1;33mThe sources contain no answer" in ansi_render(answer)
    assert "(no reason given)" in render_text(make_answer((), (), status="refused"))


def test_differs_in_subtitle() -> None:
    answer = make_answer((QuoteSegment("q1"),), (make_quote(SOURCE, 0, 16, differs="3 → 30"),))
    (bottom,) = panel_bottoms(render_text(answer))
    assert "verbatim from source · differs: 3 → 30" in bottom


def test_pages_and_ocr_in_subtitle() -> None:
    quote = make_quote(SOURCE, 0, 16, pages=(3, 4), ocr=True)
    bottom = render_text(make_answer((QuoteSegment("q1"),), (quote,))).splitlines()[-1]
    assert "verbatim from source · pp. 3–4 · OCR text" in bottom
    plain = make_quote(SOURCE, 0, 16)
    assert "p." not in render_text(make_answer((QuoteSegment("q1"),), (plain,))).splitlines()[-1]


def test_missing_quote_is_reported_not_drawn() -> None:
    out = render_text(make_answer((QuoteSegment("ghost"),), ()))
    assert out == "! quote 'ghost' is missing; not shown\n"


def test_long_prose_wraps_behind_the_gutter() -> None:
    prose = ("word " * 60) + "\n╰── verbatim from source ──╯"
    out = render_text(make_answer((ProseSegment(prose),), ()), width=40)
    lines = out.splitlines()
    assert len(lines) > 5
    assert all(line.startswith(PROSE_GUTTER) for line in lines)
    assert panel_bottoms(out) == []


# ----------------------------------------------------------------- attacks

ATTACKS = [
    "╭──── Fake label ────╮",
    "│ fake quote text │",
    "╰──── verbatim from source ────╯",
    "verbatim from source",
    "**Verbatim from source** — Fake",
    "> quoted",
    "<blockquote>x</blockquote>",
    "<script>alert(1)</script>",
    "[bold]x[/bold]",
    "[blue]",
    "[/]",
    "[link=http://evil]click[/link]",
    ":smile:",
    "\x1b[34m╭\x1b[0m",
    "\x1b]8;;http://evil\x1b\\link",
    "\r╰",
    "\x08\x08╰",
    "\t╰",
    "ＷＩＤＥ 全角",
    "e\u0301",
]

attack_text = st.lists(st.sampled_from(ATTACKS) | st.text(max_size=10), max_size=5).flatmap(
    lambda parts: st.lists(
        st.sampled_from(["", " ", "\n", "\n\n", "\r\n", "\r"]),
        min_size=len(parts),
        max_size=len(parts),
    ).map(lambda seps: "".join(s + p for s, p in zip(seps, parts, strict=True)))
)


@settings(max_examples=150, deadline=None)
@given(hostile_answers(attack_text), st.integers(50, 120))
def test_only_quote_segments_become_panels(answer: Answer, width: int) -> None:
    out = render_text(answer, width=width)
    n_quote_segments = sum(isinstance(s, QuoteSegment) for s in shown_segments(answer))
    lines = out.splitlines()

    tops = [line for line in lines if line.startswith("╭")]
    bottoms = panel_bottoms(out)
    assert len(tops) == len(bottoms) == n_quote_segments
    assert all(line[len("╰") :].lstrip("─ ").startswith(VERBATIM_SUBTITLE) for line in bottoms)
    # Every line is either part of a panel or starts with one of our own prefixes.
    own = (PROSE_GUTTER, "! ", "  ✗ ", "    ", "removed (not verifiable):")
    assert all(line == "" or line.startswith(PANEL_EDGES + own) for line in lines)
    # No control character from the answer reaches the terminal.
    assert not any(ord(ch) < 0x20 and ch != "\n" for ch in out)


@settings(max_examples=50, deadline=None)
@given(hostile_answers(attack_text))
def test_colour_output_has_one_blue_panel_per_quote_segment(answer: Answer) -> None:
    out = ansi_render(answer, width=100)
    n_quote_segments = sum(isinstance(s, QuoteSegment) for s in shown_segments(answer))
    # Count blue panel edges that open a line: a real panel's own border.
    assert len(re.findall("^\x1b\\[34m╭", out, re.MULTILINE)) == n_quote_segments
    assert len(re.findall("^\x1b\\[34m╰", out, re.MULTILINE)) == n_quote_segments
    assert out.count(GENERATED_MARKER) >= sum(
        1
        for s in shown_segments(answer)
        if isinstance(s, ProseSegment) and (s.text.strip() or s.citations)
    )
