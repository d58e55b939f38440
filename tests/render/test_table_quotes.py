"""A quote that crosses table cells is drawn as a table, header row first, in the
terminal, Markdown and HTML; every cell its source text, escaped for the format."""

from __future__ import annotations

import re
from html import escape, unescape

from markdown_it import MarkdownIt

from helpers.answers import assert_text_formats_box, make_answer, make_quote
from quoteproof.model import Answer, Quote, QuotedRow, QuotedTable, QuoteSegment, TableCell
from quoteproof.render.html import render_answer_html
from quoteproof.render.markdown import render_markdown
from quoteproof.render.table_quote import (
    CARRIED_HEADER_NOTE,
    WHOLE_ROWS_NOTE,
    TableView,
    quote_parts,
)
from quoteproof.render.terminal import render_text

HEADER = ("Adverse reaction", "ELIQUIS n (%)", "Warfarin n (%)")
ROWS = (
    ("Major bleeding", "327 (2.13)", "462 (3.09)"),
    ("Rash \x1b[31m [bold]x[/bold] <script>a|b</script>", "5 (0.1)", "7 (0.2)"),
)
BEFORE = "Table 1 lists bleeding."
AFTER = "Bleeding led to stopping."


def build_source() -> tuple[str, list[list[tuple[int, int]]]]:
    """Text: a paragraph, the table (rows joined by newlines, cells by " | "), a
    paragraph; and each row's cell spans."""
    text, spans = BEFORE + "\n\n", []
    for number, row in enumerate((HEADER, *ROWS)):
        if number:
            text += "\n"
        cells = []
        for index, cell in enumerate(row):
            if index:
                text += " | "
            cells.append((len(text), len(text) + len(cell)))
            text += cell
        spans.append(cells)
    return text + "\n\n" + AFTER, spans


SOURCE, SPANS = build_source()


def row(number: int, *, header: bool = False, quoted: bool = True) -> QuotedRow:
    cells = tuple(TableCell(lo, hi, SOURCE[lo:hi]) for lo, hi in SPANS[number])
    return QuotedRow(cells, header, quoted)


def table_quote(start: int, end: int, rows: tuple[QuotedRow, ...]) -> Quote:
    body = [r for r in rows if r.quoted]
    table = QuotedTable(body[0].cells[0].start, body[-1].cells[-1].end, rows)
    return make_quote(SOURCE, start, end, tables=(table,))


def answer_of(quote: Quote) -> Answer:
    return make_answer((QuoteSegment("q1"),), (quote,))


ROW_ONE = table_quote(SPANS[1][0][0], SPANS[1][-1][1], (row(0, header=True, quoted=False), row(1)))


def test_terminal_draws_the_row_under_its_column_names() -> None:
    out = render_text(answer_of(ROW_ONE), width=100)
    lines = out.splitlines()
    names = next(line for line in lines if "Adverse reaction" in line)
    assert all(name in names for name in HEADER)
    values = next(line for line in lines if "Major bleeding" in line)
    assert "327 (2.13)" in values and "462 (3.09)" in values
    assert len(lines) < 12  # one line per row, not one per cell
    assert CARRIED_HEADER_NOTE in out
    assert_text_formats_box(answer_of(ROW_ONE), 1, show_cited=False)


def test_terminal_table_notes_are_under_the_panel_never_inside_it() -> None:
    """Only source text lies inside the verbatim border: the notes on what the
    tables show beyond the quote are a line under the panel."""
    quote = table_quote(
        SPANS[1][1][0], SPANS[2][1][1], (row(0, header=True, quoted=False), row(1), row(2))
    )
    lines = render_text(answer_of(quote), width=80).splitlines()
    top = next(n for n, line in enumerate(lines) if line.startswith("╭"))
    bottom = next(n for n, line in enumerate(lines) if line.startswith("╰"))
    inside = " ".join(lines[top + 1 : bottom])
    assert "column names" not in inside and "shown whole" not in inside
    under = " ".join(" ".join(lines[bottom + 1 :]).split())
    assert CARRIED_HEADER_NOTE in under and WHOLE_ROWS_NOTE in under
    assert lines[bottom + 1].startswith("  ↑ ")


def test_terminal_shows_hostile_cells_literally() -> None:
    quote = table_quote(
        SPANS[1][0][0], SPANS[2][-1][1], (row(0, header=True, quoted=False), row(1), row(2))
    )
    out = render_text(answer_of(quote), width=140)
    assert "\x1b" not in out and "␛[31m" in out
    assert "[bold]x[/bold]" in out


def test_markdown_draws_a_pipe_table_inside_the_block_quote() -> None:
    quote = table_quote(
        SPANS[1][0][0], SPANS[2][-1][1], (row(0, header=True, quoted=False), row(1), row(2))
    )
    markdown = render_markdown(answer_of(quote))
    assert "> | `Adverse reaction` | `ELIQUIS n (%)` | `Warfarin n (%)` |" in markdown
    assert "> |---|---|---|" in markdown
    assert "> | `Major bleeding` | `327 (2.13)` | `462 (3.09)` |" in markdown
    assert "a\\|b" in markdown and "\x1b" not in markdown
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    assert "<th><code>Adverse reaction</code></th>" in html
    assert "<td><code>327 (2.13)</code></td>" in html
    assert "<script" not in html and "a|b" in html  # the cell keeps its pipe
    assert html.count("<tr>") == 3 and html.count("<blockquote>") == 1
    assert_text_formats_box(answer_of(quote), 1, show_cited=False)


HOSTILE_CELLS = (
    "Name ![x](https://evil.example/fake.png)",
    "[10 mg](https://evil.example) **bold** ~~gone~~ C:\\*x\\* a\\|b",
    "10\u202e05 mg `tick` ``two``",
)


def test_markdown_cells_render_as_their_source_text_and_nothing_else() -> None:
    """No image, link, emphasis or bidi override from a cell: rendered, each cell's
    text is exactly the source's (control characters and bidi overrides as U+FFFD)."""
    text = " | ".join(HOSTILE_CELLS)
    spans, at = [], 0
    for cell in HOSTILE_CELLS:
        spans.append((at, at + len(cell)))
        at += len(cell) + 3
    cells = tuple(TableCell(lo, hi, text[lo:hi]) for lo, hi in spans)
    table = QuotedTable(0, len(text), (QuotedRow(cells, False, True),))
    quote = make_quote(text, 0, len(text), tables=(table,))
    rendered = MarkdownIt("commonmark").enable("table").render(render_markdown(answer_of(quote)))
    html = rendered[rendered.index("<table>") : rendered.index("</table>")]
    assert "<img" not in html and "<a " not in html and "<strong>" not in html
    assert "<s>" not in html and "<del>" not in html
    shown = [unescape(cell) for cell in re.findall(r"<td><code>(.*?)</code></td>", html)]
    assert shown == [cell.replace("\u202e", "\ufffd") for cell in HOSTILE_CELLS]


def test_html_draws_a_table_with_th_header_in_the_verbatim_box() -> None:
    html = render_answer_html(answer_of(ROW_ONE))
    figure = re.search(r'<blockquote class="quote-text">(.*?)</blockquote>', html, re.S)
    assert figure is not None
    body = figure.group(1)
    assert body.startswith('<table class="quote-table"><thead><tr><th scope="col">Adverse reaction')
    assert "<td>Major bleeding</td><td>327 (2.13)</td><td>462 (3.09)</td>" in body
    assert escape(CARRIED_HEADER_NOTE) in html


def test_html_escapes_cells() -> None:
    quote = table_quote(
        SPANS[2][0][0], SPANS[2][-1][1], (row(0, header=True, quoted=False), row(2))
    )
    html = render_answer_html(answer_of(quote))
    assert "<script>" not in html and "&lt;script&gt;a|b&lt;/script&gt;" in html
    assert "\x1b" not in html


def test_text_around_the_table_is_kept_and_a_partial_row_is_noted() -> None:
    start = SOURCE.index("lists")  # inside BEFORE
    end = SPANS[1][1][0] + 3  # inside the first body row's second cell
    quote = table_quote(start, SOURCE.index(AFTER) + 8, (row(0, header=True), row(1), row(2)))
    parts = quote_parts(quote)
    assert parts[0] == SOURCE[start : SPANS[0][0][0]].strip() and parts[-1] == AFTER[:8]
    partial = table_quote(start, end, (row(0, header=True), row(1)))
    assert WHOLE_ROWS_NOTE in render_markdown(answer_of(partial))
    assert CARRIED_HEADER_NOTE not in render_markdown(answer_of(partial))  # header quoted


def test_a_quote_without_tables_is_drawn_as_before() -> None:
    quote = make_quote(SOURCE, 0, len(BEFORE))
    assert quote_parts(quote) == (BEFORE,)
    assert "quote-table" not in render_answer_html(answer_of(quote))


SECTIONED = (
    "\n".join(
        ("Reaction | Drug %", "Cardiac disorders", "Palpitations | 4", "Gastrointestinal disorders")
    )
    + "\nNausea | 12"
)
"""A table block with section rows (no cells) between its rows, as PDF ingest makes it."""


def sectioned_row(line: str, *, header: bool = False, quoted: bool = True) -> QuotedRow:
    start = SECTIONED.index(line)
    left = line.split(" | ")[0]
    cells = (start, start + len(left)), (start + len(left) + 3, start + len(line))
    return QuotedRow(tuple(TableCell(lo, hi, SECTIONED[lo:hi]) for lo, hi in cells), header, quoted)


def sectioned_quote(start: int, end: int, rows: tuple[QuotedRow, ...]) -> Quote:
    body = [r for r in rows if r.quoted]
    table = QuotedTable(body[0].cells[0].start, body[-1].cells[-1].end, rows)
    return make_quote(SECTIONED, start, end, tables=(table,))


def test_a_section_row_between_quoted_rows_is_drawn_between_table_parts() -> None:
    header = sectioned_row("Reaction | Drug %", header=True, quoted=False)
    rows = (header, sectioned_row("Palpitations | 4"), sectioned_row("Nausea | 12"))
    quote = sectioned_quote(SECTIONED.index("Palpitations"), len(SECTIONED), rows)
    names = (("Reaction", "Drug %"),)
    assert quote_parts(quote) == (
        TableView(names, (("Palpitations", "4"),), 2),
        "Gastrointestinal disorders",
        TableView(names, (("Nausea", "12"),), 2),
    )
    markdown = render_markdown(answer_of(quote))
    assert markdown.index("| `Palpitations` | `4` |") < markdown.index("Gastrointestinal disorders")
    assert markdown.index("Gastrointestinal disorders") < markdown.index("| `Nausea` | `12` |")
    assert markdown.count("| `Reaction` | `Drug %` |") == 2 and CARRIED_HEADER_NOTE in markdown
    out = render_text(answer_of(quote), width=80)
    assert out.index("Palpitations") < out.index("Gastrointestinal") < out.index("Nausea")
    html = render_answer_html(answer_of(quote))
    assert html.index("Palpitations") < html.index("Gastrointestinal") < html.index("Nausea")


def test_a_header_quoted_before_a_section_row_stays_text_and_names_the_columns() -> None:
    rows = (sectioned_row("Reaction | Drug %", header=True), sectioned_row("Palpitations | 4"))
    quote = sectioned_quote(0, SECTIONED.index("Gastrointestinal") - 1, rows)
    assert quote_parts(quote) == (
        "Reaction | Drug %\nCardiac disorders",
        TableView((("Reaction", "Drug %"),), (("Palpitations", "4"),), 2),
    )
    assert CARRIED_HEADER_NOTE in render_markdown(answer_of(quote))


def test_a_table_without_a_header_row_is_drawn_without_column_names() -> None:
    quote = table_quote(SPANS[1][0][0], SPANS[2][-1][1], (row(1), row(2)))
    (view,) = quote_parts(quote)
    assert isinstance(view, TableView) and view.header == ()
    for shown in (
        render_text(answer_of(quote), width=140),
        render_markdown(answer_of(quote)),
        render_answer_html(answer_of(quote)),
    ):
        assert CARRIED_HEADER_NOTE not in shown and "Adverse reaction" not in shown
    html = render_answer_html(answer_of(quote))
    assert "<thead>" not in html and html.count("<tr>") == 2
    markdown = render_markdown(answer_of(quote))
    assert (
        "> |  |  |  |" in markdown
        and "> | `Major bleeding` | `327 (2.13)` | `462 (3.09)` |" in markdown
    )
