"""A real language model in the loop: the bundled SmolLM2-135M-Instruct (GGUF, run
in-process by llama-cpp-python) answering questions of `evalsets/demo.jsonl` over the
demo corpus, in `quote` and `cite` modes, with and without the protocol grammar. The
extractive backend (no model) answers the same questions in the same run as the
reference row.

Per row: replies that parse as the protocol (no malformed tag, quotes and citations
naming retrieved refs only, every sentence of prose cited), quotes resolved and
quotes rejected, quotes that fail `verify` (must be 0), refusals of unanswerable and
of answerable questions, citation accuracy, time per answer split into the model's
time and quoteproof's own (retrieval, resolution, checks), and tokens per second.

Then the speed of `--llm local` in `quote` and `cite` modes on the demo questions
(`examples/questions.txt`), quiet and beside one CPU-bound process this script starts
itself, with PASS/miss against the targets (`local_speed.py`).

    python benchmarks/real_model.py [--sample 12] [--seed 0] [--threads N]
                                    [--questions N] [--speed-only] [--json FILE]

The sample is drawn with a fixed seed, so answerable and unanswerable questions mix.
`--threads` fixes the model's threads (default: chosen per request, `llm.threads`).
Needs the dense and local extras (`make bench` installs them). Exit status 1 when a
target is missed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from figures import Figures, add_json_option
from local_speed import TimedBackend, measure, report
from quoteproof import Index
from quoteproof.evaluation.evalset import EvalItem, read_evalset, sample
from quoteproof.evaluation.runner import AskOptions, EvalRun, run_eval
from quoteproof.llm.base import Backend
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.llm.local import LocalBackend
from quoteproof.model import AnswerMode
from quoteproof.quoting.parse import MalformedItem, ProseItem, QuoteItem, parse_output
from quoteproof.retrieval.retriever import RetrievalNotice

REPO = Path(__file__).resolve().parent.parent
EVALSET = REPO / "evalsets" / "demo.jsonl"
CORPUS = REPO / "examples" / "corpus"
QUESTIONS = REPO / "examples" / "questions.txt"
ANSWER_STAGES = ("answer", "retry")


def protocol_valid(reply: str, refs: set[str]) -> bool:
    """True when `reply` is the protocol: something or `<no-answer/>`, nothing
    malformed, quotes of retrieved refs, every prose item citing retrieved refs."""
    parsed = parse_output(reply)
    if not parsed.no_answer and not parsed.items:
        return False
    for item in parsed.items:
        if isinstance(item, MalformedItem):
            return False
        if isinstance(item, QuoteItem) and item.ref not in refs:
            return False
        if isinstance(item, ProseItem) and not (item.citations and set(item.citations) <= refs):
            return False
    return True


@dataclass(frozen=True)
class Row:
    name: str
    run: EvalRun
    model_s: float

    def replies(self) -> tuple[int, int]:
        """(protocol-valid replies, replies) over every answer-stage model call."""
        valid = total = 0
        for result in self.run.items:
            if result.answer is None:
                continue
            refs = {source.ref for source in result.answer.sources}
            for call in result.answer.calls:
                if call.stage in ANSWER_STAGES:
                    total += 1
                    valid += protocol_valid(call.output, refs)
        return valid, total

    def quotes(self) -> tuple[int, int]:
        """(quotes resolved, quote requests rejected) over every answer."""
        answers = [r.answer for r in self.run.items if r.answer is not None]
        resolved = sum(len(a.quotes) for a in answers)
        rejected = sum(
            1 for a in answers for r in a.rejected if r.raw.lstrip().lower().startswith("<quote")
        )
        return resolved, rejected

    def valid_percent(self) -> float | None:
        """Protocol-valid replies, % of the answer-stage replies (None without any)."""
        valid, total = self.replies()
        return 100 * valid / total if total else None

    def seconds_per_answer(self) -> float:
        return self.run.duration_s / max(1, self.run.metrics.items)

    def own_seconds(self) -> float:
        """quoteproof's own seconds: the run's less the model's."""
        return max(0.0, self.run.duration_s - self.model_s)

    def line(self) -> str:
        m = self.run.metrics
        n = max(1, m.items)
        valid, total = self.replies()
        resolved, rejected = self.quotes()
        total_s = self.run.duration_s
        own_s = self.own_seconds()
        tokens = m.completion_tokens or 0
        rate = f"{tokens / self.model_s:6.1f}" if self.model_s > 0 and tokens else "     -"
        percent = self.valid_percent()
        protocol = (
            f"{valid:3d}/{total:<3d} {percent:5.1f}%" if percent is not None else "      -     "
        )
        unanswerable = f"{m.refusal_correct:.2f}" if m.refusal_correct is not None else "   -"
        false_refusal = (
            f"{m.false_refusal_rate:.2f}" if m.false_refusal_rate is not None else "   -"
        )
        citation = f"{m.citation_accuracy:.2f}" if m.citation_accuracy is not None else "   -"
        share = f"{100 * own_s / total_s:5.1f}%" if total_s > 0 else "    -"
        return (
            f"{self.name:<22} {protocol:>13} {resolved:>5} {rejected:>5} {m.not_verbatim:>6} "
            f"{unanswerable:>6} {false_refusal:>6} {citation:>6} "
            f"{self.seconds_per_answer():7.2f} {self.model_s / n:7.2f} {own_s / n:7.3f} "
            f"{share:>6} {rate}"
        )


HEADER = (
    f"{'backend / mode':<22} {'protocol ok':>13} {'quot':>5} {'rej':>5} {'!verb':>6} "
    f"{'refU':>6} {'refA':>6} {'cite':>6} "
    f"{'s/ans':>7} {'model':>7} {'own':>7} {'own%':>6} {'tok/s':>6}"
)
LEGEND = """\
protocol ok: answer replies that parse as the protocol; quot/rej: quotes resolved and
quote requests rejected; !verb: shown quotes that fail verify (must be 0); refU:
unanswerable questions refused; refA: answerable questions refused; cite: citation
accuracy; s/ans: seconds per answer, of which model (inside the backend) and own
(quoteproof: retrieval, resolution, checks); tok/s: completion tokens per model second."""


def run_row(
    index: Index, name: str, backend: Backend, mode: AnswerMode, items: list[EvalItem], top_k: int
) -> Row:
    timed = TimedBackend(backend)
    run = run_eval(
        index,
        items,
        AskOptions(backend=timed, mode=mode, top_k=top_k, faithfulness="deterministic"),
    )
    return Row(name, run, timed.seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=12, help="questions asked per row")
    parser.add_argument("--seed", type=int, default=0, help="seed of the question sample")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads of the model")
    parser.add_argument("--top-k", type=int, default=3, help="sources given to the model")
    parser.add_argument("--questions", type=int, default=None,
                        help="time only the first N demo questions")  # fmt: skip
    parser.add_argument("--speed-only", action="store_true", help="skip the evalset rows")
    add_json_option(parser)
    args = parser.parse_args()
    warnings.simplefilter("ignore", RetrievalNotice)
    items = sample(read_evalset(EVALSET), args.sample, args.seed)
    questions = [q.strip() for q in QUESTIONS.read_text("utf-8").splitlines() if q.strip()]
    questions = questions[: args.questions]
    answerable = sum(item.answerable for item in items)
    out = Figures("realmodel")
    with (
        tempfile.TemporaryDirectory() as tmp,
        Index.open(Path(tmp) / "index", create=True) as index,
    ):
        index.ingest([CORPUS], embed=True)
        with_grammar = LocalBackend(threads=args.threads)
        rows = []
        if not args.speed_only:
            print(
                f"{len(items)} questions of {EVALSET.name} ({answerable} answerable, "
                f"{len(items) - answerable} not), seed {args.seed}, top-k {args.top_k}",
                file=sys.stderr,
            )
            without = LocalBackend(threads=args.threads, grammar=False)
            configs: list[tuple[str, Backend, AnswerMode]] = [
                ("extractive (reference)", ExtractiveBackend(), "quote"),
                ("local quote", without, "quote"),
                ("local quote +grammar", with_grammar, "quote"),
                ("local cite", without, "cite"),
                ("local cite +grammar", with_grammar, "cite"),
            ]
            for name, backend, mode in configs:
                print(f"  {name} ...", file=sys.stderr, flush=True)
                rows.append(run_row(index, name, backend, mode, items, args.top_k))
        print(f"  speed on {len(questions)} demo questions ...", file=sys.stderr, flush=True)
        speed = measure(index, with_grammar, questions, args.top_k)
    threads = f"fixed at {args.threads}" if args.threads else "chosen per request"
    print(f"model: {with_grammar.model}, threads {threads}")
    if rows:
        print(f"{len(items)} questions per row")
        print(HEADER)
        for row in rows:
            print(row.line())
        print(LEGEND)
        quality_figures({row.name: row for row in rows}, out)
    print(f"\nSpeed on the demo questions ({QUESTIONS.name}), top-k {args.top_k}:")
    for line in report(speed, out):
        print(line)
    out.write(args.json)
    if not all(out.targets.values()):
        sys.exit(1)


def quality_figures(rows: dict[str, Row], out: Figures) -> None:
    """Add to `out`, per mode, with the grammar: protocol-valid replies (reference:
    without it) and seconds per answer (reference: the extractive backend);
    quoteproof's share of the answer time; shown quotes failing verify over every row
    (must be 0, a target)."""
    extractive = rows["extractive (reference)"]
    for mode in ("quote", "cite"):
        constrained, free = rows[f"local {mode} +grammar"], rows[f"local {mode}"]
        out.add(f"protocol-valid replies %, {mode} +grammar", constrained.valid_percent(), "%",
                "without grammar", free.valid_percent())  # fmt: skip
        out.add(f"s/answer, {mode} +grammar", constrained.seconds_per_answer(), "s",
                "extractive backend", extractive.seconds_per_answer())  # fmt: skip
    quote = rows["local quote +grammar"]
    share = 100 * quote.own_seconds() / quote.run.duration_s if quote.run.duration_s else None
    out.add("quoteproof's own time, % of answer (quote +grammar)", share, "%")
    failing = sum(row.run.metrics.not_verbatim for row in rows.values())
    out.add("shown quotes failing verify, every row", failing, "quotes")
    out.target("no shown quote fails verify", failing == 0)


if __name__ == "__main__":
    main()
