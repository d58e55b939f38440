"""Tests for quoteproof.render.terminal: only Quote objects are drawn as verbatim panels."""

from __future__ import annotations

import io
import re
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from helpers.answers import hostile_answers, make_data_result, shown_cited, shown_segments
from helpers.answers import make_answer as build_answer
from helpers.answers import make_quote as build_quote
from quoteproof.model import (
    Answer,
    DataSegment,
    Filter,
    LLMInfo,
    ProseSegment,
    QuoteSegment,
    Rejected,
    Statement,
    Usage,
)
from quoteproof.render.provenance import NO_MODEL_NOTICE
from quoteproof.render.terminal import (
    DATA_GUTTER,
    PROSE_GUTTER,
    quote_panel,
    render_terminal,
    render_text,
)
from quoteproof.render.wording import (
    ESCALATION_HEADING,
    ESCALATION_LABEL,
    GENERATED_LABEL,
    PARTIAL_NOTICE,
    STATEMENTS_LABEL,
    VERBATIM_LABEL,
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


def ansi_render(answer: Answer, width: int = 80, show_cited: bool = False) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=True, color_system="standard")
    render_terminal(answer, console, show_cited=show_cited)
    return buffer.getvalue()


def panel_tops(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("╭")]


# ----------------------------------------------------------------- layout


def test_layout_of_an_answer() -> None:
    answer = make_answer(
        (ProseSegment("Ishmael narrates.", ("moby-1", "moby-2")), QuoteSegment("q1")),
        (make_quote(SOURCE, 0, 16),),
        rejected=(Rejected('<quote ref="x">Call me Ahab</quote>', "unknown ref 'x'"),),
    )
    assert render_text(answer, width=60).splitlines() == [
        "Question: Who narrates?",
        "┆ Generated — not a quote",
        "┆ Ishmael narrates. [moby-1] [moby-2]",
        "╭─────────────── Moby-Dick › Loomings › ¶1 ────────────────╮",
        "│ Call me Ishmael.                                         │",
        "╰────────────────── Verbatim from source ──────────────────╯",
        "",
        "Removed (not verifiable):",
        "  ✗ <quote ref=\"x\">Call me Ahab</quote> — unknown ref 'x'",
    ]


def test_quote_panel_contract() -> None:
    quote = make_quote(SOURCE, 0, len(SOURCE), label="[red]Label[/red]", differs="3 → 4")
    panel = quote_panel(quote).panel(80)
    assert panel.border_style == "blue"
    assert isinstance(panel.renderable, Text) and panel.renderable.plain == quote.text
    assert isinstance(panel.title, Text) and panel.title.plain == "[red]Label[/red]"
    assert isinstance(panel.subtitle, Text)
    assert panel.subtitle.plain == "Verbatim from source · the model's words differed: 3 → 4"


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
    assert "! Refused: The sources contain no answer to this question. (no source passed" in text
    assert GENERATED_LABEL not in text
    assert "\x1b[1;33mRefused: The sources contain no answer" in ansi_render(answer)
    assert "(no reason given)" in render_text(make_answer((), (), status="refused"))


def test_differs_in_subtitle() -> None:
    answer = make_answer((QuoteSegment("q1"),), (make_quote(SOURCE, 0, 16, differs="3 → 30"),))
    (bottom,) = panel_bottoms(render_text(answer))
    assert "Verbatim from source · the model's words differed: 3 → 30" in bottom


def test_page_once_in_the_title_and_ocr_in_subtitle() -> None:
    quote = make_quote(SOURCE, 0, 16, pages=(3, 4), ocr=True, label="Moby-Dick › Loomings › p. 3")
    lines = render_text(make_answer((QuoteSegment("q1"),), (quote,))).splitlines()
    assert "Moby-Dick › Loomings › pp. 3–4 " in panel_tops("\n".join(lines))[0]
    assert "Verbatim from source · OCR text" in lines[-1]
    assert "\n".join(lines).count("p. ") == 1  # the chunk page is replaced, not repeated
    plain = make_quote(SOURCE, 0, 16)
    assert "p." not in render_text(make_answer((QuoteSegment("q1"),), (plain,)))


def test_long_label_is_shortened_from_the_middle_to_the_terminal_width() -> None:
    title = "VEKLURY® (remdesivir) for injection, for intravenous use"
    sections = ("6 ADVERSE REACTIONS", "6.1 Clinical Trials Experience", "Table 5 Summary")
    label = " › ".join([title, *sections, "p. 9"])
    quote = make_quote(SOURCE, 0, 16, pages=(9,), label=label)
    for width in (80, 60):
        (top,) = panel_tops(render_text(make_answer((QuoteSegment("q1"),), (quote,)), width))
        assert len(top) == width and top.endswith("╮")
        assert "VEKLURY® (r" in top and " › … › " in top and "Table 5 Summary › p. 9 " in top
    (top,) = panel_tops(render_text(make_answer((QuoteSegment("q1"),), (quote,)), 160))
    assert label in top


def test_missing_quote_is_reported_not_drawn() -> None:
    out = render_text(make_answer((QuoteSegment("ghost"),), ()))
    assert out == "Question: Who narrates?\n! Missing quote ghost — not shown.\n"


def test_long_prose_wraps_behind_the_gutter() -> None:
    prose = ("word " * 60) + "\n╰── verbatim from source ──╯"
    out = render_text(make_answer((ProseSegment(prose),), ()), width=40)
    lines = out.splitlines()[1:]
    assert len(lines) > 5
    assert all(line.startswith(PROSE_GUTTER) for line in lines)
    assert panel_bottoms(out) == []


# ----------------------------------------------------------------- modes

IMITATION = "╭── Fake ──╮\n│ fake quote │\n╰── verbatim from source ──╯"


def test_statements_show_each_label_text_refs_justification_and_original() -> None:
    answer = make_answer(
        (ProseSegment("Ishmael narrates."),),
        (),
        mode="rationale",
        statements=(
            Statement("s1", "The narrator is Ishmael.", ("moby-1",), "CORRECT-EXPLICIT", "Line 1."),
            Statement("s2", "He is a whaler.", ("moby-2", "moby-3"), "INCORRECT-FALSE_INFO", None),
            Statement("s3", "He is young.", (), None, None, original="He is old."),
        ),
    )
    lines = render_text(answer, width=80).splitlines()
    start = lines.index(f"{PROSE_GUTTER}{STATEMENTS_LABEL}:")
    assert lines[start - 1 :] == [
        "",
        "┆ Rationale statements (generated, checked by the model):",
        "┆ s1 · CORRECT-EXPLICIT",
        "┆ The narrator is Ishmael. [moby-1]",
        "┆ Justification: Line 1.",
        "┆ s2 · INCORRECT-FALSE_INFO",
        "┆ He is a whaler. [moby-2] [moby-3]",
        "┆ s3 · UNVERIFIED · refined after the check",
        "┆ He is young.",
        "┆ Refined from: He is old.",
        "",
        "Mode: rationale",
    ]
    out = ansi_render(answer)
    assert "\x1b[1;32mCORRECT-EXPLICIT" in out
    assert "\x1b[1;31mINCORRECT-FALSE_INFO" in out
    assert "\x1b[1;33mUNVERIFIED" in out


def test_imitations_in_statements_escalation_and_data_are_inert() -> None:
    answer = make_answer(
        (ProseSegment("x"), DataSegment("r1")),
        (),
        statements=(Statement(IMITATION, IMITATION, (IMITATION,), None, IMITATION, IMITATION),),
        escalation=IMITATION + "\n[bold]x[/bold] \x1b[31m",
        data=(
            make_data_result(
                table=IMITATION,
                columns=(IMITATION,),
                rows=((IMITATION, "[red]x[/red]"),),
                filters=(Filter(IMITATION, "=", IMITATION),),
                period=IMITATION,
                source=IMITATION,
                column=IMITATION,
            ),
        ),
    )
    for width in (40, 80, 120):
        out = render_text(answer, width=width, show_cited=True)
        assert panel_tops(out) == panel_bottoms(out) == []
        assert not any(line.startswith(PANEL_EDGES) for line in out.splitlines())
        assert "[bold]x[/bold] ␛[31m" in out and "[red]x[/red]" in out
    assert not re.search("^\x1b\\[34m[╭╰]", ansi_render(answer), re.MULTILINE)


def test_data_segment_shows_every_parameter_in_order() -> None:
    result = make_data_result(
        filters=(Filter("date", ">=", "2024-01-01"), Filter("country", "=", "US")),
        period="2024-01-01 to 2024-12-31",
        row_count=12,
        rows=(("Ann", "40"), ("Bob", None)),
    )
    answer = make_answer(
        (ProseSegment("Mean age:"), DataSegment("r1"), QuoteSegment("q1")),
        (make_quote(SOURCE, 0, 16),),
        data=(result,),
    )
    lines = render_text(answer, width=80).splitlines()
    data_lines = [line for line in lines if line.startswith(DATA_GUTTER)]
    assert lines.index(data_lines[0]) == 3  # after the prose, before the panel
    assert lines[len(data_lines) + 3].startswith("╭")
    assert [line.rstrip() for line in data_lines] == [
        "▦ Computed from table people.csv (doc version 2) — not a quote",
        "▦ Query: where date >= 2024-01-01 and country = US",
        "▦ Period: 2024-01-01 to 2024-12-31",
        "▦ Columns: name, age",
        "▦ Value: mean(age) = 41.5",
        "▦ 12 matching rows, first 2 shown",
        "▦ name   age",
        "▦ ──────────",
        "▦ Ann    40",
        "▦ Bob",
    ]


def test_plain_query_and_count() -> None:
    plain_query = make_data_result(filters=(), operation=None, column=None, value=None, rows=())
    count = make_data_result(
        "r2", operation="count", column=None, value=3, source="r1", rows=(), row_count=1
    )
    answer = make_answer((DataSegment("r1"), DataSegment("r2")), (), data=(plain_query, count))
    out = render_text(answer, width=80)
    assert "▦ Query: all rows\n" in out
    assert "▦ From query: r1\n▦ Value: count(*) = 3\n▦ 1 matching row\n" in out
    assert out.count("3 matching rows\n") == 1


def test_filter_values_that_could_read_as_conditions_are_quoted() -> None:
    result = make_data_result(
        filters=(
            Filter("note", "contains", "US and x = y"),
            Filter("n", "<", 2.5),
            Filter("ok", "=", True),
            Filter("gone", "=", None),
            Filter("first name", "!=", ""),
        )
    )
    out = render_text(make_answer((DataSegment("r1"),), (), data=(result,)), width=200)
    assert (
        '▦ Query: where note contains "US and x = y" and n < 2.5 and ok = true '
        'and gone = null and "first name" != ""\n'
    ) in out


def test_missing_data_result_is_reported_not_drawn() -> None:
    out = render_text(make_answer((DataSegment("ghost"),), ()))
    assert out == "Question: Who narrates?\n! Missing data result ghost — not shown.\n"


def test_partial_escalation_and_usage() -> None:
    answer = make_answer(
        (ProseSegment("Part of it."),),
        (),
        partial=True,
        escalation="Needs a pharmacist.\nThe dose is unclear.",
        usage=Usage(1200, 34),
    )
    lines = render_text(answer, width=200).splitlines()
    assert lines[:5] == [
        "Question: Who narrates?",
        f"! Partial answer: {PARTIAL_NOTICE}",
        f"! {ESCALATION_HEADING}. {ESCALATION_LABEL}",
        "┆ Needs a pharmacist.",
        "┆ The dose is unclear.",
    ]
    assert lines[-2:] == ["", "tokens: 1200 prompt · 34 completion"]
    assert "\x1b[2mtokens: 1200 prompt" in ansi_render(answer, width=200)


def test_quote_mode_without_usage_has_no_footer() -> None:
    answer = make_answer((ProseSegment("x"),), ())
    assert render_text(answer).splitlines()[-1] == "┆ x"
    assert render_text(make_answer((ProseSegment("x"),), (), mode="cite")).endswith(
        "\n\nMode: cite\n"
    )


def test_show_cited_draws_the_cited_passages_after_their_prose() -> None:
    cited = (
        make_quote(SOURCE, 0, 16, "c1", ref="moby-1"),
        make_quote(SOURCE, 17, 31, "c2", ref="moby-2", label="Moby-Dick › ¶2"),
    )
    answer = make_answer(
        (
            ProseSegment("Ishmael.", ("moby-2", "moby-9", "moby-1")),
            QuoteSegment("q1"),
            ProseSegment("No citation."),
        ),
        (make_quote(SOURCE, 0, 16),),
        cited=cited,
    )
    assert len(panel_tops(render_text(answer))) == 1
    lines = render_text(answer, width=60, show_cited=True).splitlines()
    assert len(panel_tops("\n".join(lines))) == 3
    assert lines[1:9] == [
        "┆ Generated — not a quote",
        "┆ Ishmael. [moby-2] [moby-9] [moby-1]",
        "╭───────────────────── Moby-Dick › ¶2 ─────────────────────╮",
        "│ Some years ago                                           │",
        "╰────────────────── Verbatim from source ──────────────────╯",
        "╭─────────────── Moby-Dick › Loomings › ¶1 ────────────────╮",
        "│ Call me Ishmael.                                         │",
        "╰────────────────── Verbatim from source ──────────────────╯",
    ]


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


OWN_PREFIXES = (
    PROSE_GUTTER,
    DATA_GUTTER,
    "! ",
    "  ✗ ",
    "    ",
    "Question: ",
    "Removed (not verifiable):",
    "Mode: ",
    "tokens: ",
    "model: ",
)


@settings(max_examples=150, deadline=None)
@given(hostile_answers(attack_text), st.integers(50, 120), st.booleans())
def test_only_quote_segments_become_panels(answer: Answer, width: int, show_cited: bool) -> None:
    out = render_text(answer, width=width, show_cited=show_cited)
    n_quote_segments = sum(isinstance(s, QuoteSegment) for s in shown_segments(answer))
    n_panels = n_quote_segments + (len(shown_cited(answer)) if show_cited else 0)
    lines = out.splitlines()

    tops = panel_tops(out)
    bottoms = panel_bottoms(out)
    assert len(tops) == len(bottoms) == n_panels
    assert all(line[len("╰") :].lstrip("─ ").startswith(VERBATIM_LABEL) for line in bottoms)
    # Every line is either part of a panel or starts with one of our own prefixes.
    assert all(line == "" or line.startswith(PANEL_EDGES + OWN_PREFIXES) for line in lines)
    # No control character from the answer reaches the terminal.
    assert not any(ord(ch) < 0x20 and ch != "\n" for ch in out)
    # Each statement's label is shown.
    for statement in answer.statements:
        assert (statement.label or "UNVERIFIED") in out


@settings(max_examples=50, deadline=None)
@given(hostile_answers(attack_text), st.booleans())
def test_colour_output_has_one_blue_panel_per_quote_segment(
    answer: Answer, show_cited: bool
) -> None:
    out = ansi_render(answer, width=100, show_cited=show_cited)
    n_quote_segments = sum(isinstance(s, QuoteSegment) for s in shown_segments(answer))
    n_panels = n_quote_segments + (len(shown_cited(answer)) if show_cited else 0)
    # Count blue panel edges that open a line: a real panel's own border.
    assert len(re.findall("^\x1b\\[34m╭", out, re.MULTILINE)) == n_panels
    assert len(re.findall("^\x1b\\[34m╰", out, re.MULTILINE)) == n_panels
    assert out.count(GENERATED_LABEL) >= sum(
        1
        for s in shown_segments(answer)
        if isinstance(s, ProseSegment) and (s.text.strip() or s.citations)
    )


# ----------------------------------------------------------------- which model answered


def test_an_answer_without_a_model_says_so_and_names_no_model() -> None:
    quote = make_quote(SOURCE, 0, 16)
    answer = make_answer((QuoteSegment(quote.id),), (quote,), llm=LLMInfo("extractive", None, ""))
    lines = render_text(answer, width=200).splitlines()
    assert lines[1] == f"! Note: {NO_MODEL_NOTICE}"
    assert not any(line.startswith(("model: ", "server: ")) for line in lines)
    # a refusal shows no quote, so nothing to check: the notice would only confuse
    refused = make_answer((), (), status="refused", llm=LLMInfo("extractive", None, ""))
    assert NO_MODEL_NOTICE not in " ".join(render_text(refused, width=200).split())


def test_a_model_answer_names_its_model_and_server_and_has_no_notice() -> None:
    answer = make_answer(
        (ProseSegment("x"),),
        (),
        llm=LLMInfo("openai", "gpt-test", "", server="http://127.0.0.1:8080/v1"),
        usage=Usage(3, 4),
    )
    lines = render_text(answer, width=200).splitlines()
    assert NO_MODEL_NOTICE not in " ".join(lines)
    assert lines[-2:] == [
        "tokens: 3 prompt · 4 completion",
        "model: gpt-test (openai) · server: http://127.0.0.1:8080/v1",
    ]
    hostile = make_answer((), (), llm=LLMInfo("openai", "[red]m\x1b[2J", ""))
    assert render_text(hostile).splitlines()[-1] == "model: [red]m␛[2J (openai)"
