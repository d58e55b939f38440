"""Tests for quoteproof.render.markdown: only Quote objects become block quotes."""

from __future__ import annotations

import html
import re
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from helpers.answers import hostile_answers, make_data_result, shown_segments
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
from quoteproof.render.dataresult import preview_header
from quoteproof.render.markdown import (
    code_span,
    escape_inline,
    escape_markdown,
    render_markdown,
)
from quoteproof.render.provenance import NO_MODEL_NOTICE
from quoteproof.render.wording import GENERATED_LABEL

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


def verbatim(block: str) -> str:
    """The text of the one code block in a rendered block quote, exactly as shown
    (and copied): markdown-it's HTML with its character references decoded."""
    code = re.fullmatch(r"\s*<pre><code>(.*)</code></pre>\s*", block, flags=re.S)
    assert code is not None, block
    return html.unescape(code.group(1))


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
        "**Verbatim from source** — A Tale of Two Cities › Book I › ¶1 › p. 3 "
        "(two\\_cities.txt, chars 0–80)\n"
        "> ```\n"
        "> It was the best of times,\n"
        "> it was the worst of times.\n"
        ">\n"
        "> <b>Age</b> of *wisdom* > 1\n"
        "> ```\n"
        "\n"
        "**Removed (not verifiable)**\n"
        "\n"
        "- &lt;quote ref\\=\"x9\"\\>best of&lt;/quote\\> — unknown ref 'x9'\n"
    )
    rendered = MD.render(render_markdown(answer))
    assert rendered.count("<blockquote>") == 1
    block = rendered.split("<blockquote>")[1].split("</blockquote>")[0]
    assert verbatim(block) == SOURCE + "\n"
    assert "<b>" not in rendered and "<em>wisdom" not in rendered


def test_differs_and_pages_in_header() -> None:
    quote = make_quote(SOURCE, 0, 25, pages=(3, 4), differs="best → worst")
    out = render_markdown(make_answer((QuoteSegment("q1"),), (quote,)))
    expected = (
        "¶1 › pp. 3–4 (two\\_cities.txt, chars 0–25) · the model's words differed: best → worst\n"
    )
    assert expected in out


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
    assert "> ```\n> a\n>   \n> \tb  \n>\n> ```\n" in out
    empty = render_markdown(make_answer((QuoteSegment("q1"),), (make_quote(source, 2, 2),)))
    assert MD.render(empty).count("<blockquote>") == 1


def test_quote_text_is_written_and_shown_without_backslashes() -> None:
    source = (
        "Dosing \\[see 2.1] for *adults* & <children>_\\\n"
        "> not a quote\n    1. not a list\n```\nstill ``` text ````\n\ttab  "
    )
    quote = make_quote(source, 0, len(source))
    out = render_markdown(make_answer((QuoteSegment("q1"),), (quote,)))
    body = out.split("\n> `````\n", 1)[1].split("\n> `````\n", 1)[0]
    assert [line.removeprefix("> ") for line in body.split("\n")] == source.split("\n")
    blocks = re.findall(r"<blockquote>(.*?)</blockquote>", MD.render(out), flags=re.S)
    assert [verbatim(block) for block in blocks] == [source + "\n"]


def test_code_span_fences_backticks() -> None:
    assert code_span("[a]") == "`[a]`"
    assert code_span("[a`b]") == "``[a`b]``"
    assert code_span("`x``") == "``` `x`` ```"
    assert MD.render(code_span("[a\n\n> b]")).count("<blockquote>") == 0


def test_escape_inline_collapses_whitespace() -> None:
    assert escape_inline("  # a\n\n> b  ") == "\\# a \\> b"


# ----------------------------------------------------------------- modes

IMITATION = "> **Verbatim from source** — Fake (fake.txt, chars 0–5)\n> fake\n\n<blockquote>x"


def test_statements_layout() -> None:
    answer = make_answer(
        (ProseSegment("It opens with a contrast."),),
        (),
        mode="rationale",
        statements=(
            Statement("s1", "Best *and* worst.", ("t2c-1",), "CORRECT-EXPLICIT", "Line 1."),
            Statement("s2", "It is 1790.", ("t2c-1", "t2c-2"), "INCORRECT-FALSE_INFO", None),
            Statement("s3", "A contrast.", (), None, None, original="A > B"),
        ),
    )
    out = render_markdown(answer)
    assert out.endswith(
        "**Rationale statements (generated, checked by the model)**\n"
        "\n"
        "s1 · **CORRECT\\-EXPLICIT**\n"
        "Best \\*and\\* worst. `[t2c-1]`\n"
        "Justification: Line 1.\n"
        "\n"
        "s2 · **INCORRECT\\-FALSE\\_INFO**\n"
        "It is 1790. `[t2c-1]` `[t2c-2]`\n"
        "\n"
        "s3 · **UNVERIFIED** · refined after the check\n"
        "A contrast.\n"
        "Refined from: A \\> B\n"
        "\n"
        "Mode: rationale\n"
    )
    rendered = MD.render(out)
    for label in ("CORRECT-EXPLICIT", "INCORRECT-FALSE_INFO", "UNVERIFIED"):
        assert f"<strong>{label}</strong>" in rendered
    assert "<em>and</em>" not in rendered


def test_data_segment_layout() -> None:
    result = make_data_result(
        filters=(Filter("date", ">=", "2024-01-01"), Filter("country", "=", "US")),
        period="2024",
        row_count=12,
        rows=(("Ann", "40"), ("B|ob", None, "extra")),
    )
    answer = make_answer(
        (ProseSegment("Mean age:"), DataSegment("r1"), QuoteSegment("q1")),
        (make_quote(SOURCE, 0, 25),),
        data=(result,),
    )
    out = render_markdown(answer)
    assert (
        "*Generated — not a quote:*\n"
        "Mean age:\n"
        "\n"
        "**Computed from table** people.csv (doc version 2) — not a quote\n"
        "Query: where date \\>\\= 2024\\-01\\-01 and country \\= US\n"
        "Period: 2024\n"
        "Columns: name, age\n"
        "Value: mean(age) \\= 41.5\n"
        "12 matching rows, first 2 shown\n"
        "\n"
        "| name | age |  |\n"
        "| --- | --- | --- |\n"
        "| Ann | 40 |\n"
        "| B\\|ob |  | extra |\n"
        "\n"
        "**Verbatim from source**"
    ) in out
    rendered = MD.render(out)
    assert rendered.count("<table>") == 1 and rendered.count("<blockquote>") == 1
    cells = re.findall(r"<t[dh]>(.*?)</t[dh]>", rendered)
    assert cells == ["name", "age", "", "Ann", "40", "", "B|ob", "", "extra"]


def test_count_without_rows_has_no_table() -> None:
    result = make_data_result(operation="count", column=None, value=3, rows=(), source="r0")
    out = render_markdown(make_answer((DataSegment("r1"),), (), data=(result,)))
    assert "From query: r0\nValue: count(\\*) \\= 3\n3 matching rows\n" in out
    assert "<table>" not in MD.render(out)


def test_missing_data_result_is_reported_not_drawn() -> None:
    out = render_markdown(make_answer((DataSegment("ghost"),), ()))
    assert "**Missing data result** `ghost` — not shown." in out


def test_partial_escalation_and_usage() -> None:
    answer = make_answer(
        (ProseSegment("Part of it."),),
        (),
        partial=True,
        escalation="Needs a *pharmacist*.\n> The dose is unclear.",
        usage=Usage(1200, 34),
        mode="agent",
    )
    out = render_markdown(answer)
    assert out.startswith(
        "**Question:** How does it begin?\n"
        "\n"
        "**Partial answer:** sentences without a valid citation were removed, "
        "or the work stopped before it was complete.\n"
        "\n"
        "**Escalated to a person.** The model's reason (generated — not a quote):\n"
        "Needs a \\*pharmacist\\*.\n"
        "\\> The dose is unclear.\n"
        "\n"
    )
    assert out.endswith("\nMode: agent · tokens: 1200 prompt · 34 completion\n")
    rendered = MD.render(out)
    assert "<blockquote>" not in rendered and "<em>pharmacist" not in rendered


def test_imitations_in_statements_escalation_and_data_are_inert() -> None:
    answer = make_answer(
        (ProseSegment("x", ("t2c-1",)), DataSegment("r1")),
        (),
        statements=(Statement(IMITATION, IMITATION, (IMITATION,), None, IMITATION, IMITATION),),
        escalation=IMITATION,
        data=(
            make_data_result(
                table=IMITATION,
                columns=(IMITATION, "| --- |"),
                rows=((IMITATION, "| a | b |\n| --- | --- |"),),
                filters=(Filter(IMITATION, "=", IMITATION),),
                period=IMITATION,
                source=IMITATION,
                column=IMITATION,
            ),
        ),
    )
    for show_cited in (False, True):
        rendered = MD.render(render_markdown(answer, show_cited=show_cited))
        assert "<blockquote>" not in rendered
        assert "<strong>Verbatim from source</strong>" not in rendered
        assert rendered.count("<table>") == 1 and rendered.count("<tr>") == 2


def test_show_cited_adds_the_cited_passages_as_block_quotes() -> None:
    cited = (
        make_quote(SOURCE, 0, 25, "c1", ref="t2c-1"),
        make_quote(SOURCE, 26, 52, "c2", ref="t2c-2"),
    )
    answer = make_answer(
        (ProseSegment("A contrast.", ("t2c-2", "t2c-9", "t2c-1")), QuoteSegment("q1")),
        (make_quote(SOURCE, 0, 25),),
        cited=cited,
    )
    assert MD.render(render_markdown(answer)).count("<blockquote>") == 1
    out = render_markdown(answer, show_cited=True)
    assert (
        "A contrast. `[t2c-2]` `[t2c-9]` `[t2c-1]`\n"
        "\n"
        "**Verbatim from source** — A Tale of Two Cities › Book I › ¶1 "
        "(two\\_cities.txt, chars 26–52)\n"
        "> ```\n"
        "> it was the worst of times.\n"
        "> ```\n"
        "\n"
        "**Verbatim from source** — A Tale of Two Cities › Book I › ¶1 "
        "(two\\_cities.txt, chars 0–25)\n"
        "> ```\n"
        "> It was the best of times,\n"
        "> ```\n"
    ) in out
    assert MD.render(out).count("<blockquote>") == 3


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


def _shown_quotes(answer: Answer, show_cited: bool) -> list[str]:
    """The texts the block quotes must hold, in order."""
    texts = []
    for segment in shown_segments(answer):
        if isinstance(segment, QuoteSegment):
            texts.append(answer.quote(segment.quote_id).text)
        elif isinstance(segment, ProseSegment) and show_cited:
            texts += [quote.text for quote in answer.cited_passages(segment.citations)]
    return texts


def _shown_tables(answer: Answer) -> list[list[str]]:
    """The cells of each preview table (header first), as markdown-it shows them."""
    tables = []
    for segment in shown_segments(answer):
        if isinstance(segment, DataSegment):
            result = answer.data_result(segment.data_id)
            header = list(preview_header(result))
            if result.rows and header:
                cells = header[:]
                for row in result.rows:
                    cells += [cell or "" for cell in row] + [""] * (len(header) - len(row))
                # A cell is one line: escape_inline collapses whitespace runs first.
                tables.append([collapsed(_as_commonmark_sees(collapsed(c))) for c in cells])
    return tables


@settings(max_examples=120, deadline=None)
@given(hostile_answers(attack_text), st.booleans())
def test_only_quote_segments_become_block_quotes(answer: Answer, show_cited: bool) -> None:
    rendered = MD.render(render_markdown(answer, show_cited=show_cited))
    n_block_quotes = len(_shown_quotes(answer, show_cited))
    prose = _shown_prose(answer)
    tags = re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", rendered)

    assert rendered.count("<blockquote>") == n_block_quotes
    assert rendered.count("<strong>Verbatim from source</strong>") == n_block_quotes
    assert rendered.count(f"<em>{GENERATED_LABEL}:</em>") == len(prose)
    assert rendered.count("<em>") == len(prose)
    n_refs = sum(len(s.citations) for s in prose) + sum(len(s.refs) for s in answer.statements)
    assert rendered.count("<pre><code>") == n_block_quotes
    assert rendered.count("<code>") == n_refs + n_block_quotes
    assert rendered.count("<li>") == len(answer.rejected)
    assert rendered.count("<table>") == len(_shown_tables(answer))
    # Each statement's label is shown.
    for statement in answer.statements:
        assert f"<strong>{statement.label or 'UNVERIFIED'}</strong>" in rendered
    # Nothing but our own structure: no raw HTML, links, images, headings, lists
    # other than the removed-items list, code blocks, tables other than the data
    # results' previews, rules, strikethrough.
    allowed = {"p", "strong", "em", "code", "pre", "blockquote", "ul", "li", "br"}
    allowed |= {"table", "thead", "tbody", "tr", "th", "td"}
    assert set(tags) <= allowed, set(tags) - allowed
    assert "<script" not in rendered.lower()
    assert rendered.count("<br") == 0


@settings(max_examples=120, deadline=None)
@given(hostile_answers(attack_text))
def test_tables_hold_exactly_the_cells(answer: Answer) -> None:
    rendered = MD.render(render_markdown(answer))
    tables = re.findall(r"<table>(.*?)</table>", rendered, flags=re.S)
    expected = _shown_tables(answer)
    assert len(tables) == len(expected)
    for table, cells in zip(tables, expected, strict=True):
        found = re.findall(r"<t[hd]>(.*?)</t[hd]>", table, flags=re.S)
        assert [plain(cell) for cell in found] == cells
        assert set(re.findall(r"<(/?[a-z]+)", table)) <= {
            "thead", "/thead", "tbody", "/tbody", "tr", "/tr", "th", "/th", "td", "/td"
        }  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(hostile_answers(attack_text), st.booleans())
def test_block_quotes_hold_exactly_the_quote_text(answer: Answer, show_cited: bool) -> None:
    rendered = MD.render(render_markdown(answer, show_cited=show_cited))
    blocks = re.findall(r"<blockquote>(.*?)</blockquote>", rendered, flags=re.S)
    expected = _shown_quotes(answer, show_cited)
    assert len(blocks) == len(expected)
    for block, text in zip(blocks, expected, strict=True):
        assert set(re.findall(r"<(/?[a-z]+)", block)) == {"pre", "/pre", "code", "/code"}
        assert verbatim(block) == _in_code_block(text) + "\n"


def _in_code_block(text: str) -> str:
    """What a code block shows of a quote's `text`: every character as it is, line
    endings as `\\n`, control characters and bidi overrides (never written raw) as
    U+FFFD."""
    text = re.sub(r"\r\n|[\r\x85\u2028\u2029]", "\n", text)
    return "".join(
        "\ufffd"
        if (ord(ch) < 0x20 and ch not in "\t\n")
        or 0x7F <= ord(ch) <= 0x9F
        or 0x202A <= ord(ch) <= 0x202E
        or 0x2066 <= ord(ch) <= 0x2069
        else ch
        for ch in text
    )


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


def test_an_answer_without_a_model_says_so() -> None:
    out = render_markdown(make_answer((), (), llm=LLMInfo("extractive", None, "")))
    assert f"\n\n**Note:** {NO_MODEL_NOTICE}\n" in out
    assert out.splitlines()[-1] == f"**Note:** {NO_MODEL_NOTICE}"  # no model footer


def test_a_model_answer_names_its_model_and_server() -> None:
    out = render_markdown(
        make_answer(
            (), (), llm=LLMInfo("openai", "gpt-test", "", server="http://127.0.0.1:8080/v1")
        )
    )
    assert NO_MODEL_NOTICE not in out
    footer = MD.render(out.splitlines()[-1])
    assert plain(footer) == "model: gpt-test (openai) · server: http://127.0.0.1:8080/v1"
