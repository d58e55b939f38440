"""Run the repository's benchmarks and print one table of figures.

    python benchmarks/run.py [--quick] [--only NAME]... [--output FILE]
                             [--sample N] [--data-dir DIR] [--eval-corpora DIR]
                             [--pubmedqa-sample N|all]

Each benchmark is a script of this folder, run in the repository with this
interpreter and `--json FILE`; the runner reads the figures the script wrote there
(format: figures.py), never its printed table. The combined table (table.py) goes to
stdout: each figure next to a reference measured in the same run (raw pypdfium2, raw
encode, bm25s, difflib, ...) and their ratio. Progress and the scripts' stderr go to
stderr. `--output` also writes every run as JSON (schema `quoteproof.bench/2`).

A benchmark fails when its script exits with a status other than 0 (a missed target
says so) or writes no readable figures; the others still run. Exit status 1 when one
failed, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from figures import Figure, Figures
from table import format_table

HERE = Path(__file__).resolve().parent
SCHEMA = "quoteproof.bench/2"


@dataclass(frozen=True)
class Benchmark:
    """A script of this folder, and its options under `--quick`."""

    name: str
    script: str
    quick: tuple[str, ...] = ()


BENCHMARKS = (
    Benchmark("ingest", "ingest.py", ("--rounds", "1")),
    Benchmark("retrieval", "retrieval.py", ("--queries", "30", "--postgres", "none")),
    Benchmark("quoting", "quoting_overhead.py", ("--scifact-queries", "30")),
    Benchmark("tokens", "tokens.py"),
    Benchmark("startup", "startup.py", ("--runs", "3")),
    Benchmark("serve", "serve.py", ("--seconds", "10")),
    Benchmark("recovery", "recovery.py", ("--sample", "200")),
    Benchmark("eval", "eval_sets.py", ("--quick",)),
    Benchmark("answers", "answers.py", ("--sets", "demo-answers,labels", "--no-embed")),
    Benchmark("realmodel", "real_model.py", ("--sample", "4")),
    Benchmark("embedding", "embedding.py", ("--docs", "300", "--queries", "30")),
    Benchmark("ingestspeed", "ingest_speed.py", ("--rounds", "1")),
    Benchmark("contextforms", "context_forms.py", ("--sample", "1", "--no-label")),
    Benchmark("pubmedqa", "pubmedqa.py", ("--sample", "1")),
    Benchmark("scale", "scale.py", ("--sizes", "10000", "--queries", "20")),
)
"""Every benchmark, in the order they run."""

ALIASES = {
    "quoting_overhead": "quoting",
    "quote": "quoting",
    "real_model": "realmodel",
    "ingest_speed": "ingestspeed",
    "context_forms": "contextforms",
}

Progress = Callable[[str], None]


@dataclass
class Run:
    """One script's run: its command, exit status, output and the figures it wrote."""

    name: str
    command: list[str]
    returncode: int = 0
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    figures: Figures | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        written = self.figures.to_dict() if self.figures else {}
        return {
            "name": self.name,
            "command": self.command,
            "returncode": self.returncode,
            "seconds": round(self.seconds, 3),
            "ok": self.ok,
            "error": self.error,
            "notes": written.get("notes", []),
            "targets": written.get("targets", {}),
            "figures": written.get("figures", []),
            "data": written.get("data"),
            "stdout": self.stdout,
            "stderr": self.stderr[-20000:],
        }


@dataclass
class BenchReport:
    """Every run of one `benchmarks/run.py`."""

    quick: bool
    started: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    runs: list[Run] = field(default_factory=list)

    @property
    def rows(self) -> list[tuple[str, Figure]]:
        """(benchmark name, figure) of every run, in run order."""
        return [(run.name, f) for run in self.runs if run.figures for f in run.figures.figures]

    @property
    def ok(self) -> bool:
        return all(run.ok for run in self.runs)

    def table(self) -> list[str]:
        """The combined table: every figure, then each run's notes, then the failures."""
        quick = ", --quick" if self.quick else ""
        title = (
            f"benchmarks/run.py ({self.started}{quick}): "
            "figure / reference measured in the same run"
        )
        notes = [f"{run.name}: {n}" for run in self.runs if run.figures for n in run.figures.notes]
        failures = [f"{run.name}: {run.error}" for run in self.runs if run.error]
        return format_table(title, self.rows, notes, failures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "started": self.started,
            "quick": self.quick,
            "python": sys.version.split()[0],
            "ok": self.ok,
            "rows": [{"benchmark": name, **f.to_dict()} for name, f in self.rows],
            "runs": [run.to_dict() for run in self.runs],
        }


def canonical_name(name: str) -> str:
    """A benchmark name as `--only` accepts it (aliases resolved); ValueError if unknown."""
    name = ALIASES.get(name, name)
    if name not in {b.name for b in BENCHMARKS}:
        known = ", ".join(b.name for b in BENCHMARKS)
        raise ValueError(f"unknown benchmark {name!r}: choose from {known}")
    return name


def _pump(stream: IO[str], sink: list[str], echo: IO[str] | None, prefix: str) -> None:
    for line in stream:
        sink.append(line)
        if echo is not None:
            echo.write(prefix + line)
            echo.flush()


def run_command(run: Run, cwd: Path, echo: IO[str] | None) -> None:
    """Run `run.command` in `cwd`, recording its stdout, stderr, exit status and time;
    stderr is also copied to `echo` line by line, prefixed with the run's name."""
    started = time.perf_counter()
    process = subprocess.Popen(
        run.command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stderr is not None
    errors: list[str] = []
    pump = threading.Thread(
        target=_pump, args=(process.stderr, errors, echo, f"  {run.name}| "), daemon=True
    )
    pump.start()
    run.stdout = process.stdout.read()
    run.returncode = process.wait()
    pump.join()
    run.seconds = time.perf_counter() - started
    run.stderr = "".join(errors)


def run_benchmark(
    benchmark: Benchmark, args: Sequence[str], folder: Path, echo: IO[str] | None
) -> Run:
    """Run `benchmark`'s script of `folder` with `args` and `--json FILE` (in
    `folder`'s parent, the repository) and read the figures it wrote."""
    with tempfile.TemporaryDirectory() as tmp:
        written = Path(tmp) / "figures.json"
        command = [sys.executable, str(folder / benchmark.script), *args, "--json", str(written)]
        run = Run(benchmark.name, command)
        run_command(run, folder.parent, echo)
        try:
            run.figures = Figures.read(written) if written.is_file() else None
        except ValueError as exc:
            run.error = f"could not read its figures: {exc}"
    if run.returncode != 0:
        missed = run.figures is not None and not all(run.figures.targets.values())
        last = run.stderr.strip().splitlines()[-1:] if run.stderr.strip() else []
        reason = "missed a target (see the notes)" if missed else ": ".join(last)
        run.error = f"exit status {run.returncode}" + (f": {reason}" if reason else "")
    elif run.error is None and run.figures is None:
        run.error = "it wrote no figures"
    elif run.figures is not None and not run.figures.figures:
        run.error = "no figures in what it wrote"
    return run


def run_bench(
    only: Sequence[str] = (),
    *,
    quick: bool = False,
    extra: dict[str, list[str]] | None = None,
    folder: Path = HERE,
    progress: Progress | None = None,
    echo: IO[str] | None = None,
) -> BenchReport:
    """Run the benchmarks named in `only` (default: all; aliases accepted), in
    BENCHMARKS order. `quick` passes each script's smaller settings; `extra` adds
    options per benchmark name, after them. `progress` gets one line per step; `echo`
    receives the scripts' own stderr. ValueError for an unknown name."""
    say = progress or (lambda _message: None)
    chosen = {canonical_name(name) for name in only} or {b.name for b in BENCHMARKS}
    selected = [b for b in BENCHMARKS if b.name in chosen]
    report = BenchReport(quick)
    for number, benchmark in enumerate(selected, 1):
        step = f"[{number}/{len(selected)}] {benchmark.name}"
        say(f"{step}: running")
        args = [*(benchmark.quick if quick else ()), *(extra or {}).get(benchmark.name, [])]
        run = run_benchmark(benchmark, args, folder, echo)
        state = "done" if run.ok else f"FAILED ({run.error})"
        say(f"{step}: {state} in {run.seconds:.1f} s")
        report.runs.append(run)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    names = ", ".join(b.name for b in BENCHMARKS)
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help=f"Run only this benchmark (repeat for several): {names}.")  # fmt: skip
    parser.add_argument(
        "--quick",
        action="store_true",
        help="Smaller runs: 1 ingest round, 30 SciFact queries, no PostgreSQL, 10 s of "
        "serving, 200 recovery cases, eval of 30 questions per set without vectors, 3 "
        "start-up runs per command, 1 PubMedQA question (no label) for the context forms "
        "and for the graded PubMedQA table.",
    )
    parser.add_argument("--output", "-o", type=Path, help="Also write every run as JSON here.")
    parser.add_argument("--sample", type=int, help="Recovery: a random sample of N cases.")
    parser.add_argument("--data-dir", help="Recovery: where the source PDFs lie (../shared/data).")
    parser.add_argument("--eval-corpora", help="Eval: corpora as evalsets/build.py --corpora DIR "
                        "writes them (default: written to a temporary folder).")  # fmt: skip
    parser.add_argument("--pubmedqa-sample", metavar="N|all",
                        help="Context forms and pubmedqa: N PubMedQA PQA-L test questions "
                        "at random, or all 500 (defaults 3 and 5; hours on 2 cores for all)."
                        )  # fmt: skip
    args = parser.parse_args(argv)
    extra: dict[str, list[str]] = {"recovery": [], "eval": [], "contextforms": [], "pubmedqa": []}
    if args.pubmedqa_sample is not None:
        extra["contextforms"] += ["--sample", args.pubmedqa_sample]
        extra["pubmedqa"] += ["--sample", args.pubmedqa_sample]
    if args.sample is not None:
        extra["recovery"] += ["--sample", str(args.sample)]
    if args.data_dir is not None:
        extra["recovery"] += ["--data-dir", str(Path(args.data_dir).resolve())]
    if args.eval_corpora is not None:
        extra["eval"] += ["--corpora", str(Path(args.eval_corpora).resolve())]

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    try:
        report = run_bench(args.only, quick=args.quick, extra=extra, progress=say, echo=sys.stderr)
    except ValueError as exc:
        parser.error(str(exc))
    print("\n".join(report.table()))
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
