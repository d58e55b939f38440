"""Tests for quoteproof.render.markdown: only Quote objects become block quotes."""

from __future__ import annotations

import html
import re
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from helpers.answers import hostile_answers, shown_segments
from helpers.answers import make_answer as build_answer
from helpers.answers import make_quote as build_quote
from quoteproof.model import (
    Answer,
    ProseSegment,
    QuoteSegment,
    Rejected,
)
from quoteproof.render.markdown import (
    GENERATED_LABEL,
    code_span,
    escape_inline,
    escape_markdown,
    render_markdown,
)

SOURCE = "It was the best of times,\nit was the worst of times.\n\n<b>Age</b> of *wisdom* > 1"

make_quote = partial(
    build_quote,
    ref="t2c-1",
    label="A Tale of Two Cities › Book I › ¶1",
    doc_id="t2c",
    source_path="corpus/dickens/two_cities.txt",
    section=("Book I",),
)
make_answer = partial(build_answer, question="How does it begin?")


# CommonMark plus the GFM block/inline extensions markdown-it ships without plugins.
MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def plain(fragment: str) -> str:
    """Text content of an HTML fragment, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def collapsed(text: str) -> str:
    return " ".join(text.split())


# ----------------------------------------------------------------- layout


def test_layout_of_an_answer() -> None:
    quote = make_quote(SOURCE, 0, len(SOURCE), pages=(3,))
    answer = make_answer(
        (ProseSegment("It opens with a contrast.", ("t2c-1", "t2c-2")), QuoteSegment("q1")),
        (quote,),
        rejected=(Rejected('<quote ref="x9">best of</quote>', "unknown ref 'x9'"),),
    )
    assert render_markdown(answer) == (
        "**Question:** How does it begin?\n"
        "\n"
        "*Generated — not a quote:*\n"
        "It opens with a contrast. `[t2c-1]` `[t2c-2]`\n"
        "\n"
        "**Verbatim from source** — A Tale of Two Cities › Book I › ¶1 "
        "(two\\_cities.txt, p. 3, chars 0–80)\n"
        "> It was the best of times,\n"
        "> it was the worst of times.\n"
        ">\n"
        "> &lt;b\\>Age&lt;/b\\> of \\*wisdom\\* \\> 1\n"
        "\n"
        "**Removed (not verifiable)**\n"
        "\n"
        "- &lt;quote ref\\=\"x9\"\\>best of&lt;/quote\\> — unknown ref 'x9'\n"
    )
    rendered = MD.render(render_markdown(answer))
    assert rendered.count("<blockquote>") == 1
    block = rendered.split("<blockquote>")[1].split("</blockquote>")[0]
    assert plain(block) == collapsed(SOURCE)
    assert "<b>" not in rendered and "<em>wisdom" not in rendered


def test_differs_and_pages_in_header() -> None:
    quote = make_quote(SOURCE, 0, 25, pages=(3, 4), differs="best → worst")
    out = render_markdown(make_answer((QuoteSegment("q1"),), (quote,)))
    assert "(two\\_cities.txt, pp. 3–4, chars 0–25) · **differs:** best → worst\n" in out


def test_refusal() -> None:
    answer = make_answer(
        (ProseSegment("The sources contain no answer to this question."),),
        (),
        status="refused",
        refusal_reason="nothing relevant <found>",
    )
    out = render_markdown(answer)
    expected = "**Refused:** The sources contain no answer to this question. "
    assert expected + "(nothing relevant &lt;found\\>)\n" in out
    assert "*Generated" not in out
    assert "(no reason given)" in render_markdown(make_answer((), (), status="refused"))


def test_missing_quote_is_reported_not_drawn() -> None:
    out = render_markdown(make_answer((QuoteSegment("ghost"),), ()))
    assert "**Missing quote** `ghost` — not shown." in out
    assert "<blockquote>" not in MD.render(out)


def test_empty_and_blank_quote_lines() -> None:
    source = "a\n  \n\tb  \n"
    out = render_markdown(make_answer((QuoteSegment("q1"),), (make_quote(source, 0, len(source)),)))
    assert "> a\n>\n> b\n>\n" in out
    empty = render_markdown(make_answer((QuoteSegment("q1"),), (make_quote(source, 2, 2),)))
    assert MD.render(empty).count("<blockquote>") == 1


def test_code_span_fences_backticks() -> None:
    assert code_span("[a]") == "`[a]`"
    assert code_span("[a`b]") == "``[a`b]``"
    assert code_span("`x``") == "``` `x`` ```"
    assert MD.render(code_span("[a\n\n> b]")).count("<blockquote>") == 0


def test_escape_inline_collapses_whitespace() -> None:
    assert escape_inline("  # a\n\n> b  ") == "\\# a \\> b"


# ----------------------------------------------------------------- attacks

ATTACKS = [
    "> quoted",
    ">>> nested",
    "   > indented quote",
    "**Verbatim from source** — Fake (fake.txt, chars 0–5)",
    "<blockquote>fake</blockquote>",
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil>",
    "<img src=x onerror=alert(1)>",
    "<div>\n\n> inside html\n\n</div>",
    "<!-- comment -->",
    "[bold]x[/bold]",
    "[blue]",
    "# Heading",
    "Setext\n===",
    "Setext\n---",
    "- item",
    "+ item",
    "* item",
    "1. item",
    "2) item",
    "    indented code",
    "\tcode",
    "```\nfence\n```",
    "~~~",
    "***",
    "| a | b |\n|---|---|\n| c | d |",
    "[link](http://evil.example)",
    "![img](http://evil.example/x.png)",
    "<http://evil.example>",
    "[ref]: http://evil.example",
    "[^1]: footnote",
    "&lt;script&gt;",
    "&#60;blockquote&#62;",
    "\\",
    "\\> escaped?",
    "`code`",
    "*em* _em_ ~~del~~",
    ": definition",
    "\x1b[31mred",
    "\x00\r> after cr",
    "\r\n> after crlf",
    "line  ",
    ":smile: $x$ {#id}",
]

attack_text = st.lists(
    st.sampled_from(ATTACKS) | st.text(max_size=12),
    max_size=5,
).flatmap(
    lambda parts: st.lists(
        st.sampled_from(["", " ", "\n", "\n\n", "\r", "\r\n", "\n    ", "\n> "]),
        min_size=len(parts),
        max_size=len(parts),
    ).map(lambda seps: "".join(s + p for s, p in zip(seps, parts, strict=True)))
)


def _shown_prose(answer: Answer) -> list[ProseSegment]:
    return [
        s
        for s in shown_segments(answer)
        if isinstance(s, ProseSegment) and (s.text.strip() or s.citations)
    ]


@settings(max_examples=120, deadline=None)
@given(hostile_answers(attack_text))
def test_only_quote_segments_become_block_quotes(answer: Answer) -> None:
    rendered = MD.render(render_markdown(answer))
    n_quote_segments = sum(isinstance(s, QuoteSegment) for s in shown_segments(answer))
    prose = _shown_prose(answer)
    tags = re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", rendered)

    assert rendered.count("<blockquote>") == n_quote_segments
    assert rendered.count("<strong>Verbatim from source</strong>") == n_quote_segments
    assert rendered.count(f"<em>{GENERATED_LABEL.strip('*')}</em>") == len(prose)
    assert rendered.count("<em>") == len(prose)
    assert rendered.count("<code>") == sum(len(s.citations) for s in prose)
    assert rendered.count("<li>") == len(answer.rejected)
    # Nothing but our own structure: no raw HTML, links, images, headings, lists
    # other than the removed-items list, code blocks, tables, rules, strikethrough.
    allowed = {"p", "strong", "em", "code", "blockquote", "ul", "li", "br"}
    assert set(tags) <= allowed, set(tags) - allowed
    assert "<script" not in rendered.lower()
    assert rendered.count("<br") == 0


@settings(max_examples=120, deadline=None)
@given(hostile_answers(attack_text))
def test_block_quotes_hold_exactly_the_quote_text(answer: Answer) -> None:
    rendered = MD.render(render_markdown(answer))
    blocks = re.findall(r"<blockquote>(.*?)</blockquote>", rendered, flags=re.S)
    expected = [
        answer.quote(s.quote_id).text for s in shown_segments(answer) if isinstance(s, QuoteSegment)
    ]
    assert len(blocks) == len(expected)
    for block, text in zip(blocks, expected, strict=True):
        assert set(re.findall(r"<(/?[a-z]+)", block)) <= {"p", "/p"}
        assert plain(block) == collapsed(_as_commonmark_sees(text))


def _as_commonmark_sees(text: str) -> str:
    """What markdown-it shows for `text`: control characters (written as numeric
    references by the renderer) come out as U+FFFD, except tab, line feed, form feed
    and carriage return, which it keeps."""
    return "".join(
        "\ufffd" if (ord(ch) < 0x20 and ch not in "\t\n\x0c\r") or 0x7F <= ord(ch) <= 0x9F else ch
        for ch in text
    )


literal_text = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"))
    | st.sampled_from("\\`*_{}[]<>#+-.!|~=^$:&;\n \t"),
    max_size=40,
) | attack_text.map(lambda t: "".join(ch for ch in t if ch >= " " or ch in "\n\t"))


@settings(max_examples=300, deadline=None)
@given(literal_text)
def test_escaped_text_renders_as_exactly_its_characters(text: str) -> None:
    rendered = MD.render(escape_markdown(text))
    assert set(re.findall(r"<(/?[a-z]+)", rendered)) <= {"p", "/p"}
    assert plain(rendered) == collapsed(_as_commonmark_sees(text))
