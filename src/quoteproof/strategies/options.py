"""`AnswerOptions`: how to answer, the one object every face hands, whole, through the
service and the index to the strategies. Each field carries its command-line text
(`option_text.OptionText`): the CLI's answer options and the HTTP API's request
fields are made from these fields, so an option is declared once, here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, get_type_hints

from quoteproof.defaults import (
    DEFAULT_ASK_TOP_K,
    DEFAULT_MAX_STEPS,
    DEFAULT_THRESHOLD,
)
from quoteproof.option_text import OptionText

if TYPE_CHECKING:  # the CLI's help reads these fields without loading the library
    from quoteproof.model import AnswerMode, ContextForm, FaithfulnessMethod
    from quoteproof.quoting.citations import Strictness

__all__ = ["AnswerOptions", "answer_field_types"]


def _option(
    default: Any,
    flag: str,
    help: str,
    minimum: float | None = None,
    maximum: float | None = None,
    show_default: bool = True,
) -> Any:
    """An `AnswerOptions` field with its command-line text (`OptionText`)."""
    text = OptionText((flag,), help, minimum=minimum, maximum=maximum, show_default=show_default)
    return field(default=default, metadata={"option": text})


@dataclass(frozen=True)
class AnswerOptions:
    """How to answer: the `mode` (`strategies.registry`), cite's `strictness`, the
    agent's `max_steps`, the `top_k` sources given to the model, the fuzzy
    `threshold` (0-100) a paraphrased quote needs to resolve, the `context` form the
    model is given (`strategies.context`) and, for `context="whole"`, the one
    `document` (an id or source path) given whole instead of every document in
    scope. `faithfulness` is how the answer's claims are checked against the
    passages they cite (`quoteproof.faithfulness`): `model`, the default, costs one
    more model call per answer with cited prose and falls back to `deterministic`
    without a language model."""

    # AnswerMode and Strictness are Literals of strings: immutable defaults.
    mode: AnswerMode = _option("quote", "--mode", "The answer mode.")  # noqa: RUF009
    strictness: Strictness = _option(  # noqa: RUF009
        "strict",
        "--strictness",
        "cite mode: strict refuses unless every sentence cites a source; "
        "lenient drops uncited sentences and marks the answer partial.",
    )
    max_steps: int = _option(DEFAULT_MAX_STEPS, "--max-steps", "agent mode: most model calls.", 1)
    top_k: int = _option(DEFAULT_ASK_TOP_K, "--top-k", "Sources given to the model.", 1)
    threshold: float = _option(
        DEFAULT_THRESHOLD,
        "--threshold",
        "Fuzzy match score 0-100 a paraphrased quote needs to resolve to source text "
        "(not the refusal threshold: quoteproof calibrate sets that).",
        0.0,
        100.0,
    )
    context: ContextForm = _option(  # noqa: RUF009
        "paragraphs",
        "--context",
        "What the model is given: retrieved paragraphs; knowledge-graph triplets (from "
        "`kg import`, or extracted by the model) alone; both; or whole: every passage of "
        "the documents in scope, when they fit the model's context window (else "
        "retrieval, with a notice).",
    )
    document: str | None = _option(
        None,
        "--document",
        "--context whole: give the model only this document (an id from `documents "
        "list`, or its file).",
        show_default=False,
    )
    faithfulness: FaithfulnessMethod = _option(  # noqa: RUF009
        "model",
        "--faithfulness",
        "How each generated sentence is checked against the passages it cites: model (the "
        "default: the answering model judges them, one more call per answer with cited "
        "prose; without a language model, deterministic) or deterministic (numbers, units, "
        "dates, names, negation; no model call).",
    )


def answer_field_types() -> dict[str, Any]:
    """The type of each field of `AnswerOptions` by name, resolved (for a face that
    makes its request schema from them; this loads the modules the types are in)."""
    from quoteproof.model import AnswerMode, ContextForm, FaithfulnessMethod
    from quoteproof.quoting.citations import Strictness

    return get_type_hints(
        AnswerOptions,
        localns={
            "AnswerMode": AnswerMode,
            "Strictness": Strictness,
            "ContextForm": ContextForm,
            "FaithfulnessMethod": FaithfulnessMethod,
        },
    )
