"""`quoteproof bench`: run the repository's benchmarks and print one table of figures.

Each benchmark script of `benchmarks/` runs as a subprocess with this interpreter;
its printed tables are parsed into rows of (figure, reference figure measured in the
same run, ratio). The quote-recovery benchmark (`benchmarks/recovery.py`) runs in
this process through its `run_recovery`. `quoteproof eval` runs on the bundled
evaluation sets when that command exists.

Needs a checkout of the repository (the scripts are not installed with the package):
the current directory or one of its parents, else the checkout this package was
installed from in editable mode.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

__all__ = [
    "BENCHMARKS",
    "BenchReport",
    "Row",
    "Run",
    "find_repo",
    "format_table",
    "parse_output",
    "run_bench",
]

BENCHMARKS = (
    "ingest", "retrieval", "quoting", "tokens", "serve", "recovery", "eval", "realmodel",
)  # fmt: skip
"""Benchmark names, in the order they run."""

ALIASES = {"quoting_overhead": "quoting", "quote": "quoting", "real_model": "realmodel"}

SCRIPTS = {
    "ingest": "ingest.py",
    "retrieval": "retrieval.py",
    "quoting": "quoting_overhead.py",
    "tokens": "tokens.py",
    "serve": "serve.py",
    "recovery": "recovery.py",
    "realmodel": "real_model.py",
}

QUICK_ARGS: dict[str, list[str]] = {
    "ingest": ["--rounds", "1"],
    "retrieval": ["--queries", "30", "--postgres", "none"],
    "quoting": ["--scifact-queries", "30"],
    "tokens": [],
    "serve": ["--seconds", "10"],
    "realmodel": ["--sample", "4"],
}
"""Script options of `--quick`: fewer rounds, queries and seconds; no PostgreSQL."""

QUICK_RECOVERY_SAMPLE = 200
SCHEMA = "quoteproof.bench/1"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Row:
    """One figure next to its reference figure from the same run."""

    benchmark: str
    figure: str
    value: float | None
    reference_name: str = ""
    reference: float | None = None

    @property
    def ratio(self) -> float | None:
        """`value / reference`, or None when either is missing or the reference is 0."""
        if self.value is None or self.reference is None or self.reference == 0:
            return None
        return self.value / self.reference

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio}


@dataclass
class Run:
    """One benchmark's run: the command, its exit status, output and parsed rows."""

    name: str
    command: list[str]
    returncode: int = 0
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    data: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "command": self.command,
            "returncode": self.returncode,
            "seconds": round(self.seconds, 3),
            "ok": self.ok,
            "error": self.error,
            "notes": self.notes,
            "rows": [row.to_dict() for row in self.rows],
            "stdout": self.stdout,
            "stderr": self.stderr[-20000:],
            "data": self.data,
        }


@dataclass
class BenchReport:
    """Every run of one `quoteproof bench`."""

    runs: list[Run]
    quick: bool
    started: str

    @property
    def rows(self) -> list[Row]:
        return [row for run in self.runs for row in run.rows]

    @property
    def ok(self) -> bool:
        return all(run.ok for run in self.runs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "started": self.started,
            "quick": self.quick,
            "python": sys.version.split()[0],
            "ok": self.ok,
            "rows": [row.to_dict() for row in self.rows],
            "runs": [run.to_dict() for run in self.runs],
        }


# --- parsing the scripts' printed tables -------------------------------------------

_NUMBER = r"-?\d+(?:\.\d+)?"


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


_INGEST_ROW = re.compile(
    rf"^\s*(?P<name>\S.*?)\s+(?P<pages>\d+)\s+(?P<seconds>{_NUMBER})\s+(?P<rate>{_NUMBER})"
    r"\s+(?P<share>\d+)%$"
)
_RAW_INGEST = "raw pypdfium2 get_text_range"


def parse_ingest(stdout: str) -> list[Row]:
    """benchmarks/ingest.py: pages/s of each quoteproof side next to raw pypdfium2."""
    rates: dict[str, float] = {}
    for line in _lines(stdout):
        m = _INGEST_ROW.match(line)
        if m:
            rates[m["name"]] = float(m["rate"])
    raw = rates.pop(_RAW_INGEST, None)
    if raw is None:
        return []
    figures = {
        "quoteproof parse + chunk + index": "pages/s, parse + chunk + index (1 process)",
        "same, --jobs 2 (2 parse workers)": "pages/s, parse + chunk + index (--jobs 2)",
        "quoteproof parse": "pages/s, parse only",
    }
    order = [name for name in figures if name in rates] + [n for n in rates if n not in figures]
    return [
        Row("ingest", figures.get(name, f"pages/s, {name}"), rates[name], _RAW_INGEST, raw)
        for name in order
    ]


_EMBEDDINGS = re.compile(
    rf"embeddings/s: quoteproof ingest (?P<ours>{_NUMBER}) · raw encode (?P<raw>{_NUMBER})"
)
_RETRIEVAL_ROW = re.compile(
    r"^\s+(?P<name>\S.*?)\s+(?P<store>memory|sqlite|postgres)\s+"
    rf"(?P<ndcg>{_NUMBER})\s+(?P<recall>{_NUMBER})\s+(?P<p50>{_NUMBER})\s+(?P<p95>{_NUMBER})$"
)


def parse_retrieval(stdout: str) -> list[Row]:
    """benchmarks/retrieval.py: embeddings/s next to raw encode; per retriever and store,
    query p50/p95, nDCG@10 and recall@100 next to bm25s."""
    rows: list[Row] = []
    table: list[dict[str, str]] = []
    for line in _lines(stdout):
        m = _EMBEDDINGS.search(line)
        if m:
            rows.append(
                Row(
                    "retrieval",
                    "embeddings/s, quoteproof ingest",
                    float(m["ours"]),
                    "raw sentence-transformers encode",
                    float(m["raw"]),
                )
            )
        m = _RETRIEVAL_ROW.match(line)
        if m:
            table.append(m.groupdict())
    reference = next((r for r in table if r["store"] == "memory"), None)
    if reference is None:
        return rows
    ref_name = reference["name"].replace(" (reference)", "")
    for item in (r for r in table if r is not reference):
        who = f"{item['name'].removeprefix('quoteproof ')} ({item['store']})"
        for key, label in (("p50", "query p50 ms"), ("p95", "query p95 ms")):
            rows.append(
                Row(
                    "retrieval",
                    f"{label}, {who}",
                    float(item[key]),
                    f"{ref_name} {key}",
                    float(reference[key]),
                )
            )
        for key, label in (("ndcg", "nDCG@10"), ("recall", "recall@100")):
            rows.append(
                Row(
                    "retrieval",
                    f"{label}, {who}",
                    float(item[key]),
                    f"{ref_name} {label}",
                    float(reference[key]),
                )
            )
    return rows


_QUOTING_SECTION = re.compile(r"^(?P<label>\S.*?): \d+ questions, \d+ answered")
_QUOTING_ROW = re.compile(
    rf"^\s{{2}}(?P<name>\S.*?)\s+(?P<mean>{_NUMBER})\s+(?P<p50>{_NUMBER})\s+(?P<p95>{_NUMBER})$"
)


def parse_quoting(stdout: str) -> list[Row]:
    """benchmarks/quoting_overhead.py: mean ms per answer of the quoting layer (JSON and
    terminal output) next to retrieval alone, per corpus."""
    rows: list[Row] = []
    label = None
    means: dict[str, float] = {}

    def flush() -> None:
        retrieval = next((v for k, v in means.items() if k.startswith("retrieval alone")), None)
        if label is None or retrieval is None:
            return
        for key, figure in (
            ("quoting layer, JSON output", "JSON"),
            ("quoting layer, terminal output", "terminal"),
        ):
            if key in means:
                rows.append(
                    Row(
                        "quoting",
                        f"quoting layer ms/answer ({figure}), {label}",
                        means[key],
                        "retrieval alone (BM25 top 5)",
                        retrieval,
                    )
                )

    for line in _lines(stdout):
        section = _QUOTING_SECTION.match(line)
        if section:
            flush()
            label, means = section["label"], {}
            continue
        m = _QUOTING_ROW.match(line)
        if m and label is not None:
            means[m["name"]] = float(m["mean"])
    flush()
    return rows


_TOKENS_TOTAL = re.compile(
    r"^total \((?P<answers>\d+) answers\)\s+(?P<quotes>\d+)\s+(?P<chars>\d+)\s+"
    r"(?P<ours>\d+)\s+(?P<theirs>\d+)$"
)


def parse_tokens(stdout: str) -> list[Row]:
    """benchmarks/tokens.py: completion tokens per answer, `<quote ref/>` vs full text."""
    for line in _lines(stdout):
        m = _TOKENS_TOTAL.match(line)
        if m:
            answers = int(m["answers"])
            if not answers:
                return []
            return [
                Row(
                    "tokens",
                    'completion tokens/answer, <quote ref="…"/>',
                    int(m["ours"]) / answers,
                    "passages copied out in full",
                    int(m["theirs"]) / answers,
                )
            ]
    return []


_SERVE_ROW = re.compile(
    rf"^(?P<endpoint>\w+)\s+(?P<requests>\d+)\s+(?P<rps>{_NUMBER})\s+(?P<p50>{_NUMBER})"
    rf"\s+(?P<p95>{_NUMBER})$"
)
_SERVE_ERRORS = re.compile(r"^errors: \d+ ·")


def parse_serve(stdout: str) -> tuple[list[Row], list[str]]:
    """benchmarks/serve.py: req/s and p50/p95 ms per endpoint (no reference exists);
    the errors/lost/duplicated line as a note."""
    rows: list[Row] = []
    notes: list[str] = []
    for line in _lines(stdout):
        m = _SERVE_ROW.match(line)
        if m:
            endpoint = m["endpoint"]
            rows.append(Row("serve", f"req/s, {endpoint}", float(m["rps"])))
            rows.append(Row("serve", f"p50 ms, {endpoint}", float(m["p50"])))
            rows.append(Row("serve", f"p95 ms, {endpoint}", float(m["p95"])))
        elif _SERVE_ERRORS.match(line):
            notes.append(f"serve: {line}")
    return rows, notes


_REAL_MODEL_ROW = re.compile(
    rf"^(?P<name>\S.*?)\s+(?:(?P<valid>\d+)/(?P<total>\d+)\s+{_NUMBER}%|-)"
    rf"\s+\d+\s+\d+\s+(?P<not_verbatim>\d+)\s+\S+\s+\S+\s+\S+"
    rf"\s+(?P<seconds>{_NUMBER})\s+{_NUMBER}\s+{_NUMBER}\s+(?P<share>{_NUMBER})%\s+\S+$"
)


def parse_real_model(stdout: str) -> list[Row]:
    """benchmarks/real_model.py: protocol-valid replies with the grammar (reference:
    without), seconds per answer (reference: the extractive backend), quoteproof's
    share of the answer time, and quotes failing verify (must be 0)."""
    found = {m["name"]: m for m in map(_REAL_MODEL_ROW.match, _lines(stdout)) if m}

    def valid(name: str) -> float | None:
        m = found.get(name)
        return 100 * int(m["valid"]) / int(m["total"]) if m and m["total"] else None

    def seconds(name: str) -> float | None:
        m = found.get(name)
        return float(m["seconds"]) if m else None

    rows = []
    for mode in ("quote", "cite"):
        constrained = f"local {mode} +grammar"
        rows.append(
            Row("realmodel", f"protocol-valid replies %, {mode} +grammar",
                valid(constrained), "without grammar", valid(f"local {mode}"))
        )  # fmt: skip
        rows.append(
            Row("realmodel", f"s/answer, {mode} +grammar", seconds(constrained),
                "extractive backend", seconds("extractive (reference)"))
        )  # fmt: skip
    if "local quote +grammar" in found:
        share = float(found["local quote +grammar"]["share"])
        rows.append(Row("realmodel", "quoteproof's own time, % of answer (quote +grammar)", share))
    if found:
        failing = sum(int(m["not_verbatim"]) for m in found.values())
        rows.append(Row("realmodel", "shown quotes failing verify, every row", failing))
    return rows


def parse_output(name: str, stdout: str) -> tuple[list[Row], list[str]]:
    """The rows (and notes) of benchmark `name` from its printed output."""
    if name == "serve":
        return parse_serve(stdout)
    parsers: dict[str, Callable[[str], list[Row]]] = {
        "ingest": parse_ingest,
        "retrieval": parse_retrieval,
        "quoting": parse_quoting,
        "tokens": parse_tokens,
        "realmodel": parse_real_model,
    }
    rows = parsers[name](stdout)
    verdicts = {"retrieval": "hybrid nDCG@10", "quoting": "quoting layer adds at most"}
    marker = verdicts.get(name)
    notes = [f"{name}: {line.strip()}" for line in _lines(stdout) if marker and marker in line]
    return rows, notes


def recovery_rows(report: dict[str, Any]) -> tuple[list[Row], list[str]]:
    """Rows of the recovery report (`RecoveryReport.to_dict()`): quoteproof's time per
    quote, accuracy and false quotes next to each other matcher's."""
    matchers = {m["name"]: m for m in report["matchers"]}
    ours_name = next(name for name in matchers if name.startswith("quoteproof"))
    ours = matchers.pop(ours_name)
    rows: list[Row] = []
    for name, other in matchers.items():
        rows.append(
            Row(
                "recovery",
                "quote resolution mean ms/quote",
                ours["mean_ms"],
                name,
                other["mean_ms"],
            )
        )
        rows.append(
            Row("recovery", "quote resolution p95 ms/quote", ours["p95_ms"], name, other["p95_ms"])
        )
    for name, other in matchers.items():
        rows.append(
            Row(
                "recovery",
                f"quote recovery accuracy % (IoU >= 0.9, {ours['span_cases']} quotes)",
                100 * ours["accuracy"],
                name,
                100 * other["accuracy"],
            )
        )
    for name, other in matchers.items():
        rows.append(
            Row(
                "recovery",
                f"false quotes % ({ours['none_cases']} absent quotes)",
                100 * ours["false_quote_rate"],
                name,
                100 * other["false_quote_rate"],
            )
        )
    targets = report.get("targets", {})
    notes = [
        "recovery: quoteproof targets: "
        + "; ".join(f"{k}: {'PASS' if ok else 'FAIL'}" for k, ok in targets.items())
    ]
    return rows, notes


# --- running ---------------------------------------------------------------------------


def find_repo(start: Path | None = None) -> Path:
    """The repository checkout holding `benchmarks/`: `start` (default: the current
    directory) or a parent, else the checkout of an editable install of this package."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents, Path(__file__).resolve().parents[2]):
        if (folder / "benchmarks" / "recovery.py").is_file():
            return folder
    raise FileNotFoundError(
        "quoteproof bench runs from a checkout of the quoteproof repository "
        "(no benchmarks/ folder here or in a parent directory)"
    )


def _pump(stream: IO[str], sink: list[str], echo: IO[str] | None, prefix: str) -> None:
    for line in stream:
        sink.append(line)
        if echo is not None:
            echo.write(prefix + line)
            echo.flush()


def run_command(name: str, command: list[str], cwd: Path, echo: IO[str] | None = None) -> Run:
    """Run `command`, capturing stdout; stderr is captured and, with `echo`, also
    copied there line by line (the scripts' own progress)."""
    run = Run(name, command)
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stderr is not None
    errors: list[str] = []
    pump = threading.Thread(
        target=_pump, args=(process.stderr, errors, echo, f"  {name}| "), daemon=True
    )
    pump.start()
    run.stdout = process.stdout.read()
    run.returncode = process.wait()
    pump.join()
    run.seconds = time.perf_counter() - started
    run.stderr = "".join(errors)
    return run


def run_script(repo: Path, name: str, quick: bool, echo: IO[str] | None = None) -> Run:
    """Run one benchmark script and parse its table."""
    command = [sys.executable, str(repo / "benchmarks" / SCRIPTS[name])]
    if quick:
        command += QUICK_ARGS[name]
    run = run_command(name, command, repo, echo)
    try:
        run.rows, run.notes = parse_output(name, run.stdout)
    except (ValueError, KeyError) as exc:  # a malformed figure
        run.error = f"could not read its output: {exc}"
    if not run.rows and run.error is None:
        run.error = "no figures found in its output"
    if run.returncode != 0 and run.error is None:
        run.error = f"exit status {run.returncode}"
    return run


def load_recovery(repo: Path) -> Any:
    """Import benchmarks/recovery.py (not an installed module) by its path."""
    path = repo / "benchmarks" / "recovery.py"
    spec = importlib.util.spec_from_file_location("quoteproof_bench_recovery", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run_recovery_benchmark(
    repo: Path,
    *,
    sample: int | None,
    data_dir: Path | None,
    progress: Progress,
) -> Run:
    """The recovery benchmark in this process (`run_recovery` of benchmarks/recovery.py)."""
    cases_path = repo / "evalsets" / "recovery.jsonl"
    command = ["run_recovery", str(cases_path)] + ([f"--sample={sample}"] if sample else [])
    run = Run("recovery", command)
    if not cases_path.is_file():
        run.error = f"{cases_path} not found: build it with evalsets/build.py"
        return run
    started = time.perf_counter()
    try:
        module = load_recovery(repo)
        cases = module.load_cases(cases_path, sample)
        report = module.run_recovery(cases, data_dir or module.DATA, progress=progress)
    except Exception as exc:  # one failed benchmark must not lose the others' figures
        run.error = f"{type(exc).__name__}: {exc}"
        return run
    finally:
        run.seconds = time.perf_counter() - started
    data: dict[str, Any] = report.to_dict()
    run.data = data
    run.stdout = "\n".join(report.lines()) + "\n"
    run.rows, run.notes = recovery_rows(data)
    run.returncode = 0 if all(data["targets"].values()) else 1
    if run.returncode:
        run.error = "quoteproof missed a target (see the notes)"
    return run


def eval_help(repo: Path) -> str | None:
    """The help text of `quoteproof eval`, or None when the command does not exist."""
    result = subprocess.run(
        [sys.executable, "-m", "quoteproof", "eval", "--help"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    return result.stdout if result.returncode == 0 else None


def _numbers(prefix: str, value: Any) -> Iterable[tuple[str, float]]:
    """Flatten the numbers of a JSON value: `("a.b", 0.5)` for `{"a": {"b": 0.5}}`."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        if math.isfinite(value):
            yield prefix, float(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(f"{prefix}.{key}" if prefix else str(key), item)


EVAL_FIGURES = {
    "verbatim_rate": "verbatim rate %",
    "quote_precision": "quote precision %",
    "quote_recall": "quote recall %",
    "citation_accuracy": "citation accuracy %",
    "refusal_correct": "unanswerable refused %",
    "false_refusal_rate": "answerable refused %",
    "latency_ms.p50": "latency p50 ms",
    "latency_ms.p95": "latency p95 ms",
}
"""The `quoteproof eval` metrics shown in the table (rates as %), and every
`retrieval_recall.K` as "retrieval recall@K %"."""


def eval_rows(set_name: str, report_json: str) -> list[Row]:
    """Rows of one `quoteproof eval` run from its JSON report (`"metrics"`, as written
    by `--output`); none when the text is not such a report."""
    try:
        data = json.loads(report_json)
    except json.JSONDecodeError:
        return []
    metrics = data.get("metrics") if isinstance(data, dict) else None
    if not isinstance(metrics, dict):
        return []
    rows = []
    for key, value in _numbers("", metrics):
        if key.startswith("retrieval_recall."):
            k = key.removeprefix("retrieval_recall.")
            rows.append(Row("eval", f"{set_name}: retrieval recall@{k} %", 100 * value))
        elif key in EVAL_FIGURES:
            label = EVAL_FIGURES[key]
            shown = 100 * value if label.endswith("%") else value
            rows.append(Row("eval", f"{set_name}: {label}", shown))
    return rows


EVAL_SETS = ("demo", "labels", "scifact", "pubmedqa")
QUICK_EVAL_SAMPLE = 30


def _eval_corpora(repo: Path, folder: Path, progress: Progress) -> Path | None:
    """Write the SciFact, PubMedQA and labels corpora under `folder` with evalsets/build.py;
    None when that script is missing or fails."""
    build = repo / "evalsets" / "build.py"
    if not build.is_file():
        return None
    progress("eval: writing the SciFact, PubMedQA and labels corpora (evalsets/build.py --corpora)")
    result = run_command(
        "eval corpora", [sys.executable, str(build), "--corpora", str(folder)], repo
    )
    return folder if result.returncode == 0 else None


def run_eval(
    repo: Path,
    eval_corpora: Path | None,
    echo: IO[str] | None,
    progress: Progress,
    *,
    quick: bool = False,
) -> list[Run]:
    """`quoteproof eval` (extractive backend) on each bundled set: `demo.jsonl` over
    examples/corpus, `labels.jsonl`, `scifact.jsonl` and `pubmedqa.jsonl` over their corpora
    (`eval_corpora`, else written by `evalsets/build.py --corpora` to a temporary
    folder). Each corpus is ingested into a temporary index first; the demo index is
    calibrated on `examples/calibration.jsonl`, as `make demo` does, the others keep
    their automatic refusal threshold (as a user's index does). The JSON and HTML
    reports go to `artifacts/eval/`. `quick`: no vectors (BM25) and
    QUICK_EVAL_SAMPLE questions per set."""
    quoteproof = [sys.executable, "-m", "quoteproof"]
    if eval_help(repo) is None:
        run = Run("eval", [*quoteproof, "eval", "--help"])
        run.notes = ["eval: skipped: `quoteproof eval --help` failed (no eval command)"]
        return [run]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        others = eval_corpora or _eval_corpora(repo, root / "corpora", progress)
        for set_name in EVAL_SETS:
            questions = repo / "evalsets" / f"{set_name}.jsonl"
            corpus = repo / "examples" / "corpus" if set_name == "demo" else None
            if corpus is None and others is not None:
                corpus = others / set_name
            if not questions.is_file():
                continue
            if corpus is None or not corpus.is_dir():
                run = Run(f"eval {set_name}", [])
                run.notes = [f"eval {set_name}: skipped: no corpus folder for {questions.name}"]
                runs.append(run)
                continue
            runs.append(
                _eval_one(repo, set_name, questions, corpus, root, quick=quick, echo=echo,
                          progress=progress)
            )  # fmt: skip
    return runs


def _eval_one(
    repo: Path,
    set_name: str,
    questions: Path,
    corpus: Path,
    root: Path,
    *,
    quick: bool,
    echo: IO[str] | None,
    progress: Progress,
) -> Run:
    """Ingest `corpus` into a fresh index under `root`, then `quoteproof eval`."""
    quoteproof = [sys.executable, "-m", "quoteproof"]
    index = str(root / f"index-{set_name}")
    progress(f"eval: ingesting {corpus} for {questions.name}")
    ingest = [*quoteproof, "ingest", str(corpus), "--index", index]
    if quick:
        ingest.append("--no-embed")
    ingested = run_command(f"eval {set_name}", ingest, repo)
    if ingested.returncode != 0:
        ingested.error = f"ingest of {corpus} failed (exit status {ingested.returncode})"
        return ingested
    calibration = repo / "examples" / "calibration.jsonl"
    if set_name == "demo" and calibration.is_file():
        progress("eval: calibrating the demo index's refusal threshold")
        calibrated = run_command(
            f"eval {set_name}", [*quoteproof, "calibrate", str(calibration), "--index", index], repo
        )
        if calibrated.returncode != 0:
            calibrated.error = f"calibration failed (exit status {calibrated.returncode})"
            return calibrated
    progress(f"eval: quoteproof eval {questions.name}")
    reports = repo / "artifacts" / "eval"
    reports.mkdir(parents=True, exist_ok=True)
    report_path = reports / f"eval-{set_name}.json"
    command = [*quoteproof, "eval", str(questions), "--index", index, "--llm", "extractive"]
    command += ["--output", str(report_path), "--html", str(reports / f"eval-{set_name}.html")]
    if quick:
        command += ["--sample", str(QUICK_EVAL_SAMPLE), "--seed", "0"]
    run = run_command(f"eval {set_name}", command, repo, echo)
    run.seconds += ingested.seconds
    text = report_path.read_text(encoding="utf-8") if report_path.is_file() else ""
    run.rows = eval_rows(set_name, text)
    if text:
        report = json.loads(text)
        run.data = {"set": report.get("set"), "metrics": report.get("metrics")}
    if run.returncode != 0:
        run.error = f"exit status {run.returncode}"
    elif not run.rows:
        run.error = "no figures in its JSON report"
    return run


def canonical_name(name: str) -> str:
    """A benchmark name as `--only` accepts it (aliases resolved); ValueError if unknown."""
    name = ALIASES.get(name, name)
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}: choose from {', '.join(BENCHMARKS)}")
    return name


def run_bench(
    only: Sequence[str] = (),
    *,
    quick: bool = False,
    sample: int | None = None,
    data_dir: Path | None = None,
    eval_corpora: Path | None = None,
    repo: Path | None = None,
    progress: Progress | None = None,
    echo: IO[str] | None = None,
) -> BenchReport:
    """Run the benchmarks named in `only` (default: all), in `BENCHMARKS` order.

    `quick` passes each script's smaller settings (QUICK_ARGS) and samples
    QUICK_RECOVERY_SAMPLE recovery cases unless `sample` is given. `progress` gets
    one line per step; `echo` receives the scripts' own stderr.
    """
    say = progress or (lambda _message: None)
    chosen = {canonical_name(name) for name in only} or set(BENCHMARKS)
    names = [name for name in BENCHMARKS if name in chosen]
    root = repo or find_repo()
    report = BenchReport([], quick, datetime.now(UTC).isoformat(timespec="seconds"))
    for number, name in enumerate(names, 1):
        say(f"[{number}/{len(names)}] {name}: running")
        if name == "recovery":
            if quick and sample is None:
                sample = QUICK_RECOVERY_SAMPLE
            runs = [run_recovery_benchmark(root, sample=sample, data_dir=data_dir, progress=say)]
        elif name == "eval":
            runs = run_eval(root, eval_corpora, echo, say, quick=quick)
        else:
            runs = [run_script(root, name, quick, echo)]
        for run in runs:
            state = "done" if run.ok else f"FAILED ({run.error})"
            say(f"[{number}/{len(names)}] {run.name}: {state} in {run.seconds:.1f} s")
        report.runs.extend(runs)
    return report


# --- the table -------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    size = abs(value)
    if size >= 1000:
        return f"{value:,.0f}"
    if size >= 100:
        return f"{value:.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1 or value == 0:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _fmt_ratio(ratio: float | None) -> str:
    if ratio is None:
        return "-"
    if ratio >= 100:
        return f"{ratio:.0f}x"
    if ratio >= 10:
        return f"{ratio:.1f}x"
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x"


def format_table(report: BenchReport) -> list[str]:
    """The one table: each figure, its reference from the same run, and the ratio
    figure / reference; then notes and failed benchmarks."""
    rows = report.rows
    figure_width = max([len(r.figure) for r in rows] + [6])
    ref_width = max([len(r.reference_name) for r in rows] + [9])
    quick = ", --quick" if report.quick else ""
    lines = [
        f"quoteproof bench ({report.started}{quick}): figure / reference measured in the same run",
        f"{'benchmark':10} {'figure':{figure_width}} {'value':>9}  "
        f"{'reference':{ref_width}} {'ref value':>9} {'ratio':>8}",
    ]
    for row in rows:
        lines.append(
            f"{row.benchmark:10} {row.figure:{figure_width}} {_fmt(row.value):>9}  "
            f"{row.reference_name:{ref_width}} {_fmt(row.reference):>9} "
            f"{_fmt_ratio(row.ratio):>8}"
        )
    notes = [note for run in report.runs for note in run.notes]
    failed = [f"{run.name}: {run.error}" for run in report.runs if not run.ok]
    if notes:
        lines.append("")
        lines.extend(notes)
    if failed:
        lines.append("")
        lines.extend(f"failed: {line}" for line in failed)
    return lines
