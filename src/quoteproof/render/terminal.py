"""Answer -> terminal (rich).

Contract (the guarantee of DESIGN.md section 1, for the terminal):

- Each `QuoteSegment` whose quote the answer holds is drawn as one blue
  `rich.panel.Panel` (border_style "blue"): title the quote's label, subtitle
  "verbatim from source" (plus " · p. 4" with the quote's own pages, " · OCR
  text…" for OCR text, " · differs: …" when the model's words differed),
  body `Text(quote.text)`. Nothing else is drawn in a panel.
- No text from the answer is ever parsed as rich markup: every piece is a
  `rich.text.Text`, so "[bold]x[/bold]" prints literally.
- No text from the answer ever starts an output line. Prose, refusal reasons and
  rejected output are printed behind a gutter (`┆ `, `! `, `  ✗ `) on every line,
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

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from quoteproof.ingest.labels import page_part
from quoteproof.model import REFUSAL_TEXT, Answer, ProseSegment, Quote

__all__ = [
    "GENERATED_MARKER",
    "PROSE_GUTTER",
    "VERBATIM_SUBTITLE",
    "quote_panel",
    "render_terminal",
    "render_text",
    "visible",
]

VERBATIM_SUBTITLE = "verbatim from source"
GENERATED_MARKER = "generated — not a quote"
PROSE_GUTTER = "┆ "

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


def _gutter(renderable: RenderableType, mark: str, style: str) -> _Gutter:
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
    return _gutter(Group(marker, body), PROSE_GUTTER, "dim")


def _renderables(answer: Answer) -> Iterable[RenderableType]:
    if answer.status == "refused":
        refusal = Text(REFUSAL_TEXT + " ", style="bold yellow")
        refusal.append(f"({visible(answer.refusal_reason or 'no reason given')})", style="yellow")
        yield _gutter(refusal, "! ", "bold yellow")
    for segment in answer.segments if answer.status == "answered" else ():
        if isinstance(segment, ProseSegment):
            prose = _prose(segment)
            if prose is not None:
                yield prose
            continue
        try:
            quote = answer.quote(segment.quote_id)
        except KeyError:
            text = Text(f"quote {_one_line(segment.quote_id)!r} is missing; not shown")
            yield _gutter(text, "! ", "red")
            continue
        yield quote_panel(quote)
    if answer.rejected:
        yield Text("")
        yield Text("removed (not verifiable):", style="bold red")
        for item in answer.rejected:
            line = Text(_one_line(item.raw))
            line.append(" — ", style="dim")
            line.append(_one_line(item.reason), style="italic red")
            yield _Gutter(line, "  ✗ ", "    ", "red")


def render_terminal(answer: Answer, console: Console) -> None:
    """Print `answer` on `console`: prose, panels, refusal, removed items, in that order.

    Prose segments are printed in order with the quotes, each behind the `┆ ` gutter
    under a dim "generated — not a quote" marker, its citations after it as
    `[ref]`. A quote segment whose quote is missing is reported, never drawn.
    """
    for renderable in _renderables(answer):
        console.print(renderable)


def render_text(answer: Answer, width: int = 100) -> str:
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
    render_terminal(answer, console)
    return buffer.getvalue()
