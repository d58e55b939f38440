"""The answer modes: for each, its strategy, what it needs of a backend and its help.

`STRATEGIES` is the one list of modes. `ask --mode` (its choices and help), the
HTTP API's schema, the web page's mode options and README's mode table are derived
from it; `model.AnswerMode` is the static type of its names (a test keeps the two
equal). A mode runs on a backend that has every `Capability` it `needs`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quoteproof.errors import ModeUnavailableError, UsageError
from quoteproof.llm.capability import Capability

if TYPE_CHECKING:
    from quoteproof.llm.base import Backend
    from quoteproof.llm.extractive import ExtractiveChoice
    from quoteproof.model import Answer, AnswerMode, Chunk, Hit
    from quoteproof.strategies.options import AnswerOptions
    from quoteproof.strategies.session import AnswerSession
    from quoteproof.tables.session import TableSession

__all__ = [
    "STRATEGIES",
    "Strategy",
    "StrategyInputs",
    "mode_help",
    "mode_table",
    "modes",
    "modes_for",
    "strategy",
    "strategy_for",
]


@dataclass(frozen=True)
class StrategyInputs:
    """What a strategy may use besides the session: the answer `options` (cite's
    `strictness`, the agent's `max_steps`), `search` (its search tool), `tables`
    (makes its table session) and `no_model` (the no-model answer for given sources,
    whose best units quote and cite mode offer the model, and which quote mode falls
    back to when nothing the model chose checks; None: every unit is offered and
    there is no fallback)."""

    options: AnswerOptions
    search: Callable[[str], Sequence[Hit]]
    tables: Callable[[], TableSession]
    no_model: Callable[[Sequence[Chunk]], ExtractiveChoice] | None = None


@dataclass(frozen=True)
class Strategy:
    """An answer mode: its name, a title and one-sentence summary (help texts), the
    backend capabilities it `needs`, and `run`, which composes the answer."""

    mode: AnswerMode
    title: str
    summary: str
    needs: frozenset[Capability]
    run: Callable[[AnswerSession, StrategyInputs], Answer]

    def runs_on(self, backend: Backend) -> bool:
        """True when `backend` has every capability this mode needs."""
        return self.needs <= backend.capabilities


_MODEL = frozenset({Capability.MODEL})

# Each mode's strategy is imported when the mode runs: the registry itself (`ask
# --mode`'s choices and help) loads no strategy, model type or backend.


def _run_quote(session: AnswerSession, inputs: StrategyInputs) -> Answer:
    from quoteproof.strategies.quote import answer_quote

    return answer_quote(session, inputs.no_model)


def _run_cite(session: AnswerSession, inputs: StrategyInputs) -> Answer:
    from quoteproof.strategies.cite import answer_cite

    return answer_cite(session, inputs.options.strictness, inputs.no_model)


def _run_rationale(session: AnswerSession, _: StrategyInputs) -> Answer:
    from quoteproof.strategies.rationale import answer_rationale

    return answer_rationale(session)


def _run_agent(session: AnswerSession, inputs: StrategyInputs) -> Answer:
    from quoteproof.strategies.agent import answer_agent

    return answer_agent(session, inputs.search, inputs.tables(), inputs.options.max_steps)


STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        "quote",
        "Quote",
        "passages from the sources, with short cited sentences (without a model: "
        "the best sentences, chosen by retrieval)",
        frozenset(),
        _run_quote,
    ),
    Strategy(
        "cite",
        "Cite",
        "prose in which every sentence cites its sources (checked, retried once)",
        _MODEL,
        _run_cite,
    ),
    Strategy(
        "rationale",
        "Rationale",
        "statements generated, checked by the model, refined, then answered",
        _MODEL,
        _run_rationale,
    ),
    Strategy(
        "agent",
        "Agent",
        "the model calls tools that compose the answer (search, quote, table queries)",
        _MODEL | {Capability.TOOLS},
        _run_agent,
    ),
)

_BY_MODE: dict[str, Strategy] = {entry.mode: entry for entry in STRATEGIES}


def modes() -> tuple[AnswerMode, ...]:
    """Every mode's name, in the registry's order (the first is the default)."""
    return tuple(entry.mode for entry in STRATEGIES)


def strategy(mode: str) -> Strategy:
    """The strategy of `mode`. Raises `UsageError` for an unknown mode."""
    found = _BY_MODE.get(mode)
    if found is None:
        raise UsageError(f"unknown answer mode {mode!r} (modes: {', '.join(modes())})")
    return found


def modes_for(backend: Backend) -> tuple[AnswerMode, ...]:
    """The modes `backend` can answer in (those whose needs it has)."""
    return tuple(entry.mode for entry in STRATEGIES if entry.runs_on(backend))


def strategy_for(backend: Backend, mode: str) -> Strategy:
    """The strategy of `mode` when `backend` can run it. Raises `UsageError` for an
    unknown mode, `ModeUnavailableError` for one the backend lacks a capability for."""
    found = strategy(mode)
    if not found.runs_on(backend):
        raise ModeUnavailableError(mode)
    return found


def mode_help() -> str:
    """`ask --mode`'s help: each mode's name and summary."""
    return "; ".join(f"{entry.mode}: {entry.summary}" for entry in STRATEGIES) + "."


def _needs_text(entry: Strategy) -> str:
    return ", ".join(sorted(entry.needs)) or "nothing (runs without a model)"


def mode_table() -> str:
    """README's mode table (Markdown): mode, what it does, what it needs."""
    rows = ["| mode | what it does | needs |", "|---|---|---|"]
    rows += [f"| `{e.mode}` | {e.summary} | {_needs_text(e)} |" for e in STRATEGIES]
    return "\n".join(rows) + "\n"
