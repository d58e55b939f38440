"""Which answer modes a backend can run."""

from __future__ import annotations

from typing import get_args

from quoteproof.errors import ModeUnavailableError
from quoteproof.llm.base import Backend
from quoteproof.model import NO_MODEL_BACKEND, AnswerMode

__all__ = ["answer_modes", "check_mode"]

ALL_MODES: tuple[AnswerMode, ...] = get_args(AnswerMode)


def answer_modes(backend: Backend) -> tuple[AnswerMode, ...]:
    """The modes `backend` can answer in: only `quote` without a language model
    (the `extractive` backend), every mode with one."""
    return ("quote",) if backend.name == NO_MODEL_BACKEND else ALL_MODES


def check_mode(backend: Backend, mode: str) -> None:
    """Raise `ModeUnavailableError` unless `backend` can answer in `mode`."""
    if mode not in answer_modes(backend):
        raise ModeUnavailableError(mode)
