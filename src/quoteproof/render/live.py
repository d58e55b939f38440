"""The terminal's draft of an answer while it is being made (`ask --stream`).

The draft follows the events of `quoteproof.streaming`: prose appears as the model
writes it, behind the prose gutter and labelled as generated (a "Generated — not
a quote" block is drawn only once it has visible text: whitespace between quotes
draws nothing, nor does a block's leading or trailing whitespace); a quote appears
only when the resolver has turned it into source text, as the same blue panel the
final answer uses. The draft is transient: when the answer is complete it disappears and
the final rendering (which may drop what failed a check) is printed instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.status import Status
from rich.text import Text

from quoteproof.render.terminal import (
    PROSE_GUTTER,
    data_block,
    generated_marker,
    gutter,
    quote_panel,
)
from quoteproof.render.visible import visible, visible_line
from quoteproof.streaming import (
    AnswerEvent,
    DataComputed,
    EventSink,
    ProseDelta,
    QuoteDropped,
    QuoteResolved,
    StageStarted,
)

_STAGE_NOTES = {
    "retry": "the reply failed the citation check; retrying with a stricter prompt",
    "generate": "writing rationale statements",
    "verify": "verifying the statements",
    "refine": "refining the incorrect statements",
    "agent": "the model is calling tools",
}


class Draft:
    """The draft so far, built from answer events; a rich renderable."""

    def __init__(self) -> None:
        self.stage = ""
        self.parts: list[Text | RenderableType] = []
        self._prose: Text | None = None
        self._held = ""  # trailing whitespace of the prose so far, drawn once text follows

    def __call__(self, event: AnswerEvent) -> None:
        """Take one event into the draft."""
        if isinstance(event, StageStarted):
            self.stage = event.stage
            if event.stage in ("answer", "retry"):
                self.parts, self._prose, self._held = [], None, ""
        elif isinstance(event, ProseDelta):
            self._take_prose(event.text)
        else:
            self._prose, self._held = None, ""
            self.parts.append(_renderable(event))

    def _take_prose(self, text: str) -> None:
        """Append prose, holding back trailing whitespace; open the generated block
        only when there is visible text for it."""
        held = self._held + text
        body = held.rstrip()
        self._held = held[len(body) :]
        if not body:
            return
        if self._prose is None:
            body = body.lstrip()
            self._prose = Text()
            marker = generated_marker()
            self.parts.append(gutter(Group(marker, self._prose), PROSE_GUTTER, "dim"))
        self._prose.append(visible(body))

    def __rich__(self) -> RenderableType:
        note = _STAGE_NOTES.get(self.stage, "writing the answer")
        header = Text(f"draft: {note}…", style="dim")
        return Group(header, *self.parts)


def _renderable(event: QuoteResolved | QuoteDropped | DataComputed) -> RenderableType:
    if isinstance(event, QuoteResolved):
        return quote_panel(event.quote)
    if isinstance(event, QuoteDropped):
        removed = Text(f"quote removed: {visible(event.rejected.reason)}", style="red")
        return gutter(removed, "✗ ", "red")
    return data_block(event.result)


@contextmanager
def answer_progress(console: Console, backend: str, live: bool) -> Iterator[EventSink]:
    """Show progress while an answer is made; yield the sink to pass to `ask`.

    `live`: draw the transient draft on `console`; else a spinner naming the
    backend and the current stage.
    """
    if live:
        draft = Draft()
        with Live(draft, console=console, transient=True, refresh_per_second=8):
            yield draft
        return
    backend = visible_line(backend)
    status = Status(Text(f"asking {backend}…"), console=console, spinner="dots")

    def on_event(event: AnswerEvent) -> None:
        if isinstance(event, StageStarted):
            note = _STAGE_NOTES.get(event.stage, "writing the answer")
            status.update(Text(f"asking {backend}: {note}…"))

    with status:
        yield on_event
