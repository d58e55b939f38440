"""`quoteproof eval` (extractive backend, no model) on each bundled question set.

`evalsets/demo.jsonl` over examples/corpus, and `labels.jsonl`, `scifact.jsonl` and
`pubmedqa.jsonl` over their corpora (`--corpora DIR`, else written by
`evalsets/build.py --corpora` to a temporary folder). Each corpus is ingested into a
temporary index first with `quoteproof ingest`; the demo index is calibrated on
`examples/calibration.jsonl`, as `make demo` does, the others keep their automatic
refusal threshold (as a user's index does). `quoteproof eval` prints each set's
summary; its JSON and HTML reports go to `artifacts/eval/`.

    python benchmarks/eval_sets.py [--quick] [--corpora DIR] [--json FILE]

`--quick`: no vectors (BM25) and QUICK_SAMPLE questions per set. Exit status 1 when a
set could not be ingested or its eval failed (a quote not verbatim, a question failed).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from figures import Figures, add_json_option

REPO = Path(__file__).resolve().parent.parent
SETS = ("demo", "labels", "scifact", "pubmedqa")
QUICK_SAMPLE = 30
QUOTEPROOF = [sys.executable, "-m", "quoteproof"]

FIGURES = {
    "verbatim_rate": "verbatim rate %",
    "quote_precision": "quote precision %",
    "quote_recall": "quote recall %",
    "citation_accuracy": "citation accuracy %",
    "refusal_correct": "unanswerable refused %",
    "false_refusal_rate": "answerable refused %",
    "latency_ms.p50": "latency p50 ms",
    "latency_ms.p95": "latency p95 ms",
}
"""The report's metrics kept as figures (rates as %), and every `retrieval_recall.K`
as "retrieval recall@K %"."""


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


def add_report(out: Figures, set_name: str, report: Any) -> int:
    """Add the figures of one `quoteproof eval` JSON report (its `"metrics"`) to `out`,
    named `SET: figure`; return how many (0 when `report` is not such a report)."""
    metrics = report.get("metrics") if isinstance(report, dict) else None
    if not isinstance(metrics, dict):
        return 0
    added = 0
    for key, value in _numbers("", metrics):
        if key.startswith("retrieval_recall."):
            k = key.removeprefix("retrieval_recall.")
            out.add(f"{set_name}: retrieval recall@{k} %", 100 * value, "%")
        elif key in FIGURES:
            label = FIGURES[key]
            percent = label.endswith("%")
            out.add(f"{set_name}: {label}", 100 * value if percent else value,
                    "%" if percent else "ms")  # fmt: skip
        else:
            continue
        added += 1
    return added


def run(command: list[str]) -> int:
    """Run `command` in the repository, its output passed through; its exit status."""
    return subprocess.run(command, cwd=REPO, check=False).returncode


def write_corpora(folder: Path) -> Path | None:
    """The SciFact, PubMedQA and labels corpora under `folder`, written by
    evalsets/build.py --corpora; None when that fails."""
    print("eval: writing the corpora (evalsets/build.py --corpora)", file=sys.stderr)
    build = [sys.executable, str(REPO / "evalsets" / "build.py"), "--corpora", str(folder)]
    return folder if run(build) == 0 else None


def eval_set(set_name: str, corpus: Path, root: Path, quick: bool, out: Figures) -> bool:
    """Ingest `corpus` into a fresh index under `root`, calibrate it (demo only), run
    `quoteproof eval` on evalsets/SET.jsonl and add its figures to `out`. False, with a
    note, when a step failed."""
    index = str(root / f"index-{set_name}")
    ingest = [*QUOTEPROOF, "ingest", str(corpus), "--index", index]
    if quick:
        ingest.append("--no-embed")
    if (status := run(ingest)) != 0:
        out.note(f"{set_name}: ingest of {corpus} failed (exit status {status})")
        return False
    if set_name == "demo":
        calibration = REPO / "examples" / "calibration.jsonl"
        calibrate = [*QUOTEPROOF, "calibrate", str(calibration), "--index", index]
        if (status := run(calibrate)) != 0:
            out.note(f"{set_name}: calibration failed (exit status {status})")
            return False
    reports = REPO / "artifacts" / "eval"
    reports.mkdir(parents=True, exist_ok=True)
    report_path = reports / f"eval-{set_name}.json"
    report_path.unlink(missing_ok=True)
    command = [*QUOTEPROOF, "eval", str(REPO / "evalsets" / f"{set_name}.jsonl"),
               "--index", index, "--llm", "extractive", "--output", str(report_path),
               "--html", str(reports / f"eval-{set_name}.html")]  # fmt: skip
    if quick:
        command += ["--sample", str(QUICK_SAMPLE), "--seed", "0"]
    status = run(command)
    report = json.loads(report_path.read_text(encoding="utf-8")) if report_path.is_file() else {}
    if not add_report(out, set_name, report):
        out.note(f"{set_name}: no figures in its JSON report (exit status {status})")
        return False
    out.data[set_name] = {"set": report.get("set"), "metrics": report.get("metrics")}
    ok = status == 0
    out.target(f"{set_name}: every shown quote verbatim, no question failed", ok)
    if not ok:
        out.note(f"{set_name}: quoteproof eval exit status {status}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="BM25 only, 30 questions per set.")
    parser.add_argument("--corpora", type=Path, help="Corpora as build.py --corpora writes them.")
    add_json_option(parser)
    args = parser.parse_args()
    out = Figures("eval", data={})
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        others = args.corpora or write_corpora(root / "corpora")
        for set_name in SETS:
            if not (REPO / "evalsets" / f"{set_name}.jsonl").is_file():
                continue
            corpus = REPO / "examples" / "corpus" if set_name == "demo" else None
            if corpus is None and others is not None:
                corpus = others / set_name
            if corpus is None or not corpus.is_dir():
                out.note(f"{set_name}: skipped: no corpus folder for {set_name}.jsonl")
                continue
            print(f"eval: {set_name}.jsonl over {corpus}", file=sys.stderr, flush=True)
            ok = eval_set(set_name, corpus, root, args.quick, out) and ok
    out.write(args.json)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
