"""Answer -> terminal (rich).

Contract (the guarantee of DESIGN.md section 1, for the terminal):

- Each `QuoteSegment` whose quote the answer holds is drawn as one blue
  `rich.panel.Panel` (border_style "blue"): title the quote's label, subtitle
  "verbatim from source" (plus " · p. 4" with the quote's own pages, " · OCR
  text…" for OCR text, " · differs: …" when the model's words differed),
  body `Text(quote.text)`. With `show_cited`, each passage a prose segment cites
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
- No text from the answer ever starts an output line. Prose, refusal reasons and
  rejected output are printed behind a gutter (`┆ `, `! `, `▦ `, `  ✗ `) on every line,
  wrapped lines included, so only real panels have lines starting with a box
  corner: a prose imitation of a panel ("╰── verbatim from source ──╯") always
  shows up behind the gutter. Without colour, a line starts with `╭`, `│` or `╰`
  exactly when it belongs to a verbatim panel.
- Control characters (ESC included) are shown as Unicode control pictures (`␛`),
  so answer text cannot send terminal escape sequences. Line endings (`\\r\\n`,
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

from quoteproof.ingest.labels import page_part
from quoteproof.model import (
    REFUSAL_TEXT,
    Answer,
    DataResult,
    DataSegment,
    ProseSegment,
    Quote,
    Statement,
)
from quoteproof.render.dataresult import (
    cell_text,
    describe_aggregate,
    describe_filters,
    describe_rows,
    describe_source,
    preview_header,
)
from quoteproof.render.provenance import NO_MODEL_NOTICE, model_parts

__all__ = [
    "DATA_GUTTER",
    "ESCALATION_HEADING",
    "GENERATED_MARKER",
    "PARTIAL_NOTICE",
    "PROSE_GUTTER",
    "STATEMENTS_HEADING",
    "VERBATIM_SUBTITLE",
    "data_block",
    "gutter",
    "quote_panel",
    "render_terminal",
    "render_text",
    "visible",
]

VERBATIM_SUBTITLE = "verbatim from source"
GENERATED_MARKER = "generated — not a quote"
PROSE_GUTTER = "┆ "
DATA_GUTTER = "▦ "
PARTIAL_NOTICE = (
    "partial answer: sentences without a valid citation were removed, "
    "or the work stopped before it was complete"
)
ESCALATION_HEADING = "escalated to a person; the model's reason (generated, not a quote):"
STATEMENTS_HEADING = "Rationale statements (generated, checked by the model)"

_LINE_BREAK = re.compile("\r\n|[\r\x85\u2028\u2029]")
_WHITESPACE = re.compile(r"\s+")


def _picture(ch: str) -> str:
    """Return a visible stand-in for a control character, or `ch` itself."""
    code = ord(ch)
    if ch in "\n\t":
        return ch
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    if 0x80 <= code <= 0x9F:
        return "\ufffd"
    return ch


def visible(text: str) -> str:
    """Return `text` safe to print: line endings become `\\n`, other control
    characters (ESC included) their Unicode pictures, so no escape sequence passes."""
    text = _LINE_BREAK.sub("\n", text)
    return "".join(_picture(ch) for ch in text)


def _one_line(text: str) -> str:
    """Collapse whitespace runs (line breaks included) to a space, then `visible`."""
    return visible(_WHITESPACE.sub(" ", text).strip())


class _Gutter:
    """Render `renderable` narrower by the prefix width, each line behind a prefix.

    `first` prefixes the first line, `rest` every later one (wrapped lines too).
    Both must have the same cell width.
    """

    def __init__(self, renderable: RenderableType, first: str, rest: str, style: str) -> None:
        self.renderable = renderable
        self.first = first
        self.rest = rest
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width - Text(self.first).cell_len)
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


def quote_panel(quote: Quote) -> Panel:
    """Return the blue verbatim panel for `quote` (its text as `Text`, never markup)."""
    subtitle = Text(VERBATIM_SUBTITLE, style="blue")
    page = page_part(quote.pages)
    if page is not None:
        subtitle.append(f" · {page}", style="blue")
    if quote.ocr:
        subtitle.append(" · OCR text: check against the page", style="yellow")
    if quote.differs:
        subtitle.append(" · differs: ", style="yellow")
        subtitle.append(_one_line(quote.differs), style="yellow")
    return Panel(
        Text(visible(quote.text)),
        title=Text(_one_line(quote.label), style="bold"),
        subtitle=subtitle,
        border_style="blue",
    )


def _prose(segment: ProseSegment) -> RenderableType | None:
    body = Text(visible(segment.text.strip()))
    if segment.citations:
        if body.plain:
            body.append(" ")
        body.append(" ".join(f"[{_one_line(ref)}]" for ref in segment.citations), style="cyan")
    if not body.plain:
        return None
    marker = Text(GENERATED_MARKER, style="dim italic")
    return gutter(Group(marker, body), PROSE_GUTTER, "dim")


def _label(statement: Statement) -> Text:
    label = statement.label
    if label is None:
        return Text("UNVERIFIED", style="bold yellow")
    if label.startswith("CORRECT"):
        style = "bold green"
    elif label.startswith("INCORRECT"):
        style = "bold red"
    else:
        style = "bold yellow"
    return Text(_one_line(label), style=style)


def _statement(statement: Statement) -> RenderableType:
    """Id and label, text with its refs, justification, earlier version: all generated."""
    head = Text(_one_line(statement.id) or "(no id)", style="bold")
    head.append(" · ", style="dim")
    head.append_text(_label(statement))
    if statement.original is not None:
        head.append(" · refined after the check", style="bold")
    body = Text(visible(statement.text.strip()))
    if statement.refs:
        if body.plain:
            body.append(" ")
        body.append(" ".join(f"[{_one_line(ref)}]" for ref in statement.refs), style="cyan")
    parts: list[RenderableType] = [head, body]
    if statement.justification is not None:
        justification = Text()
        justification.append("justification: ", style="dim italic")
        justification.append(visible(statement.justification.strip()))
        parts.append(justification)
    if statement.original is not None:
        original = Text()
        original.append("refined from: ", style="dim italic")
        original.append(visible(statement.original.strip()))
        parts.append(original)
    return gutter(Group(*parts), PROSE_GUTTER, "dim")


def _data_line(label: str, value: str) -> Text:
    line = Text()
    line.append(label, style="dim")
    line.append(_one_line(value))
    return line


def _preview(result: DataResult) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, highlight=False)
    for name in preview_header(result):
        table.add_column(Text(_one_line(name), style="bold"), overflow="fold")
    for row in result.rows:
        table.add_row(*(Text(_one_line(cell_text(cell))) for cell in row))
    return table


def data_block(result: DataResult) -> RenderableType:
    """Return a data result behind the `▦ ` gutter: where it came from, every
    parameter of its query, its value and the preview rows (all as `Text`)."""
    heading = Text(_one_line(describe_source(result)), style="bold magenta")
    heading.append(" — not a quote", style="dim")
    parts: list[RenderableType] = [heading]
    parts.append(_data_line("query: ", describe_filters(result.filters)))
    if result.period is not None:
        parts.append(_data_line("period: ", result.period))
    if result.columns:
        parts.append(_data_line("columns: ", ", ".join(result.columns)))
    if result.source is not None:
        parts.append(_data_line("from query: ", result.source))
    aggregate = describe_aggregate(result)
    if aggregate is not None:
        parts.append(Text(_one_line(aggregate), style="bold"))
    parts.append(Text(describe_rows(result), style="dim"))
    if result.rows:
        parts.append(_preview(result))
    return gutter(Group(*parts), DATA_GUTTER, "magenta")


def _missing(what: str, item_id: str) -> RenderableType:
    return gutter(Text(f"{what} {_one_line(item_id)!r} is missing; not shown"), "! ", "red")


def _footer(answer: Answer) -> list[Text]:
    """`mode: …` (unless "quote"), `tokens: … prompt · … completion` (when known) and
    `model: … · server: …` (the parts known, `model_parts`)."""
    lines = [] if answer.mode == "quote" else [Text(f"mode: {_one_line(answer.mode)}", style="dim")]
    if answer.usage is not None:
        usage = answer.usage
        tokens = f"tokens: {usage.prompt_tokens} prompt · {usage.completion_tokens} completion"
        lines.append(Text(tokens, style="dim"))
    model = model_parts(answer.llm)
    if model:
        lines.append(Text(_one_line(" · ".join(model)), style="dim"))
    return lines


def _renderables(answer: Answer, show_cited: bool) -> Iterable[RenderableType]:
    if answer.status == "refused":
        refusal = Text(REFUSAL_TEXT + " ", style="bold yellow")
        refusal.append(f"({visible(answer.refusal_reason or 'no reason given')})", style="yellow")
        yield gutter(refusal, "! ", "bold yellow")
    if answer.partial:
        yield gutter(Text(PARTIAL_NOTICE, style="bold yellow"), "! ", "bold yellow")
    if not answer.llm.language_model:
        yield gutter(Text(NO_MODEL_NOTICE, style="yellow"), "! ", "yellow")
    for notice in answer.notices:
        yield gutter(Text(visible(notice), style="yellow"), "! ", "yellow")
    if answer.escalation is not None:
        yield gutter(Text(ESCALATION_HEADING, style="bold magenta"), "! ", "bold magenta")
        reason = Text(visible(answer.escalation.strip()) or "(no reason given)")
        yield gutter(reason, PROSE_GUTTER, "dim")
    for segment in answer.segments if answer.status == "answered" else ():
        if isinstance(segment, ProseSegment):
            prose = _prose(segment)
            if prose is not None:
                yield prose
            if show_cited:
                yield from map(quote_panel, answer.cited_passages(segment.citations))
        elif isinstance(segment, DataSegment):
            try:
                yield data_block(answer.data_result(segment.data_id))
            except KeyError:
                yield _missing("data result", segment.data_id)
        else:
            try:
                yield quote_panel(answer.quote(segment.quote_id))
            except KeyError:
                yield _missing("quote", segment.quote_id)
    if answer.statements:
        yield Text("")
        yield gutter(Text(STATEMENTS_HEADING + ":", style="bold"), PROSE_GUTTER, "dim")
        yield from map(_statement, answer.statements)
    if answer.rejected:
        yield Text("")
        yield Text("removed (not verifiable):", style="bold red")
        for item in answer.rejected:
            line = Text(_one_line(item.raw))
            line.append(" — ", style="dim")
            line.append(_one_line(item.reason), style="italic red")
            yield _Gutter(line, "  ✗ ", "    ", "red")
    footer = _footer(answer)
    if footer:
        yield Text("")
        yield from footer


def render_terminal(answer: Answer, console: Console, show_cited: bool = False) -> None:
    """Print `answer` on `console`.

    Order: the refusal (fixed sentence and reason), the partial-answer notice,
    `NO_MODEL_NOTICE` for an answer made without a language model, the notices, the
    escalation (its reason behind the `┆ ` gutter), the segments in order, the
    rationale statements, removed items, and a dim footer with the mode (unless
    "quote"), token usage (when known) and the model and server that answered
    (`model_parts`).

    Prose segments are printed behind the `┆ ` gutter under a dim "generated — not
    a quote" marker, their citations after them as `[ref]`; with `show_cited`, the
    passages a prose segment cites follow it as verbatim panels. Quote segments are
    panels; data segments are data blocks behind the `▦ ` gutter. A segment whose
    quote or data result is missing is reported, never drawn.
    """
    for renderable in _renderables(answer, show_cited):
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
