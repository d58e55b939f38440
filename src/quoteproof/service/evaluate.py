"""`evaluate`: one `quoteproof eval` run, from the question set to the written
report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from quoteproof.errors import BackendConfigError
from quoteproof.evaluation.assemble import EvalReport, assemble_report, report_paths, write_report
from quoteproof.evaluation.evalset import read_evalset, sample
from quoteproof.evaluation.report import load_report
from quoteproof.evaluation.runner import AskOptions, ItemResult, run_eval
from quoteproof.llm.base import Backend, Capability
from quoteproof.llm.registry import BackendSpec, make_backend
from quoteproof.service.view import ScopedIndex
from quoteproof.strategies.options import AnswerOptions

__all__ = ["EvalPlan", "EvalRequest", "Evaluated", "make_grader"]


def make_grader(spec: BackendSpec) -> Backend:
    """The grader's backend (`llm.registry.make_backend`). Raises
    `BackendConfigError` for a backend without a model (`extractive` cannot
    grade), and what `make_backend` raises."""
    if spec.backend_name() == "extractive":
        raise BackendConfigError(
            "the grader needs a model: give --grader-model NAME or --grader-llm local"
        )
    grader = make_backend(spec)
    if Capability.MODEL not in grader.capabilities:
        raise BackendConfigError(f"the {grader.name} backend has no model to grade with")
    return grader


@dataclass(frozen=True)
class EvalRequest:
    """What to evaluate: the question set at `evalset` (`sample_size` of them,
    drawn with `seed` when given), retrieval recall also at `recall_ks`, the report
    written to `output` and `html` (defaults: `report_paths`), compared with the
    earlier run at `compare`."""

    evalset: Path
    recall_ks: tuple[int, ...] = ()
    sample_size: int | None = None
    seed: int | None = None
    output: Path | None = None
    html: Path | None = None
    compare: Path | None = None


@dataclass(frozen=True)
class Evaluated:
    """A finished run: its report and where it was written."""

    result: EvalReport
    json_path: Path
    html_path: Path


class EvalPlan:
    """A run read and ready: the question set and the earlier run are read first,
    so that a bad file is reported before any index is opened. Raises `UsageError`
    for a set or an earlier run that cannot be read."""

    def __init__(self, request: EvalRequest) -> None:
        self.request = request
        self.items = read_evalset(request.evalset)
        compare = request.compare
        self.earlier = (str(compare), load_report(compare)) if compare is not None else None
        self.json_path, self.html_path = report_paths(request.evalset, request.output, request.html)

    def run(
        self,
        view: ScopedIndex,
        backend: Backend,
        options: AnswerOptions,
        *,
        collections: tuple[str, ...] | None = None,
        retriever: str | None = None,
        on_start: Callable[[int], None] | None = None,
        on_item: Callable[[ItemResult], None] | None = None,
        grader: Backend | None = None,
    ) -> Evaluated:
        """Ask every question of the (sampled) set through `view`'s index with
        `backend` and `options` (over `collections`), score the answers (and grade
        them with `grader`) and write the report (`retriever` names the retrieval in
        it). Raises `ReportError`
        when the report cannot be written, and what asking raises."""
        request = self.request
        scope = view.principal.narrow(collections)
        ask = AskOptions(backend=backend, collections=scope, **asdict(options))
        run = run_eval(
            view.index,
            sample(self.items, request.sample_size, request.seed),
            ask,
            recall_ks=request.recall_ks,
            on_start=on_start,
            on_item=on_item,
            grader=grader,
        )
        result = assemble_report(
            run,
            set_path=request.evalset,
            set_items=len(self.items),
            index=view.location,
            sample_size=request.sample_size,
            seed=request.seed,
            retriever=retriever,
            earlier=self.earlier,
        )
        write_report(result.report, self.json_path, self.html_path)
        return Evaluated(result, self.json_path, self.html_path)
