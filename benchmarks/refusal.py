"""Refusal and extractive-quote figures, side by side: an index as ingested (automatic
refusal threshold and key-term check) against the same index calibrated with a
labelled file (`quoteproof calibrate`), on one question set.

    python benchmarks/refusal.py INDEX SET.jsonl [--calibration FILE.jsonl] [--json FILE]

INDEX is copied first (the copy is calibrated, the original is left alone). Prints
quote precision and recall, citation accuracy, refused unanswerable and refused
answerable questions (extractive backend, no model) for both; `--json` has each
figure as ingested next to its calibrated value as the reference.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import warnings
from pathlib import Path

from figures import Figures, add_json_option
from quoteproof import Index
from quoteproof.evaluation.evalset import read_evalset
from quoteproof.evaluation.metrics import RunMetrics
from quoteproof.evaluation.runner import run_eval

REPO = Path(__file__).resolve().parent.parent
FIGURES = {
    "quote_precision": "quote precision %",
    "quote_recall": "quote recall %",
    "citation_accuracy": "citation accuracy %",
    "refusal_correct": "unanswerable refused %",
    "false_refusal_rate": "answerable refused %",
}
"""The metrics compared, by their `RunMetrics` attribute, as figure names."""


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:5.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index")
    parser.add_argument("evalset")
    parser.add_argument(
        "--calibration", default=str(REPO / "examples" / "calibration.jsonl"),
        help="labelled questions for the calibrated run (default: examples/calibration.jsonl)",
    )  # fmt: skip
    add_json_option(parser)
    args = parser.parse_args()
    items = read_evalset(args.evalset)
    labelled = [json.loads(line) for line in Path(args.calibration).read_text().splitlines()]
    print(f"{'run':<14} {'quote prec':>10} {'quote rec':>10} {'citation':>9} "
          f"{'refused U':>10} {'refused A':>10} {'threshold':>10}")  # fmt: skip
    runs: dict[str, RunMetrics] = {}
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copy = shutil.copytree(args.index, Path(tmp) / "index")
        with Index.open(copy) as index:
            for name in ("as ingested", "calibrated"):
                if name == "calibrated":
                    index.calibrate([(q["question"], q["answerable"]) for q in labelled])
                chosen = index.calibration() or index.automatic_threshold()
                m = runs[name] = run_eval(index, items).metrics
                threshold = f"{chosen.threshold:.3f}" if chosen else "none"
                print(f"{name:<14} {_percent(m.quote_precision):>10} "
                      f"{_percent(m.quote_recall):>10} {_percent(m.citation_accuracy):>9} "
                      f"{_percent(m.refusal_correct):>10} {_percent(m.false_refusal_rate):>10} "
                      f"{threshold:>10}")  # fmt: skip
    figures(runs["as ingested"], runs["calibrated"]).write(args.json)


def figures(ingested: RunMetrics, calibrated: RunMetrics) -> Figures:
    """Each metric of FIGURES as ingested (%), next to its calibrated value."""
    out = Figures("refusal")
    for attribute, name in FIGURES.items():
        ours, theirs = getattr(ingested, attribute), getattr(calibrated, attribute)
        out.add(name, _scaled(ours), "%", "calibrated", _scaled(theirs))
    return out


def _scaled(value: float | None) -> float | None:
    return None if value is None else 100 * value


if __name__ == "__main__":
    main()
