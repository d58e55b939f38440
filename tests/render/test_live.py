"""The terminal's streaming draft: generated blocks only with text, quotes as panels."""

from __future__ import annotations

import io

from rich.console import Console

from helpers.answers import make_quote
from quoteproof.render.live import Draft
from quoteproof.render.wording import GENERATED_LABEL
from quoteproof.streaming import AnswerEvent, ProseDelta, QuoteResolved, StageStarted

SOURCE = "Acyclovir shortens the attack when started within 72 hours."


def drawn(events: list[AnswerEvent], width: int = 70) -> str:
    draft = Draft()
    for event in events:
        draft(event)
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, _environ={}).print(draft)
    return buffer.getvalue()


def test_whitespace_prose_draws_no_generated_block() -> None:
    quote = QuoteResolved(make_quote(SOURCE, 0, len(SOURCE)))
    events: list[AnswerEvent] = [
        StageStarted("answer"),
        ProseDelta("\n"),
        quote,
        ProseDelta("\n\n"),
        ProseDelta("  "),
        quote,
        ProseDelta(" \n"),
    ]
    out = drawn(events)
    assert GENERATED_LABEL not in out
    assert out.count("╭") == 2


def test_prose_block_opens_with_text_and_keeps_inner_whitespace() -> None:
    events: list[AnswerEvent] = [
        StageStarted("answer"),
        ProseDelta("\n\n"),
        ProseDelta("Treat "),
        ProseDelta("\n"),
        ProseDelta("early."),
        ProseDelta("\n\n"),
    ]
    lines = drawn(events).splitlines()
    assert lines[1:] == ["┆ " + GENERATED_LABEL, "┆ Treat ", "┆ early."]
