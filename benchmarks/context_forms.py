"""The four context forms (`ask --context paragraphs|triplets|both|whole`) side by side:
prompt tokens per question, answer time and, where gold answers exist, accuracy.

Corpora:
- PubMedQA PQA-L (`--pubmedqa DIR`, default `../shared/data/pubmedqa`: the folder
  holding `ori_pqal.json` and `test_ground_truth.json` of
  https://github.com/pubmedqa/pubmedqa): `--sample N` of the 500 test questions (a
  random sample, seeded by `--seed`, in the file's order; default 3, so that a run
  takes minutes on 2 cores), or all 500 with `--sample all`. Each is asked over its
  own abstract only (one collection per abstract, its sections as paragraphs). There
  is no graph, so the triplet forms use the triplets the model extracts from the
  retrieved paragraphs. Accuracy: the first "yes", "no" or "maybe" of the answer's
  generated sentences against the gold decision (an answer with none, or a refusal,
  counts as wrong), next to the majority class ("yes") on the same questions.
- The Veklury label of the demo corpus (`examples/corpus/fda`) with the sample graph
  `examples/graph/veklury-facts.csv` imported: the demo evaluation set's questions
  about the label (`--no-label` to skip). No gold decision: tokens and time only.

The model is the bundled SmolLM2-135M-Instruct in-process (`--llm local`), or any
OpenAI-compatible server (`--llm openai --base-url URL --model NAME`). Each answer is
asked in `cite` mode (sentences a decision can be read from), BM25 retrieval, top 3.
Prompt tokens are the model's own counts: those of the call that writes the answer
(what the published 6.5x compares: 1,846 tokens of paragraphs against 285 of
triplets; the ratio is a figure with the published one as its reference), and those
of every call of the answer (extraction included).

    python benchmarks/context_forms.py [--sample N|all] [--seed S] [--pubmedqa DIR]
                                       [--forms ...] [--no-label] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from figures import Figures, add_json_option  # noqa: E402
from quoteproof import Index  # noqa: E402
from quoteproof.llm.base import Backend  # noqa: E402
from quoteproof.model import Answer, ContextForm, ProseSegment  # noqa: E402
from quoteproof.retrieval.retriever import RetrievalNotice, RetrievalSettings  # noqa: E402

FORMS: tuple[ContextForm, ...] = ("paragraphs", "triplets", "both", "whole")
PUBLISHED_RATIO = 1846 / 285
PUBMEDQA = REPO.parent / "shared" / "data" / "pubmedqa"
DEFAULT_SAMPLE = 3
LABEL = REPO / "examples" / "corpus" / "fda"
GRAPH = REPO / "examples" / "graph" / "veklury-facts.csv"
DEMO_SET = REPO / "evalsets" / "demo.jsonl"
TOP_K = 3
_DECISION = re.compile(r"\b(yes|no|maybe)\b", re.IGNORECASE)
_ANSWER_STAGES = ("answer", "retry")


@dataclass
class Run:
    """What one context form gave on one corpus."""

    answer_tokens: list[int] = field(default_factory=list)
    total_tokens: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    correct: int = 0
    decided: int = 0
    refused: int = 0
    fell_back: int = 0
    asked: int = 0
    reasons: dict[str, int] = field(default_factory=dict)


def decision(answer: Answer) -> str | None:
    """The first yes / no / maybe of the answer's generated sentences, or None."""
    if answer.status != "answered":
        return None
    for segment in answer.segments:
        if isinstance(segment, ProseSegment):
            found = _DECISION.search(segment.text)
            if found:
                return found.group(1).lower()
    return None


def record(run: Run, answer: Answer, seconds: float, gold: str | None) -> None:
    run.asked += 1
    run.seconds.append(seconds)
    run.refused += answer.status == "refused"
    if answer.refusal_reason is not None:
        run.reasons[answer.refusal_reason] = run.reasons.get(answer.refusal_reason, 0) + 1
    run.fell_back += any("fell back to retrieval" in notice for notice in answer.notices)
    reported = [c for c in answer.calls if c.usage is not None]
    answering = [c for c in reported if c.stage in _ANSWER_STAGES][:1]
    if answering and answering[0].usage is not None:
        run.answer_tokens.append(answering[0].usage.prompt_tokens)
    if reported:
        run.total_tokens.append(sum(c.usage.prompt_tokens for c in reported if c.usage))
    if gold is not None:
        said = decision(answer)
        run.decided += said is not None
        run.correct += said == gold


def pubmedqa_items(
    folder: Path, sample: int | None, seed: int = 0
) -> list[tuple[str, str, list[str], str]]:
    """(pmid, question, abstract sections, gold decision) of `sample` test items
    drawn at random with `seed` (None: all of them), in the file's order."""
    items = json.loads((folder / "ori_pqal.json").read_text("utf-8"))
    gold = json.loads((folder / "test_ground_truth.json").read_text("utf-8"))
    chosen = list(gold)
    if sample is not None and sample < len(chosen):
        drawn = set(random.Random(seed).sample(chosen, sample))
        chosen = [pmid for pmid in chosen if pmid in drawn]
    return [(p, items[p]["QUESTION"], items[p]["CONTEXTS"], gold[p]) for p in chosen]


def sample_size(text: str) -> int | None:
    """`--sample`'s value: a count of at least 1, or `all` (None)."""
    if text == "all":
        return None
    count = int(text)
    if count < 1:
        raise argparse.ArgumentTypeError("the sample is at least 1 question, or all")
    return count


def label_questions() -> list[str]:
    found = []
    for line in DEMO_SET.read_text("utf-8").splitlines():
        item = json.loads(line)
        if item.get("answerable") and any("fda/" in ref for ref in item.get("gold_refs", ())):
            found.append(item["question"])
    return found


def make_backend(args: argparse.Namespace) -> Backend:
    if args.llm == "local":
        from quoteproof.llm.local import LocalBackend

        return LocalBackend(threads=args.threads)
    from quoteproof.llm.openai import OpenAIBackend

    return OpenAIBackend(model=args.model, base_url=args.base_url, timeout=600)


def ask(
    index: Index, backend: Backend, question: str, form: ContextForm, collection: str
) -> tuple[Answer, float]:
    started = time.perf_counter()
    answer = index.ask(
        question,
        backend=backend,
        mode="cite",
        context=form,
        top_k=TOP_K,
        collections=[collection],
        faithfulness="deterministic",  # the form's own tokens and time, as measured before
    )
    return answer, time.perf_counter() - started


def mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def report(
    figures: Figures, corpus: str, runs: dict[ContextForm, Run], majority: float | None = None
) -> None:
    """The figures of `runs` on `corpus`: per form, prompt tokens (the answer call's
    against paragraphs'), time, refusals and, with `majority` (the majority class's
    accuracy on the same questions: there is gold), accuracy against it; then the
    paragraphs / triplets token ratio against the published one."""
    base = mean(runs["paragraphs"].answer_tokens) if "paragraphs" in runs else None
    for form, run in runs.items():
        tokens = mean(run.answer_tokens)
        figures.add(
            f"{corpus} {form}: prompt tokens of the answer call (mean)",
            tokens,
            "tokens",
            "paragraphs" if form != "paragraphs" else "",
            base if form != "paragraphs" else None,
        )
        figures.add(
            f"{corpus} {form}: prompt tokens, all calls (mean)", mean(run.total_tokens), "tokens"
        )
        figures.add(f"{corpus} {form}: seconds per answer (mean)", mean(run.seconds), "s")
        figures.add(f"{corpus} {form}: refused", run.refused, f"of {run.asked}")
        if form == "whole":
            figures.add(f"{corpus} whole: fell back to retrieval", run.fell_back, f"of {run.asked}")
        if run.reasons:
            reasons = ", ".join(
                f"{reason} {count}" for reason, count in sorted(run.reasons.items())
            )
            figures.note(f"{corpus} {form}: refusals: {reasons}")
        if majority is not None:
            accuracy = run.correct / run.asked if run.asked else None
            figures.add(
                f"{corpus} {form}: accuracy (yes/no/maybe)",
                accuracy,
                "share",
                "majority class (yes)",
                majority,
            )
            figures.add(f"{corpus} {form}: answers with a decision", run.decided, f"of {run.asked}")
    if base and "triplets" in runs and mean(runs["triplets"].answer_tokens):
        ratio = base / (mean(runs["triplets"].answer_tokens) or 1)
        figures.add(
            f"{corpus}: paragraphs / triplets, prompt tokens of the answer call",
            ratio,
            "x",
            "published 1,846 / 285",
            PUBLISHED_RATIO,
        )
        figures.note(
            f"{corpus}: paragraphs / triplets prompt tokens of the answer call = {ratio:.1f}x "
            f"(published: {PUBLISHED_RATIO:.1f}x, 1,846 / 285)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pubmedqa",
        type=Path,
        default=PUBMEDQA,
        help="folder of ori_pqal.json and test_ground_truth.json (skipped when missing)",
    )
    parser.add_argument(
        "--sample",
        type=sample_size,
        default=DEFAULT_SAMPLE,
        help=f"PubMedQA test questions: N at random, or all 500 (default {DEFAULT_SAMPLE})",
    )
    parser.add_argument("--seed", type=int, default=0, help="the sample's random seed")
    parser.add_argument("--forms", default=",".join(FORMS), help="context forms, comma-separated")
    parser.add_argument("--llm", choices=["local", "openai"], default="local")
    parser.add_argument("--model", default="model", help="--llm openai: the model name")
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--threads", type=int, default=None, help="--llm local: threads")
    parser.add_argument("--no-label", action="store_true", help="skip the Veklury label")
    add_json_option(parser)
    args = parser.parse_args()
    forms = [form for form in FORMS if form in args.forms.split(",")]
    warnings.simplefilter("ignore", RetrievalNotice)
    backend = make_backend(args)
    figures = Figures("context_forms")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        index = Index.open(
            root / "index", create=True, retrieval=RetrievalSettings(retriever="bm25")
        )
        found = (args.pubmedqa / "test_ground_truth.json").is_file()
        items = pubmedqa_items(args.pubmedqa, args.sample, args.seed) if found else []
        if not found:
            figures.note(f"PubMedQA skipped: no test_ground_truth.json in {args.pubmedqa}")
        for pmid, _, sections, _ in items:
            path = root / "abstracts" / f"{pmid}.txt"
            path.parent.mkdir(exist_ok=True)
            path.write_text("\n\n".join(sections) + "\n", "utf-8")
            index.ingest([path], embed=False, collection=f"p{pmid}")
        questions = [] if args.no_label else label_questions()
        if questions:
            index.ingest([LABEL], embed=False, collection="label")
            index.import_graph(GRAPH, collection="label")
        if items:
            runs = {form: Run() for form in forms}
            for number, (pmid, question, _, gold) in enumerate(items, start=1):
                asked = f"{question} Answer yes, no or maybe."
                for form in forms:
                    answer, seconds = ask(index, backend, asked, form, f"p{pmid}")
                    record(runs[form], answer, seconds, gold)
                print(f"pubmedqa {number}/{len(items)}", file=sys.stderr, flush=True)
            majority = sum(gold == "yes" for *_, gold in items) / len(items)
            report(figures, "pubmedqa", runs, majority)
            figures.note(f"pubmedqa: {len(items)} of the 500 test questions (seed {args.seed})")
        if questions:
            runs = {form: Run() for form in forms}
            for question in questions:
                for form in forms:
                    answer, seconds = ask(index, backend, question, form, "label")
                    record(runs[form], answer, seconds, None)
            report(figures, "label", runs)
        index.close()
    figures.note(f"model: {backend.model} ({backend.name}); cite mode, BM25, top {TOP_K}")
    for figure in figures.figures:
        shown = "—" if figure.value is None else f"{figure.value:,.3f}".rstrip("0").rstrip(".")
        ratio = "" if figure.ratio is None else f"  ({figure.ratio:.2f}x {figure.reference_name})"
        print(f"{figure.name:<72} {shown:>10} {figure.unit}{ratio}")
    for line in figures.notes:
        print(line)
    figures.write(args.json)


if __name__ == "__main__":
    main()
