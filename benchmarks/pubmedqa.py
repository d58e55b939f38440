"""PubMedQA in the layout of the rationale framework's published table: per answer
mode, the share of faithful answers, the grader's mean grade (1-5) and the accuracy
of the yes / no / maybe decision, with the answering and the grading model named,
and the published figures beside them.

Data: PubMedQA PQA-L (`--pubmedqa DIR`, default `../shared/data/pubmedqa`: the folder
holding `ori_pqal.json` and `test_ground_truth.json` of
https://github.com/pubmedqa/pubmedqa). `--sample N` of the 500 test questions (a
random sample, seeded by `--seed`, in the file's order; default 5), or all 500 with
`--sample all`. Each question is asked in two settings:

- `own`: over its own abstract only (one collection per abstract);
- `all`: over one index of all 1,000 PQA-L abstracts (the question's among them).

Rows, per setting: `none` (the question alone, no passages: the model answers from
what it knows), `quote`, `cite` and `rationale` (`quoteproof ask --mode ...`, BM25,
top 3). The question is asked with "Answer yes, no or maybe." appended.

Columns:
- faithful %: the mean faithfulness of the answers given that make claims of their
  own (`Answer.faithfulness.score`: the share of the answer's generated sentences,
  those removed counted too, that the passages they cite support), as RAGAS
  defines faithfulness; checked by `--faithfulness deterministic` (numbers, units,
  dates, names and negations must be in the cited passages; no model call: this
  benchmark's default, unlike `quoteproof ask`'s, so that its figures compare with
  earlier runs) or `model` (the answering model judges each claim: one more call
  per answer, as the published figure was judged). Without passages (`none`) there is
  nothing to be faithful to: no figure;
- grade: the grader's mean grade, 1-5 (`quoteproof eval --grader`, docs/grading.md),
  against the reference answer (the gold decision and PubMedQA's long answer);
  malformed grades (the reply could not be read as a grade) and failed ones (the
  grader could not be asked) are counted apart, each listed with its reason and the
  grader's reply, and left out of the mean;
- accuracy: the first "yes", "no" or "maybe" of the answer's generated sentences
  against the gold decision (none, or a refusal, counts as wrong).

Timing: the seconds per question of each row, answering and grading apart (the
question alone is asked once and counted in both settings' `none` rows), and the
whole run's seconds per question with the projected time for all 500.

The answering model is the bundled SmolLM2-135M-Instruct in-process (`--llm local`)
or any OpenAI-compatible server (`--llm openai --base-url URL --model NAME`); the
grader likewise (`--grader-llm`, `--grader-model`, `--grader-base-url`; default the
same as the answering model). A local grader writes under the grade grammar.

    python benchmarks/pubmedqa.py [--sample N|all] [--seed S] [--pubmedqa DIR]
                                  [--llm local|openai] [--model M] [--base-url URL]
                                  [--grader-llm ...] [--grader-model M]
                                  [--grader-base-url URL] [--threads N]
                                  [--faithfulness deterministic|model] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from context_forms import PUBMEDQA, decision, pubmedqa_items, sample_size
from figures import Figures, add_json_option
from quoteproof import Index
from quoteproof.evaluation.grading import Grade, answer_for_grading, grade_text
from quoteproof.llm.base import Backend, CompletionRequest
from quoteproof.model import Answer, AnswerMode, Message
from quoteproof.retrieval.retriever import RetrievalNotice, RetrievalSettings

MODES: tuple[AnswerMode, ...] = ("quote", "cite", "rationale")
ROWS = ("none", *MODES)
SETTINGS = ("own", "all")
TOP_K = 3
DEFAULT_SAMPLE = 5
ALL_QUESTIONS = 500
REPLY_CHARS = 600
SUFFIX = " Answer yes, no or maybe."
PUBLISHED = (
    "published (PubMedQA): RAG+FE faithful 86.5%, grade 4.13/5, accuracy 88.49%; "
    "plain RAG 72.40% / 72.67%"
)
PUBLISHED_FE = {"faithful": 0.865, "grade": 4.13, "accuracy": 0.8849}
NONE_SYSTEM = (
    "Answer the biomedical research question from what you know. Begin with yes, no "
    "or maybe, then give one sentence of explanation."
)
_DECISION = re.compile(r"\b(yes|no|maybe)\b", re.IGNORECASE)


@dataclass
class Row:
    """What one mode gave in one setting."""

    asked: int = 0
    answered: int = 0
    faithfulness: list[float] = field(default_factory=list)
    correct: int = 0
    grades: list[Grade] = field(default_factory=list)
    seconds: float = 0.0
    grade_seconds: float = 0.0

    def add(
        self, said: str | None, gold: str, grade: Grade, seconds: float, grade_seconds: float
    ) -> None:
        """Count one question: the decision `said`, its `grade`, and the seconds spent
        answering and grading it."""
        self.asked += 1
        self.correct += said == gold
        self.grades.append(grade)
        self.seconds += seconds
        self.grade_seconds += grade_seconds

    @property
    def graded(self) -> list[int]:
        return [g.grade for g in self.grades if g.status == "graded" and g.grade is not None]

    @property
    def malformed(self) -> int:
        return sum(g.status == "malformed" for g in self.grades)

    @property
    def failed(self) -> int:
        return sum(g.status == "error" for g in self.grades)


def faithful(answer: Answer) -> float | None:
    """The faithfulness score of an answer given that makes claims of its own; None
    for a refusal or an answer of quotes only."""
    if answer.status != "answered" or answer.faithfulness is None:
        return None
    return answer.faithfulness.score


def mean_faithfulness(row: Row) -> float | None:
    """The mean faithfulness of `row`'s scored answers (None when none was scored)."""
    scores = row.faithfulness
    return sum(scores) / len(scores) if scores else None


def make_backend(llm: str, model: str | None, base_url: str, threads: int | None) -> Backend:
    if llm == "local":
        from quoteproof.llm.local import LocalBackend

        return LocalBackend(model, threads=threads) if model else LocalBackend(threads=threads)
    from quoteproof.llm.openai import OpenAIBackend

    return OpenAIBackend(model=model or "model", base_url=base_url, timeout=600)


def ask_alone(backend: Backend, question: str) -> str:
    """The model's reply to the question with no passages."""
    request = CompletionRequest(
        messages=(Message("system", NONE_SYSTEM), Message("user", question)),
        question=question,
        sources=(),
        max_tokens=128,
    )
    return backend.complete(request).text.strip()


def timed_grade(grader: Backend, question: str, reference: str, text: str) -> tuple[Grade, float]:
    """`grade_text` of `text`, and the seconds it took."""
    clock = time.perf_counter()
    grade = grade_text(grader, question, reference, text)
    return grade, time.perf_counter() - clock


def grade_problem(grade: Grade, where: str) -> list[str]:
    """A line naming a grade that is not one (malformed or failed): where, the
    problem and the grader's reply (its first `REPLY_CHARS` characters and its
    length); none for a grade."""
    if grade.status == "graded":
        return []
    raw = grade.raw or ""
    cut = "..." if len(raw) > REPLY_CHARS else ""
    return [f"{grade.status} grade, {where}: {grade.problem}; reply "
            f"({len(raw)} characters): {raw[:REPLY_CHARS]!r}{cut}"]  # fmt: skip


def projected(per_question: float, ingest_s: float) -> str:
    """The time all `ALL_QUESTIONS` would take at `per_question` seconds each, after
    the ingest, in hours."""
    return f"{(ingest_s + per_question * ALL_QUESTIONS) / 3600:.1f} h"


def first_decision(text: str) -> str | None:
    found = _DECISION.search(text)
    return found.group(1).lower() if found else None


def build_index(
    root: Path, items: list[tuple[str, str, list[str], str]], every: dict[str, Any]
) -> Index:
    """One index: each sampled abstract in a collection of its own (`p<pmid>`), and
    all 1,000 abstracts in collection `all`."""
    index = Index.open(root / "index", create=True, retrieval=RetrievalSettings(retriever="bm25"))
    for folder, chosen in (("own", [p for p, *_ in items]), ("all", list(every))):
        paths = []
        for pmid in chosen:
            path = root / folder / f"{pmid}.txt"
            path.parent.mkdir(exist_ok=True)
            path.write_text("\n\n".join(every[pmid]["CONTEXTS"]) + "\n", "utf-8")
            paths.append(path)
        if folder == "own":
            for pmid, path in zip(chosen, paths, strict=True):
                index.ingest([path], embed=False, collection=f"p{pmid}")
        else:
            index.ingest([root / folder], embed=False, collection="all")
    return index


def run(args: argparse.Namespace, figures: Figures) -> list[str]:
    """Ask and grade the sample; add the figures and notes to `figures` and return
    the table in the published layout."""
    warnings.simplefilter("ignore", RetrievalNotice)
    every = json.loads((args.pubmedqa / "ori_pqal.json").read_text("utf-8"))
    items = pubmedqa_items(args.pubmedqa, args.sample, args.seed)
    answerer = make_backend(args.llm, args.model, args.base_url, args.threads)
    same = (args.grader_llm or args.llm, args.grader_model or args.model) == (
        args.llm,
        args.model,
    ) and (args.grader_base_url or args.base_url) == args.base_url
    grader = (
        answerer
        if same
        else make_backend(
            args.grader_llm or args.llm,
            args.grader_model or args.model,
            args.grader_base_url or args.base_url,
            args.threads,
        )
    )
    rows = {(setting, row): Row() for setting in SETTINGS for row in ROWS}
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        index = build_index(Path(tmp), items, every)
        ingest_s = time.perf_counter() - started
        figures.note(f"ingest of {len(every)} + {len(items)} abstracts: {ingest_s:.0f} s")
        started = time.perf_counter()
        for number, (pmid, question, _, gold) in enumerate(items, start=1):
            reference = f"{gold}. {every[pmid]['LONG_ANSWER']}"
            asked = question + SUFFIX
            clock = time.perf_counter()
            reply = ask_alone(answerer, asked)
            seconds = time.perf_counter() - clock
            grade, grade_s = timed_grade(grader, question, reference, reply)
            problems += grade_problem(grade, f"question {number} ({pmid}), none")
            for setting in SETTINGS:  # the question alone does not depend on the index
                rows[setting, "none"].answered += 1
                rows[setting, "none"].add(first_decision(reply), gold, grade, seconds, grade_s)
            for setting in SETTINGS:
                collection = f"p{pmid}" if setting == "own" else "all"
                for mode in MODES:
                    clock = time.perf_counter()
                    answer = index.ask(
                        asked,
                        backend=answerer,
                        mode=mode,
                        top_k=TOP_K,
                        collections=[collection],
                        faithfulness=args.faithfulness,
                    )
                    seconds = time.perf_counter() - clock
                    row = rows[setting, mode]
                    row.answered += answer.status == "answered"
                    score = faithful(answer)
                    if score is not None:
                        row.faithfulness.append(score)
                    text = answer_for_grading(answer)
                    grade, grade_s = timed_grade(grader, question, reference, text)
                    problems += grade_problem(grade, f"question {number} ({pmid}), {setting} "
                                              f"{mode}")  # fmt: skip
                    row.add(decision(answer), gold, grade, seconds, grade_s)
            print(f"pubmedqa {number}/{len(items)}: {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)  # fmt: skip
        per_question = (time.perf_counter() - started) / len(items)
        index.close()
    report(figures, rows, len(items))
    for line in problems:
        figures.note(line)
    figures.add("seconds per question, all rows", per_question, "s")
    figures.note(f"seconds per question, all rows answered and graded: {per_question:.1f}; "
                 f"projected for all {ALL_QUESTIONS}: "
                 f"{projected(per_question, ingest_s)}")  # fmt: skip
    figures.note(f"answering model: {answerer.model} ({answerer.name}); "
                 f"grading model: {grader.model} ({grader.name})")  # fmt: skip
    figures.note(f"{len(items)} of the 500 PQA-L test questions (seed {args.seed}); "
                 f"BM25, top {TOP_K}; majority class (yes) "
                 f"{sum(g == 'yes' for *_, g in items) / len(items):.1%}")  # fmt: skip
    figures.note(PUBLISHED)
    return table(rows, len(items))


def report(figures: Figures, rows: dict[tuple[str, str], Row], asked: int) -> None:
    """Each row's figures; the quoteproof rows of the all-abstracts index beside the
    published RAG+FE figures."""
    for (setting, name), row in rows.items():
        label = f"{setting} {name}"
        reference = "published RAG+FE" if setting == "all" and name != "none" else ""

        def published(key: str, ref: str = reference) -> float | None:
            return PUBLISHED_FE[key] if ref else None

        figures.add(f"{label}: faithful (mean of {len(row.faithfulness)} scored)",
                    None if name == "none" else mean_faithfulness(row), "share",
                    reference, published("faithful"))  # fmt: skip
        graded = row.graded
        mean = sum(graded) / len(graded) if graded else None
        figures.add(f"{label}: grade (mean of {len(graded)}; {row.malformed} malformed, "
                    f"{row.failed} failed)", mean, "of 5", reference,
                    published("grade"))  # fmt: skip
        figures.add(f"{label}: accuracy (yes/no/maybe)", row.correct / asked, "share",
                    reference, published("accuracy"))  # fmt: skip
        figures.add(f"{label}: seconds per answer", row.seconds / asked, "s")
        figures.add(f"{label}: seconds per grade", row.grade_seconds / asked, "s")


def table(rows: dict[tuple[str, str], Row], asked: int) -> list[str]:
    """The published layout: a line per setting and mode (`answered`: not refused),
    with the seconds per question spent answering and grading."""
    lines = [f"{'setting':<8}{'mode':<11}{'answered':>9}{'faithful':>10}{'grade':>8}"
             f"{'accuracy':>10}{'graded':>8}{'malformed':>11}{'failed':>8}"
             f"{'answer_s':>10}{'grade_s':>9}"]  # fmt: skip
    for (setting, name), row in rows.items():
        share = None if name == "none" else mean_faithfulness(row)
        graded = row.graded
        lines.append(
            f"{setting:<8}{name:<11}{f'{row.answered}/{asked}':>9}"
            f"{'—' if share is None else f'{share:.1%}':>10}"
            f"{'—' if not graded else f'{sum(graded) / len(graded):.2f}':>8}"
            f"{row.correct / asked:>10.1%}{len(graded):>8}{row.malformed:>11}{row.failed:>8}"
            f"{row.seconds / asked:>10.1f}{row.grade_seconds / asked:>9.1f}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pubmedqa", type=Path, default=PUBMEDQA,
                        help="folder of ori_pqal.json and test_ground_truth.json")  # fmt: skip
    parser.add_argument("--sample", type=sample_size, default=DEFAULT_SAMPLE,
                        help=f"test questions: N at random, or all 500 "
                        f"(default {DEFAULT_SAMPLE})")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="the sample's random seed")
    parser.add_argument("--llm", choices=["local", "openai"], default="local")
    parser.add_argument("--model", default=None, help="model name (local: GGUF file)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--grader-llm", choices=["local", "openai"], default=None)
    parser.add_argument("--grader-model", default=None)
    parser.add_argument("--grader-base-url", default=None)
    parser.add_argument("--threads", type=int, default=None, help="--llm local: threads")
    parser.add_argument("--faithfulness", choices=["deterministic", "model"],
                        default="deterministic",
                        help="how claims are checked (model: one more call each)")  # fmt: skip
    add_json_option(parser)
    args = parser.parse_args()
    figures = Figures("pubmedqa")
    lines: list[str] = []
    if not (args.pubmedqa / "test_ground_truth.json").is_file():
        figures.note(f"PubMedQA skipped: no test_ground_truth.json in {args.pubmedqa}")
    else:
        lines = run(args, figures)
    for line in [*lines, *figures.notes]:
        print(line)
    figures.write(args.json)


if __name__ == "__main__":
    main()
