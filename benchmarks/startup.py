"""CLI start-up: the whole-process time of `quoteproof --help` and of one question,
next to a bare `python -c pass`, to issue 17's figures before the work and its targets.

    python benchmarks/startup.py [--runs 5] [--index DIR] [--json FILE]

Each command runs as its own process (`python -m quoteproof ...`, output discarded):
one warm-up run, discarded (it also writes the bytecode cache, as any installed copy
has it), then `--runs` timed runs; the median is reported. The questions use no model
(the extractive backend). Without `--index`, the demo corpus (examples/corpus) is
ingested into a temporary index first, with vectors when the dense extra is installed.
Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from figures import Figures, add_json_option

REPO = Path(__file__).resolve().parent.parent
QUESTION = "What causes obstructive sleep apnea?"
BASELINE = "python -c pass"


@dataclass(frozen=True)
class Case:
    """One command timed: its label, its arguments to `quoteproof` (None: the bare
    interpreter), issue 17's figure before the work, and its target (seconds)."""

    label: str
    args: tuple[str, ...] | None
    before_s: float | None = None
    target_s: float | None = None


def cases(index: Path) -> list[Case]:
    """The commands timed, the baseline first."""
    question = ("ask", QUESTION, "--index", str(index))
    return [
        Case(BASELINE, None),
        Case("quoteproof --help", ("--help",), 2.7, 0.3),
        Case("ask, --retriever bm25", (*question, "--retriever", "bm25"), 2.8, 0.6),
        Case("ask, hybrid (default)", question, 10.0, 1.5),
    ]


def child_environment() -> dict[str, str]:
    """This environment, offline, with bytecode caching on (as users run it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def time_command(command: Sequence[str], runs: int, env: dict[str, str]) -> list[float]:
    """Seconds of each of `runs` runs of `command` after one discarded warm-up run.
    RuntimeError when a run exits with a status other than 0."""
    seconds = []
    for number in range(runs + 1):
        started = time.perf_counter()
        done = subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            last = done.stderr.strip().splitlines()[-1:] or ["no message"]
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {last[0]}")
        if number:
            seconds.append(elapsed)
    return seconds


def figures(medians: dict[str, float]) -> Figures:
    """Per command (by label, `medians` in seconds, BASELINE among them): its median
    next to the bare interpreter's (measured in this run) and a target per command
    that has one. Issue 17's figures before the work were measured in another run,
    so they are a note, not a reference."""
    out = Figures("startup")
    base = medians[BASELINE]
    out.add(BASELINE, base, "s")
    before = []
    for case in cases(Path("I"))[1:]:
        if case.label not in medians:
            continue
        median = medians[case.label]
        out.add(f"{case.label}, s", median, "s", BASELINE, base)
        if case.before_s is not None:
            before.append(f"{case.label} {case.before_s:g} s")
        if case.target_s is not None:
            out.target(f"{case.label} <= {case.target_s:g} s", median <= case.target_s)
    if before:
        out.note(f"issue 17, before the work (another run): {'; '.join(before)}")
    return out


def table(medians: dict[str, float], vectors: bool) -> list[str]:
    """The printed table: per command, median, ratio to the bare interpreter, issue
    17's figure before and the ratio to it, the target and PASS/FAIL."""
    base = medians[BASELINE]
    lines = [
        f"{'command':24} {'median s':>9} {'x python':>9} {'before s':>9} {'x before':>9} "
        f"{'target s':>9}  verdict"
    ]
    for case in cases(Path("I")):
        if case.label not in medians:
            continue
        median = medians[case.label]
        before = f"{'-':>9} {'-':>9}"
        if case.before_s is not None:
            before = f"{case.before_s:9.1f} {median / case.before_s:9.2f}"
        target, verdict = f"{'-':>9}", ""
        if case.target_s is not None:
            target = f"{case.target_s:9.1f}"
            verdict = "PASS" if median <= case.target_s else "FAIL"
        lines.append(
            f"{case.label:24} {median:9.3f} {median / base:9.1f} {before} {target}  {verdict}"
        )
    if not vectors:
        lines.append("(the index has no vectors: the hybrid question ran on BM25 alone)")
    return lines


def has_vectors(index: Path) -> bool:
    """Whether the index at `index` holds any vector."""
    from quoteproof import Index

    with Index.open(index) as opened:
        return opened.store.stats().embedded > 0


def build_index(folder: Path) -> Path:
    """Ingest the demo corpus into a new index under `folder` (vectors when the dense
    extra is installed) and return its location."""
    from quoteproof import Index

    location = folder / "index"
    with Index.open(location, create=True) as index:
        index.ingest([REPO / "examples" / "corpus"])
    return location


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="Timed runs per command.")
    parser.add_argument("--index", type=Path, help="Ask this index (default: a demo index).")
    add_json_option(parser)
    args = parser.parse_args(argv)
    env = child_environment()
    with tempfile.TemporaryDirectory() as tmp:
        index = args.index or build_index(Path(tmp))
        vectors = has_vectors(index)
        medians = {}
        for case in cases(index):
            command = [sys.executable, "-c", "pass"]
            if case.args is not None:
                command = [sys.executable, "-m", "quoteproof", *case.args]
            print(f"timing {case.label} ...", file=sys.stderr, flush=True)
            medians[case.label] = statistics.median(time_command(command, args.runs, env))
    print(f"Whole-process start-up, median of {args.runs} runs after a warm-up run")
    for line in table(medians, vectors):
        print(line)
    out = figures(medians)
    out.note(f"median of {args.runs} runs; index {'with' if vectors else 'without'} vectors")
    out.data = {"medians_s": medians, "vectors": vectors}
    out.write(args.json)
    return 0 if all(out.targets.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
