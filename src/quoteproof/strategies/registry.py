"""The answer modes: for each, its strategy, what it needs of a backend and its help.

`STRATEGIES` is the one list of modes. `ask --mode` (its choices and help), the
HTTP API's schema, the web page's mode options and README's mode table are derived
from it; `model.AnswerMode` is the static type of its names (a test keeps the two
equal). A mode runs on a backend that has every `Capability` it `needs`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from quoteproof.errors import ModeUnavailableError, UsageError
from quoteproof.llm.base import Backend, Capability
from quoteproof.model import Answer, AnswerMode, Hit
from quoteproof.quoting.citations import Strictness
from quoteproof.strategies.agent import answer_agent
from quoteproof.strategies.cite import answer_cite
from quoteproof.strategies.quote import answer_quote
from quoteproof.strategies.rationale import answer_rationale
from quoteproof.strategies.session import AnswerSession
from quoteproof.tables import TableSession

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
    """What a strategy may use besides the session: cite's `strictness`, the agent's
    `max_steps`, `search` (its search tool) and `tables` (makes its table session)."""

    strictness: Strictness
    max_steps: int
    search: Callable[[str], Sequence[Hit]]
    tables: Callable[[], TableSession]


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

STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        "quote",
        "Quote",
        "passages from the sources, with short cited sentences (without a model: "
        "the best sentences, chosen by retrieval)",
        frozenset(),
        lambda session, _: answer_quote(session),
    ),
    Strategy(
        "cite",
        "Cite",
        "prose in which every sentence cites its sources (checked, retried once)",
        _MODEL,
        lambda session, inputs: answer_cite(session, inputs.strictness),
    ),
    Strategy(
        "rationale",
        "Rationale",
        "statements generated, checked by the model, refined, then answered",
        _MODEL,
        lambda session, _: answer_rationale(session),
    ),
    Strategy(
        "agent",
        "Agent",
        "the model calls tools that compose the answer (search, quote, table queries)",
        _MODEL | {Capability.TOOLS},
        lambda session, inputs: answer_agent(
            session, inputs.search, inputs.tables(), inputs.max_steps
        ),
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
