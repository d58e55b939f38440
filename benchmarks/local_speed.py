"""The local model's speed on the demo questions (`examples/questions.txt`), for
`real_model.py`: seconds per answer on the machine as it is ("quiet") and beside one
CPU-bound process that this module starts and stops itself ("loaded"), tokens, tokens
per second and the grammar's size, per answer mode, with the extractive backend (no
model) answering the same questions as the reference.

Targets: every local answer under `QUIET_TARGET_S` quiet and under
`LOADED_FACTOR` times that loaded. The load average is printed beside each pass: a
"quiet" pass on a machine that others load is not a quiet figure.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from figures import Figures
from quoteproof import Index
from quoteproof.llm.base import Backend, Capability, Completion, CompletionRequest, TextSink
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.llm.local import LocalBackend
from quoteproof.model import AnswerMode

QUIET_TARGET_S = 10.0
LOADED_FACTOR = 3.0
SPEED_MODES: tuple[AnswerMode, ...] = ("quote", "cite")
SPINNER = "while True: pass"
SPINNER_START_S = 1.0
"""Time the CPU-bound process runs before the loaded pass starts (so it is seen)."""
WARM_UP = "What do these documents say about vaccines?"
"""Asked once before the timed answers, so the first is not charged for loading; not
a demo question, so no timed prompt finds its words already in the model's cache."""


@dataclass
class TimedBackend:
    """Wraps a backend: adds up the seconds spent inside it and keeps the grammar of
    each request (None where it had none)."""

    inner: Backend
    seconds: float = 0.0
    grammars: list[str | None] = field(default_factory=list)
    name: str = field(init=False)
    model: str | None = field(init=False)
    server: str | None = field(init=False)
    capabilities: frozenset[Capability] = field(init=False)

    def __post_init__(self) -> None:
        self.name, self.model, self.server = self.inner.name, self.inner.model, self.inner.server
        self.capabilities = self.inner.capabilities

    def excess_tokens(self, request: CompletionRequest) -> int:
        return self.inner.excess_tokens(request)

    def complete(self, request: CompletionRequest) -> Completion:
        self.grammars.append(request.grammar)
        started = time.perf_counter()
        try:
            return self.inner.complete(request)
        finally:
            self.seconds += time.perf_counter() - started

    def stream(self, request: CompletionRequest, on_text: TextSink) -> Completion:
        self.grammars.append(request.grammar)
        started = time.perf_counter()
        try:
            return self.inner.stream(request, on_text)
        finally:
            self.seconds += time.perf_counter() - started


def grammar_size(grammar: str) -> tuple[int, int]:
    """(UTF-8 bytes, rules) of a GBNF grammar: its rules are its `name ::=` lines."""
    return len(grammar.encode()), sum("::=" in line for line in grammar.splitlines())


@dataclass(frozen=True)
class Timing:
    """One answer: seconds in all, CPU seconds of this process and seconds inside the
    model, tokens, the threads of its last model call, its first grammar, and what
    it came to."""

    seconds: float
    cpu_s: float
    model_s: float
    prompt_tokens: int
    completion_tokens: int
    threads: int | None
    grammar: tuple[int, int] | None
    load: float
    outcome: str

    def rate(self) -> float | None:
        """Completion tokens per model second."""
        return self.completion_tokens / self.model_s if self.model_s > 0 else None


def time_answer(
    index: Index, backend: Backend, question: str, mode: AnswerMode, top_k: int
) -> Timing:
    """Ask `question` once and time it (the load average read just before). The
    extractive backend is not wrapped: `Index.ask` gives it the index's embedding
    model and table rows only when it sees it."""
    timed = None if isinstance(backend, ExtractiveBackend) else TimedBackend(backend)
    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), time.process_time()
    answer = index.ask(
        question,
        backend=timed or backend,
        mode=mode,
        top_k=top_k,
        faithfulness="deterministic",  # the mode's own speed, as measured before
    )
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    usage = answer.usage
    grammar = next((g for g in timed.grammars if g is not None), None) if timed else None
    outcome = f"{len(answer.quotes)} quotes" if answer.status == "answered" else "refused"
    return Timing(
        seconds,
        cpu,
        timed.seconds if timed else 0.0,
        usage.prompt_tokens if usage else 0,
        usage.completion_tokens if usage else 0,
        backend.threads if isinstance(backend, LocalBackend) else None,
        grammar_size(grammar) if grammar else None,
        load,
        outcome,
    )


@contextmanager
def cpu_bound_process() -> Iterator[None]:
    """One CPU-bound process (`python -c "while True: pass"`) running for the block."""
    process = subprocess.Popen([sys.executable, "-c", SPINNER])
    try:
        time.sleep(SPINNER_START_S)
        yield
    finally:
        process.kill()
        process.wait()


@dataclass(frozen=True)
class QuestionSpeed:
    """One question's timings: the extractive reference, and per mode quiet and loaded."""

    question: str
    extractive: Timing
    quiet: dict[AnswerMode, Timing]
    loaded: dict[AnswerMode, Timing]


def measure(
    index: Index, local: LocalBackend, questions: Sequence[str], top_k: int
) -> list[QuestionSpeed]:
    """Time every question: a warm-up answer first (`WARM_UP`, not kept), then the
    quiet pass (extractive and each mode), then the loaded pass (each mode) beside
    `cpu_bound_process`."""
    time_answer(index, local, WARM_UP, "quote", top_k)
    extractive = ExtractiveBackend()
    quiet = {
        q: (
            time_answer(index, extractive, q, "quote", top_k),
            {mode: time_answer(index, local, q, mode, top_k) for mode in SPEED_MODES},
        )
        for q in questions
    }
    with cpu_bound_process():
        loaded = {
            q: {m: time_answer(index, local, q, m, top_k) for m in SPEED_MODES} for q in questions
        }
    return [QuestionSpeed(q, quiet[q][0], quiet[q][1], loaded[q]) for q in questions]


SPEED_HEADER = (
    f"{'question':<44} {'mode':<6} {'quiet s':>7} {'cpu s':>6} {'thr':>3} {'loaded s':>8} "
    f"{'cpu s':>6} {'thr':>3} {'x':>5} {'prompt':>6} {'gen':>5} {'tok/s':>6} "
    f"{'grammar B/rules':>15}  outcome"
)
SPEED_LEGEND = """\
quiet s / loaded s: seconds per answer without / beside one CPU-bound process, with
the CPU seconds this process used (cpu s) and the model's threads (thr); x: loaded /
quiet; prompt, gen: tokens of the quiet answer's model calls; tok/s: its generated
tokens per model second; grammar: the answer call's grammar (bytes, rules); outcome:
of the quiet answer."""


def speed_lines(rows: Sequence[QuestionSpeed]) -> list[str]:
    """The table of `rows`: per question, the extractive row then one per mode."""
    lines = [SPEED_HEADER]
    for row in rows:
        question = row.question if len(row.question) <= 44 else row.question[:43] + "…"
        extractive = row.extractive
        lines.append(
            f"{question:<44} {'extr':<6} {extractive.seconds:7.2f} {extractive.cpu_s:6.2f}"
        )
        for mode in SPEED_MODES:
            quiet, loaded = row.quiet[mode], row.loaded[mode]
            rate = quiet.rate()
            grammar = f"{quiet.grammar[0]:,} / {quiet.grammar[1]}" if quiet.grammar else "-"
            lines.append(
                f"{'':<44} {mode:<6} {quiet.seconds:7.2f} {quiet.cpu_s:6.2f} "
                f"{quiet.threads or '-':>3} {loaded.seconds:8.2f} {loaded.cpu_s:6.2f} "
                f"{loaded.threads or '-':>3} "
                f"{loaded.seconds / quiet.seconds:5.1f} {quiet.prompt_tokens:6d} "
                f"{quiet.completion_tokens:5d} {f'{rate:6.1f}' if rate else '     -'} "
                f"{grammar:>15}  {quiet.outcome}"
            )
    return lines


def _loads(timings: Sequence[Timing]) -> str:
    loads = [t.load for t in timings]
    return f"{min(loads):.2f}-{max(loads):.2f}"


def verdicts(rows: Sequence[QuestionSpeed]) -> dict[str, bool]:
    """The targets, each met or not: per mode, every answer under the quiet target
    quiet and under `LOADED_FACTOR` times it loaded."""
    loaded_target = LOADED_FACTOR * QUIET_TARGET_S
    met = {}
    for mode in SPEED_MODES:
        met[f"every local {mode} answer < {QUIET_TARGET_S:g} s quiet"] = all(
            row.quiet[mode].seconds < QUIET_TARGET_S for row in rows
        )
        met[f"every local {mode} answer < {loaded_target:g} s loaded"] = all(
            row.loaded[mode].seconds < loaded_target for row in rows
        )
    return met


def report(rows: Sequence[QuestionSpeed], out: Figures) -> list[str]:
    """The printed section (table, load averages, PASS/miss lines); adds the figures
    (slowest answer per mode and pass, next to the slowest extractive answer) and
    the targets to `out`."""
    quiet = [t for row in rows for t in row.quiet.values()]
    loaded = [t for row in rows for t in row.loaded.values()]
    slowest_extractive = max(row.extractive.seconds for row in rows)
    lines = speed_lines(rows)
    lines.append(SPEED_LEGEND)
    lines.append(
        f"load average (1 min) at each answer's start: quiet pass {_loads(quiet)}, "
        f"loaded pass {_loads(loaded)} (with our CPU-bound process) on {os.cpu_count()} CPUs"
    )
    for mode in SPEED_MODES:
        for name, timings in (
            ("quiet", [r.quiet[mode] for r in rows]),
            ("loaded", [r.loaded[mode] for r in rows]),
        ):
            slowest = max(t.seconds for t in timings)
            out.add(f"s/answer, slowest, local {mode}, {name}", slowest, "s",
                    "slowest extractive answer", slowest_extractive)  # fmt: skip
    for target, met in verdicts(rows).items():
        out.target(target, met)
        line = f"{'PASS' if met else 'miss'}: {target}"
        lines.append(line)
        out.note(line)
    return lines
