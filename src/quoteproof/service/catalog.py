"""What a face may offer: the answer modes (from `strategies.registry`) and the
backends (from `llm.registry`), with their help."""

from __future__ import annotations

from dataclasses import dataclass

from quoteproof.llm.base import Backend
from quoteproof.model import AnswerMode
from quoteproof.strategies.registry import STRATEGIES, mode_help, modes, modes_for

__all__ = ["ModeChoice", "mode_choices", "mode_help", "modes"]


@dataclass(frozen=True)
class ModeChoice:
    """An answer mode as a menu shows it: its name, title and one-sentence summary."""

    mode: AnswerMode
    title: str
    summary: str


def mode_choices(backend: Backend) -> tuple[ModeChoice, ...]:
    """The modes `backend` can answer in, in the registry's order (`modes_for`)."""
    runnable = modes_for(backend)
    return tuple(
        ModeChoice(entry.mode, entry.title, entry.summary)
        for entry in STRATEGIES
        if entry.mode in runnable
    )
