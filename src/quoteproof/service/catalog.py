"""What a face's menus offer: the answer modes a backend can run (from
`strategies.registry`) and the context forms (`model.ContextForm`), with their help.
The registries a face makes its options of are in `service.options`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from quoteproof.llm.base import Backend
from quoteproof.model import NO_MODEL_BACKEND, AnswerMode, ContextForm
from quoteproof.strategies.registry import STRATEGIES, modes_for


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


@dataclass(frozen=True)
class ContextChoice:
    """A context form as a menu shows it: its name, title and one-sentence summary."""

    form: ContextForm
    title: str
    summary: str


CONTEXT_CHOICES = (
    ContextChoice(
        "paragraphs",
        "Retrieved passages",
        "the passages retrieval finds for the question (the default)",
    ),
    ContextChoice(
        "triplets",
        "Knowledge-graph facts",
        "triplets alone, from an imported graph and, with a model, extracted from the "
        "passages: a short prompt; facts are shown as facts, never as quotes",
    ),
    ContextChoice(
        "both",
        "Passages and facts",
        "the retrieved passages and the triplets; sentences may cite either",
    ),
    ContextChoice(
        "whole",
        "Every passage",
        "every passage of the documents in scope, when they fit the model's context "
        "window (else the retrieved ones, with a notice)",
    ),
)
"""Every context form, in `ContextForm`'s order, as a menu offers it."""
FACT_FORMS = frozenset({"triplets", "both"})
"""The context forms that give knowledge-graph facts."""


def context_choices(backend: Backend, has_facts: bool) -> tuple[ContextChoice, ...]:
    """The context forms worth offering for answers by `backend`: every one with a
    language model; without one, retrieved passages, and the forms with facts only
    when the index holds imported ones (`has_facts`: nothing extracts them), never
    every passage (which fills a model's context window)."""
    if backend.name != NO_MODEL_BACKEND:
        return CONTEXT_CHOICES
    return tuple(
        choice
        for choice in CONTEXT_CHOICES
        if choice.form == "paragraphs" or (choice.form in FACT_FORMS and has_facts)
    )


def context_forms() -> tuple[ContextForm, ...]:
    """The names of the context forms (`model.ContextForm`), the default first."""
    return get_args(ContextForm)


def context_help() -> str:
    """What each context form gives the model, one after another (for a face's help)."""
    return "; ".join(f"{c.form}: {c.summary}" for c in CONTEXT_CHOICES) + "."
