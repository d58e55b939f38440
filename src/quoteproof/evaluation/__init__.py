"""Evaluating answers against question sets (`quoteproof eval`).

- `evalset`: reading and validating question sets (JSON Lines, `evalsets/README.md`);
- `metrics`: the scores, as pure functions (verbatim rate, quote precision and
  recall by character overlap, citation accuracy, refusal rates, retrieval
  recall@k, latency percentiles);
- `runner`: `run_eval` asks every question through `Index.ask` and scores it;
- `report`: the run as JSON (`"schema": "quoteproof.eval/1"`) and as one
  self-contained HTML page (`plots` draws its images with matplotlib, optional);
- `compare`: drift between two saved runs;
- `terminal`: the progress bar and summary table of the command.
"""

from __future__ import annotations

from quoteproof.evaluation.evalset import EvalItem, EvalSetError, read_evalset, sample
from quoteproof.evaluation.runner import AskOptions, EvalRun, ItemResult, run_eval

__all__ = [
    "AskOptions",
    "EvalItem",
    "EvalRun",
    "EvalSetError",
    "ItemResult",
    "read_evalset",
    "run_eval",
    "sample",
]
