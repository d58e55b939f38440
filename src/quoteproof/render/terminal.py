"""Answer -> terminal (rich): draws the blocks of `render.layout.answer_layout`.

Contract (the guarantee that no model-written words are shown as a quote, for the terminal):

- Each `QuoteSegment` whose quote the answer holds is drawn as one blue
  `rich.panel.Panel` (border_style "blue"): title the quote's label
  (`document › section › p. 4`, the quote's own pages, shortened from the middle
  to the panel's width), subtitle "Verbatim from source" (plus " · OCR text…" for
  OCR text, " · the model's words differed: …"),
  body `Text(quote.text)` (the breaks that wrap a Markdown or plain-text paragraph
  at a margin shown as spaces, `render.wrapped`); a quote that crosses table cells
  (`Quote.tables`) has its tables drawn as `rich.table.Table`s inside the same
  panel, each cell a `Text` of its source text, the header row as column names (see
  `render.table_quote`); what the tables show beyond the quote (`table_notes`) is
  a dim line right under the panel, outside its border, behind `  ↑ ` (never in
  the panel: only source text is). With `show_cited`, each passage a prose segment cites
  (`answer.cited_passages(segment.citations)`: real `Quote`s from `answer.cited`)
  is drawn the same way right after that prose. Nothing else is drawn in a panel:
  exactly one panel per `QuoteSegment`, plus one per cited passage when
  `show_cited`.
- Model-written text other than prose (rationale statements with their
  justifications and earlier versions, the reason for an escalation) is generated
  text too: behind the `┆ ` gutter, never in a panel. A statement's label is the
  verifier's verdict, shown per statement (green CORRECT-…, red INCORRECT-…,
  yellow UNVERIFIED when there is none).
- A `DataSegment` shows its data result (values computed from a table, not a
  quote) behind its own `▦ ` gutter: the table, every parameter of the query
  (filters, period, columns, aggregate), the row count and the preview rows.
- No text from the answer is ever parsed as rich markup: every piece is a
  `rich.text.Text`, so "[bold]x[/bold]" prints literally.
- No text from the answer ever starts an output line. The question, prose,
  refusal reasons and rejected output are printed behind a gutter (`Question: `,
  `┆ `, `! `, `▦ `, `  ✗ `) on every line,
  wrapped lines included, so only real panels have lines starting with a box
  corner: a prose imitation of a panel ("╰── verbatim from source ──╯") always
  shows up behind the gutter. Without colour, a line starts with `╭`, `│` or `╰`
  exactly when it belongs to a verbatim panel.
- Control characters are shown, never sent (`render.visible`): C0 controls (ESC
  included) as Unicode control pictures (`␛`), C1 controls and bidi overrides as
  escapes (`\\x9b`, `\\u202e`), so answer text cannot send terminal escape
  sequences or reorder what follows; every other character of a quote is shown as
  it is (but the line breaks of a margin's wrap, above). Line endings (`\\r\\n`,
  `\\r`, NEL, U+2028, U+2029) become newlines, so they go behind the gutter too;
  tabs are kept.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

from quoteproof.model import Answer, DataResult, Quote
from quoteproof.render import layout, wording
from quoteproof.render.table_quote import TableView, quote_parts
from quoteproof.render.visible import visible
from quoteproof.text.labels import fit_label

__all__ = [
    "DATA_GUTTER",
    "PROSE_GUTTER",
    "QuotePanel",
    "data_block",
    "generated_marker",
    "gutter",
    "quote_panel",
    "render_terminal",
    "render_text",
    "visible",
]

PROSE_GUTTER = "┆ "
DATA_GUTTER = "▦ "
_NOTICE_GUTTER = "! "

_WHITESPACE = re.compile(r"\s+")
_VERDICT_STYLES = {"correct": "bold green", "incorrect": "bold red", "unverified": "bold yellow"}
_NOTICE_STYLES = {"partial": "bold yellow", "no-model": "yellow", "notice": "yellow"}


def _one_line(text: str) -> str:
    """Collapse whitespace runs (line breaks included) to a space, then `visible`."""
    return visible(_WHITESPACE.sub(" ", text).strip())


class _Gutter:
    """Render `renderable` narrower by the prefix width, each line behind a prefix.

    `first` prefixes the first line, `rest` every later one (wrapped lines too);
    lines are cut to fit behind the wider of the two.
    """

    def __init__(self, renderable: RenderableType, first: str, rest: str, style: str) -> None:
        self.renderable = renderable
        self.first = first
        self.rest = rest
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        prefix = max(Text(self.first).cell_len, Text(self.rest).cell_len)
        width = max(1, options.max_width - prefix)
        lines = console.render_lines(self.renderable, options.update_width(width), pad=False)
        style = console.get_style(self.style, default=Style.null())
        for number, line in enumerate(lines):
            yield Segment(self.first if number == 0 else self.rest, style)
            yield from line
            yield Segment.line()


def gutter(renderable: RenderableType, mark: str, style: str) -> RenderableType:
    """Return `renderable` drawn with `mark` (in `style`) before every line, wrapped
    lines included: text behind a gutter can never start an output line."""
    return _Gutter(renderable, mark, mark, style)


def generated_marker() -> Text:
    """The dim "Generated — not a quote" line over generated prose."""
    return Text(wording.GENERATED_LABEL, style="dim italic")


def _source_table(view: TableView) -> RenderableType:
    """A quoted table: the rows under the header rows' cells (column names)."""
    table = Table(box=box.SQUARE, show_header=bool(view.header), highlight=False)
    for column in range(view.width):
        name = Text("\n".join(visible(row[column]) for row in view.header), style="bold")
        table.add_column(name, overflow="fold")
    for row in view.body:
        table.add_row(*(Text(visible(cell)) for cell in row))
    return table


def _quote_body(block: layout.QuoteBox) -> RenderableType:
    """The panel's body: the quote's text, its tables drawn as tables."""
    parts = quote_parts(block.quote)
    if len(parts) == 1 and isinstance(parts[0], str):
        return Text(visible(block.unwrapped))
    return Group(
        *(Text(visible(part)) if isinstance(part, str) else _source_table(part) for part in parts)
    )


_PANEL_FRAME = 6
"""Columns of a panel's top border that its title cannot use (corners, padding)."""


_UNDER_PANEL = ("table", "list")
"""Kinds of note drawn under the panel, not in its border: no warning, only what the
source shows beyond the quote."""


class QuotePanel:
    """The blue verbatim panel of a quote box, its title (the label) shortened from
    the middle to the width it is drawn at (`labels.fit_label`)."""

    def __init__(self, block: layout.QuoteBox) -> None:
        self.block = block

    def panel(self, width: int) -> Panel:
        """The panel as drawn `width` columns wide: its text as `Text`, never markup;
        its body only the quote's source text (`_quote_body`)."""
        block = self.block
        subtitle = Text(wording.VERBATIM_LABEL, style="blue")
        for kind, note in block.notes:
            if kind not in _UNDER_PANEL:
                subtitle.append(f" · {_one_line(note)}", style="yellow")
        title = fit_label(_one_line(block.label), width - _PANEL_FRAME)
        return Panel(
            _quote_body(block),
            title=Text(title, style="bold"),
            subtitle=subtitle,
            border_style="blue",
        )

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.panel(options.max_width)
        notes = [_one_line(note) for kind, note in self.block.notes if kind in _UNDER_PANEL]
        if notes:  # too long for the border, and no source text: under the panel
            yield _Gutter(Text(" · ".join(notes), style="dim italic"), "  ↑ ", "    ", "dim")


def quote_panel(quote: Quote) -> QuotePanel:
    """Return the blue verbatim panel for `quote` (its text as `Text`, never markup)."""
    return QuotePanel(layout.QuoteBox(quote))


def _with_refs(text: str, refs: tuple[str, ...]) -> Text:
    body = Text(visible(text))
    if refs:
        if body.plain:
            body.append(" ")
        body.append(" ".join(f"[{_one_line(ref)}]" for ref in refs), style="cyan")
    return body


def _labelled(label: str, text: str, style: str = "dim italic") -> Text:
    line = Text()
    line.append(f"{label}: ", style=style)
    line.append(_one_line(text))
    return line


def _statement(statement: layout.StatementView) -> RenderableType:
    """Id and verdict, text with its refs, justification, earlier version: all generated."""
    head = Text(_one_line(statement.id), style="bold")
    head.append(" · ", style="dim")
    head.append(_one_line(statement.verdict), style=_VERDICT_STYLES[statement.verdict_kind])
    if statement.refined:
        head.append(f" · {wording.REFINED_FLAG}", style="bold")
    parts: list[RenderableType] = [head, _with_refs(statement.text, statement.refs)]
    if statement.justification is not None:
        parts.append(_labelled(wording.JUSTIFICATION_LABEL, statement.justification))
    if statement.original is not None:
        parts.append(_labelled(wording.REFINED_FROM_LABEL, statement.original))
    return gutter(Group(*parts), PROSE_GUTTER, "dim")


def _fact(fact: layout.FactView) -> Iterable[RenderableType]:
    """A cited triplet behind the `┆ ` gutter (generated or imported: never a quote),
    then the verbatim panel of the quote that supports it."""
    head = Text(_one_line(fact.id), style="bold")
    head.append(f" · {fact.origin} — {wording.NOT_A_QUOTE}", style="dim")
    parts: list[RenderableType] = [head, Text(visible(_one_line(fact.text)))]
    parts.append(_labelled("From", fact.provenance))
    if fact.note is not None:
        parts.append(_labelled(wording.NOTE_LABEL, fact.note, "yellow"))
    yield gutter(Group(*parts), PROSE_GUTTER, "dim")
    if fact.source is not None:
        yield gutter(Text(f"{wording.FACT_SOURCE_LABEL}:", style="dim"), PROSE_GUTTER, "dim")
        yield QuotePanel(fact.source)


def _preview(block: layout.DataBox) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, highlight=False)
    for name in block.header:
        table.add_column(Text(_one_line(name), style="bold"), overflow="fold")
    for row in block.rows:
        table.add_row(*(Text(_one_line(cell)) for cell in row))
    return table


def _data(block: layout.DataBox) -> RenderableType:
    heading = Text(f"{wording.DATA_LABEL} ", style="bold magenta")
    heading.append(_one_line(block.source), style="bold magenta")
    heading.append(f" — {wording.NOT_A_QUOTE}", style="dim")
    parts: list[RenderableType] = [heading]
    for name, value in block.fields:
        parts.append(_labelled(name, value, "bold" if name == "Value" else "dim"))
    parts.append(Text(block.row_count, style="dim"))
    if block.header:
        parts.append(_preview(block))
    return gutter(Group(*parts), DATA_GUTTER, "magenta")


def data_block(result: DataResult) -> RenderableType:
    """Return a data result behind the `▦ ` gutter: where it came from, every
    parameter of its query, its value and the preview rows (all as `Text`)."""
    return _data(layout.DataBox(result))


def _faithfulness(block: layout.FaithfulnessView) -> Iterable[RenderableType]:
    """The faithfulness line behind the `┆ ` gutter, then each unsupported sentence
    (generated text) with its reason."""
    line = Text(f"{wording.FAITHFULNESS_LABEL}: ", style="bold")
    line.append(block.summary)
    line.append(f" — {block.method}", style="dim")
    parts: list[RenderableType] = [line]
    for sentence, reason in block.unsupported:
        item = Text("✗ ", style="red")
        item.append(visible(_one_line(sentence)))
        item.append(f" — {_one_line(reason)}", style="italic red")
        parts.append(item)
    yield gutter(Group(*parts), PROSE_GUTTER, "dim")


def _notice(text: Text, style: str) -> RenderableType:
    return gutter(text, _NOTICE_GUTTER, style)


def _renderables(block: layout.Block) -> Iterable[RenderableType]:
    """The terminal drawing of one layout block."""
    if isinstance(block, layout.Question):
        label = f"{wording.QUESTION_LABEL}: "
        yield _Gutter(Text(_one_line(block.text)), label, " " * len(label), "bold")
    elif isinstance(block, layout.Refusal):
        refusal = Text(f"{wording.REFUSED_LABEL}: {block.text} ", style="bold yellow")
        refusal.append(f"({_one_line(block.reason)})", style="yellow")
        yield _notice(refusal, "bold yellow")
    elif isinstance(block, layout.Notice):
        style = _NOTICE_STYLES[block.kind]
        yield _notice(Text(f"{block.label}: {_one_line(block.text)}", style=style), style)
    elif isinstance(block, layout.Escalation):
        heading = f"{wording.ESCALATION_HEADING}. {wording.ESCALATION_LABEL}"
        yield _notice(Text(heading, style="bold magenta"), "bold magenta")
        yield gutter(Text(visible(block.reason)), PROSE_GUTTER, "dim")
    elif isinstance(block, layout.Prose):
        body = _with_refs(block.text, block.citations)
        yield gutter(Group(generated_marker(), body), PROSE_GUTTER, "dim")
    elif isinstance(block, layout.QuoteBox):
        yield QuotePanel(block)
    elif isinstance(block, layout.DataBox):
        yield _data(block)
    elif isinstance(block, layout.Missing):
        missing = Text(f"Missing {block.what} ")
        missing.append(_one_line(block.item_id), style="bold")
        missing.append(" — not shown.")
        yield _notice(missing, "red")
    elif isinstance(block, layout.Statements):
        yield Text("")
        yield gutter(Text(wording.STATEMENTS_LABEL + ":", style="bold"), PROSE_GUTTER, "dim")
        yield from map(_statement, block.items)
    elif isinstance(block, layout.Facts):
        yield Text("")
        yield gutter(Text(block.label + ":", style="bold"), PROSE_GUTTER, "dim")
        for fact in block.items:
            yield from _fact(fact)
    elif isinstance(block, layout.FaithfulnessView):
        yield from _faithfulness(block)
    elif isinstance(block, layout.Removed):
        yield Text("")
        yield Text(wording.REJECTED_HEADING + ":", style="bold red")
        for item in block.items:
            line = Text(_one_line(item.raw))
            line.append(" — ", style="dim")
            line.append(_one_line(item.reason), style="italic red")
            yield _Gutter(line, "  ✗ ", "    ", "red")
    else:
        yield Text("")
        for meta in block.lines:
            yield _Gutter(Text(_one_line(meta), style="dim"), "", "    ", "dim")


def render_terminal(answer: Answer, console: Console, show_cited: bool = False) -> None:
    """Print `answer` on `console`: the blocks of `answer_layout` in order.

    The question behind its `Question: ` label; the refusal, notices and reports of missing
    quotes or data results behind the `! ` gutter; the escalation's heading there and
    its reason behind the `┆ ` gutter; prose behind the `┆ ` gutter under a dim
    "Generated — not a quote" marker, its citations after it as `[ref]`; quote boxes
    (with `show_cited`, also the passages each prose segment cites) as panels; data
    results behind the `▦ ` gutter; the rationale statements behind the `┆ ` gutter; the
    faithfulness of the prose and the cited triplets behind it too, each triplet
    followed by the panel of its supporting quote; removed items behind `  ✗ `; and a dim
    footer line.
    """
    for block in layout.answer_layout(answer, show_cited):
        for renderable in _renderables(block):
            console.print(renderable)


def render_text(answer: Answer, width: int = 100, show_cited: bool = False) -> str:
    """Return what `render_terminal` prints, as plain text (no colour, no escapes)."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        color_system=None,
        no_color=True,
        force_terminal=False,
        force_jupyter=False,
        force_interactive=False,
        legacy_windows=False,
        highlight=False,
        markup=False,
        emoji=False,
        _environ={},
    )
    render_terminal(answer, console, show_cited=show_cited)
    return buffer.getvalue()
