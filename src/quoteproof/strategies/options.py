"""`AnswerOptions`: how to answer, the one object every face hands, whole, through the
service and the index to the strategies."""

from __future__ import annotations

from dataclasses import dataclass

from quoteproof.defaults import (
    DEFAULT_ASK_TOP_K,
    DEFAULT_MAX_STEPS,
    DEFAULT_THRESHOLD,
)
from quoteproof.model import AnswerMode, ContextForm
from quoteproof.quoting.citations import Strictness

__all__ = ["AnswerOptions"]


@dataclass(frozen=True)
class AnswerOptions:
    """How to answer: the `mode` (`strategies.registry`), cite's `strictness`, the
    agent's `max_steps`, the `top_k` sources given to the model, the fuzzy
    `threshold` (0-100) a paraphrased quote needs to resolve, the `context` form the
    model is given (`strategies.context`) and, for `context="whole"`, the one
    `document` (an id or source path) given whole instead of every document in
    scope."""

    mode: AnswerMode = "quote"
    strictness: Strictness = "strict"
    max_steps: int = DEFAULT_MAX_STEPS
    top_k: int = DEFAULT_ASK_TOP_K
    threshold: float = DEFAULT_THRESHOLD
    context: ContextForm = "paragraphs"
    document: str | None = None
