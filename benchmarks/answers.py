"""Does the answer hold the answer? The no-model answer against the retrieved chunks
shown whole, on question sets with human answers, in one run over one index.

For each set, per answerable question: whether the no-model (`extractive`) answer is
given or refused, the share of the human answer's words found in the quotes it shows
and how many words it shows; and, from the same retrieval, the same two figures for
the top-1, top-3 and top-5 retrieved chunks shown whole. "Holds" means at least HOLD
(80%) of the human answer's words are shown (where a set gives several equivalent
human answers, the best held one counts). Unanswerable questions count as refused or
answered. Every shown quote is re-verified against the index, and each answer is
checked for repeated quotes (the same text, one inside another, or the same sentence
with one word changed), quotes that stop at a list's colon and quotes that start
inside a word.

Sets (`--sets`, default all):
- `demo-answers`: the demo's questions (`examples/questions.txt`), answered by hand
  (`evalsets/demo-answers.jsonl`), over `examples/corpus`;
- `medquad`: the MedQuAD questions of `evalsets/demo.jsonl` (their NIH answers as the
  human answers) and its unanswerable probes, over `examples/corpus`;
- `nurse`: a nurse's and pharmacist's questions (`evalsets/nurse.jsonl`) over the
  Veklury label and the CDC and WHO infection-prevention guides;
- `labels`: `evalsets/labels.jsonl` over the same three PDFs;
- `articles`: factoid questions written by hand (`evalsets/articles.jsonl`) over 16
  CDC Preventing Chronic Disease 2024 research articles (HTML), with unanswerable
  look-alikes and off-topic questions; its corpus is calibrated with
  `evalsets/articles-calibration.jsonl` (other questions than the set's, written by
  hand without seeing quoteproof's scores);
- `articles-held`: a held-out set of the same kind (`evalsets/articles-held.jsonl`),
  written in November 2026 by a writer who had not seen quoteproof's answers and kept
  fixed, over 16 other CDC Preventing Chronic Disease 2024 articles; its corpus is
  calibrated with `evalsets/articles-held-calibration.jsonl` (other questions than the
  set's, written by hand by another writer without seeing quoteproof's scores).
- `articles-held2`: a second held-out set of the same kind
  (`evalsets/articles-held2.jsonl`), written on 2026-11-29 by a third writer blind to
  how quoteproof answers and kept fixed, over 16 more CDC Preventing Chronic Disease 2024
  articles; its corpus is calibrated with `evalsets/articles-held2-calibration.jsonl`
  (other questions than the set's, by the same writer, equally blind).
- `articles-held3`: a third held-out set of the same kind
  (`evalsets/articles-held3.jsonl`), written on 2026-11-29 by a fourth writer blind to
  how quoteproof answers and kept fixed, over 16 more CDC Preventing Chronic Disease 2024
  articles; its corpus is calibrated with `evalsets/articles-held3-calibration.jsonl`
  (other questions than the set's, by the same writer, equally blind).
- `articles-held4`: a fourth held-out set of the same kind
  (`evalsets/articles-held4.jsonl`), written on 2026-11-30 by a fifth writer blind to
  how quoteproof answers and kept fixed, over 16 more CDC Preventing Chronic Disease 2024
  articles; its corpus is calibrated with `evalsets/articles-held4-calibration.jsonl`
  (other questions than the set's, by the same writer, equally blind).
- `articles-held5`: a fifth held-out set of the same kind
  (`evalsets/articles-held5.jsonl`), written on 2026-12-01 by a sixth writer blind to
  how quoteproof answers and kept fixed, over the 16 CDC Preventing Chronic Disease 2024
  pages left (essays, editorials and columns among them); its corpus is calibrated with
  `evalsets/articles-held5-calibration.jsonl` (by the same writer, equally blind).

With `--llm local`, every set is also answered in quote mode by the bundled SmolLM2
(the model chooses among the numbered quotable units; when nothing it chose checks,
the no-model answer stands), with the automatic threshold, so both are measured on
the same questions, index and retrieval.

Each corpus is ingested once into a temporary index (with vectors unless `--no-embed`).
Every set is asked twice: with the automatic refusal threshold (no calibration file),
then after `quoteproof calibrate` with the corpus' calibration file
(`examples/calibration.jsonl`, `evalsets/labels-calibration.jsonl`,
`evalsets/articles-calibration.jsonl`, `evalsets/articles-held-calibration.jsonl`,
`evalsets/articles-held2-calibration.jsonl`, `evalsets/articles-held3-calibration.jsonl`,
`evalsets/articles-held4-calibration.jsonl`, `evalsets/articles-held5-calibration.jsonl`).
A corpus without a calibration file (none at present) would be asked once, and the
report would note that its calibrated pass was skipped.

    python benchmarks/answers.py [--sets nurse,labels,articles] [--no-embed] [--per-question]
                                 [--llm local] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from figures import Figures, add_json_option
from quoteproof import Index
from quoteproof.llm.base import Backend
from quoteproof.llm.local import LocalBackend
from quoteproof.model import Answer, Quote

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
HOLD = 0.8
TOP_K = (1, 3, 5)
WORDS_TARGET = 80
HOLD_TARGET = 0.85
REFUSED_TARGET = 0.05

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Corpus:
    """Files to ingest into one index, and the calibration file for it (None: the
    corpus has none, and its sets are asked with the automatic threshold only)."""

    name: str
    paths: tuple[Path, ...]
    calibration: Path | None


@dataclass(frozen=True)
class QuestionSet:
    """Questions (evalset JSONL records) asked of one corpus."""

    name: str
    corpus: Corpus
    items: tuple[dict[str, Any], ...]


DEMO = Corpus("demo", (REPO / "examples" / "corpus",), REPO / "examples" / "calibration.jsonl")
LABELS = Corpus(
    "labels",
    (
        DATA / "fda-remdesivir-label" / "veklury_remdesivir_label_oct2020.pdf",
        DATA / "pdfs-medical" / "cdc_outpatient_infection_prevention_guide_v2.3_2016.pdf",
        DATA / "pdfs-medical" / "who_ipc_core_components_guidelines_2016.pdf",
    ),
    REPO / "evalsets" / "labels-calibration.jsonl",
)
ARTICLE_FILES = (
    "22_0411", "23_0162", "23_0166", "23_0277", "23_0315", "23_0324", "23_0335", "23_0354",
    "23_0433", "24_0016", "24_0028", "24_0087", "24_0137", "24_0187", "24_0313", "24_0332",
)  # fmt: skip
"""The CDC PCD 2024 articles of the `articles` set (none of them in `examples/corpus`)."""
ARTICLES = Corpus(
    "articles",
    tuple(DATA / "cdc-pcd-2024-html" / "html" / f"{name}.htm" for name in ARTICLE_FILES),
    REPO / "evalsets" / "articles-calibration.jsonl",
)
ARTICLES_HELD = (
    "23_0189", "23_0234", "23_0266", "23_0284", "23_0305", "23_0339", "23_0409", "23_0444",
    "24_0027", "24_0052", "24_0068", "24_0109", "24_0136", "24_0171", "24_0221", "24_0362",
)  # fmt: skip
"""The CDC PCD 2024 articles of the held-out `articles-held` set (none of them in
`examples/corpus` or in ARTICLE_FILES)."""
ARTICLES_HELD_CORPUS = Corpus(
    "articles-held",
    tuple(DATA / "cdc-pcd-2024-html" / "html" / f"{name}.htm" for name in ARTICLES_HELD),
    REPO / "evalsets" / "articles-held-calibration.jsonl",
)
ARTICLES_HELD2 = (
    "22_0341", "23_0181", "23_0211", "23_0221", "23_0257", "23_0283", "23_0297", "23_0329",
    "23_0399", "23_0420", "24_0020", "24_0066", "24_0097", "24_0126", "24_0156", "24_0205",
)  # fmt: skip
"""The CDC PCD 2024 articles of the second held-out set, `articles-held2` (none of them in
`examples/corpus`, ARTICLE_FILES or ARTICLES_HELD)."""
ARTICLES_HELD2_CORPUS = Corpus(
    "articles-held2",
    tuple(DATA / "cdc-pcd-2024-html" / "html" / f"{name}.htm" for name in ARTICLES_HELD2),
    REPO / "evalsets" / "articles-held2-calibration.jsonl",
)
ARTICLES_HELD3 = (
    "23_0220", "23_0237", "23_0244", "23_0267", "23_0282", "23_0286", "23_0288", "23_0352",
    "23_0415", "24_0003", "24_0046", "24_0059", "24_0077", "24_0113", "24_0142", "24_0173",
)  # fmt: skip
"""The CDC PCD 2024 articles of the third held-out set, `articles-held3` (none of them in
`examples/corpus`, ARTICLE_FILES, ARTICLES_HELD or ARTICLES_HELD2)."""
ARTICLES_HELD3_CORPUS = Corpus(
    "articles-held3",
    tuple(DATA / "cdc-pcd-2024-html" / "html" / f"{name}.htm" for name in ARTICLES_HELD3),
    REPO / "evalsets" / "articles-held3-calibration.jsonl",
)
ARTICLES_HELD4 = (
    "23_0291", "23_0307", "23_0325", "23_0347", "23_0358", "23_0413", "23_0417", "23_0449",
    "24_0009", "24_0035", "24_0049", "24_0058", "24_0060", "24_0074", "24_0082", "24_0121",
)  # fmt: skip
"""The CDC PCD 2024 articles of the fourth held-out set, `articles-held4` (none of them in
`examples/corpus` or an earlier articles set)."""
ARTICLES_HELD4_CORPUS = Corpus(
    "articles-held4",
    tuple(DATA / "cdc-pcd-2024-html" / "html" / f"{name}.htm" for name in ARTICLES_HELD4),
    REPO / "evalsets" / "articles-held4-calibration.jsonl",
)

ARTICLES_HELD5 = (
    "23_0200", "23_0248", "23_0311", "24_0051", "24_0110", "24_0138", "24_0143", "24_0165",
    "24_0183", "24_0229", "24_0245", "24_0264", "24_0312", "24_0344", "24_0396", "24_0503",
)  # fmt: skip
"""The CDC PCD 2024 pages of the fifth held-out set, `articles-held5`: those left after
the earlier articles sets and `examples/corpus`, less an erratum (`23_0277e`) and the
last of the list (`24_0504`)."""
ARTICLES_HELD5_CORPUS = Corpus(
    "articles-held5",
    tuple(DATA / "cdc-pcd-2024-html" / "html" / f"{name}.htm" for name in ARTICLES_HELD5),
    REPO / "evalsets" / "articles-held5-calibration.jsonl",
)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of `path`, one per non-blank line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


SETS: dict[str, tuple[Corpus, str]] = {
    "demo-answers": (DEMO, "demo-answers.jsonl"),
    "medquad": (DEMO, "demo.jsonl"),
    "nurse": (LABELS, "nurse.jsonl"),
    "labels": (LABELS, "labels.jsonl"),
    "articles": (ARTICLES, "articles.jsonl"),
    "articles-held": (ARTICLES_HELD_CORPUS, "articles-held.jsonl"),
    "articles-held2": (ARTICLES_HELD2_CORPUS, "articles-held2.jsonl"),
    "articles-held3": (ARTICLES_HELD3_CORPUS, "articles-held3.jsonl"),
    "articles-held4": (ARTICLES_HELD4_CORPUS, "articles-held4.jsonl"),
    "articles-held5": (ARTICLES_HELD5_CORPUS, "articles-held5.jsonl"),
}
"""Each set's corpus and its file under evalsets/."""


def load_set(name: str) -> QuestionSet:
    """The set `name` of SETS (of demo.jsonl, `medquad` keeps the MedQuAD questions and
    the unanswerable probes)."""
    corpus, file_name = SETS[name]
    items = read_jsonl(REPO / "evalsets" / file_name)
    if name == "medquad":
        items = [i for i in items if i["id"].startswith("demo-medquad") or not i["answerable"]]
    return QuestionSet(name, corpus, tuple(items))


def words(text: str) -> list[str]:
    """The lower-cased words of `text`."""
    return [w.lower() for w in _WORD.findall(text)]


def held_share(human: str, shown: Sequence[str]) -> float:
    """The share (0-1) of the words of `human` (counted with repeats) that occur in
    the `shown` texts; 1.0 for a human answer with no word."""
    wanted = words(human)
    if not wanted:
        return 1.0
    present = {w for text in shown for w in words(text)}
    return sum(w in present for w in wanted) / len(wanted)


def human_answers(item: dict[str, Any]) -> list[str]:
    """The human answers of an evalset item: `gold_answer` and `gold_quotes`."""
    answers = [item["gold_answer"]] if item.get("gold_answer") else []
    return answers + [q for q in item.get("gold_quotes", []) if q not in answers]


def best_share(item: dict[str, Any], shown: Sequence[str]) -> float:
    """The best `held_share` among the item's human answers (0 when it has none)."""
    return max((held_share(answer, shown) for answer in human_answers(item)), default=0.0)


def _near_duplicate(a: str, b: str) -> bool:
    """True when `a` and `b` are the same, one holds the other, or they are the same
    words but for one (a word changed, added or dropped)."""
    if a in b or b in a:
        return True
    wa, wb = words(a), words(b)
    if abs(len(wa) - len(wb)) > 1 or min(len(wa), len(wb)) < 4:
        return False
    head = next((i for i, (x, y) in enumerate(zip(wa, wb, strict=False)) if x != y), None)
    if head is None:
        return True
    tail = 0
    while tail < min(len(wa), len(wb)) - head and wa[-1 - tail] == wb[-1 - tail]:
        tail += 1
    return max(len(wa), len(wb)) - head - tail <= 1


def repeated_quotes(texts: Sequence[str]) -> int:
    """How many of `texts` repeat an earlier one (see `_near_duplicate`)."""
    return sum(
        any(_near_duplicate(texts[i], texts[j]) for j in range(i)) for i in range(len(texts))
    )


def starts_inside_word(document_text: str, start: int) -> bool:
    """True when a quote from `start` begins in the middle of a word of the document."""
    return 0 < start < len(document_text) and (
        document_text[start - 1].isalnum() and document_text[start].isalnum()
    )


@dataclass
class Tally:
    """Per-question results of one set under one threshold."""

    shares: list[float] = field(default_factory=list)
    shown_words: list[int] = field(default_factory=list)
    refused_answerable: int = 0
    unanswerable: int = 0
    refused_unanswerable: int = 0
    chunk_shares: dict[int, list[float]] = field(default_factory=dict)
    chunk_words: dict[int, list[int]] = field(default_factory=dict)
    failed_verify: int = 0
    repeats: int = 0
    colon_stops: int = 0
    inside_word: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)


def _quote_problems(index: Index, quotes: Sequence[Quote]) -> tuple[int, int, int]:
    """(repeats, quotes ending at a colon, quotes starting inside a word) of `quotes`."""
    texts = [q.text for q in quotes]
    inside = 0
    for quote in quotes:
        document = index.store.get_document(quote.doc_id, quote.doc_version)
        inside += document is not None and starts_inside_word(document.text, quote.start)
    colon = sum(text.rstrip().endswith(":") for text in texts)
    return repeated_quotes(texts), colon, inside


def ask_set(index: Index, qset: QuestionSet, tally: Tally, backend: Backend | None = None) -> None:
    """Ask every question of `qset` in quote mode with `backend` (None: the no-model
    backend) and add to `tally`."""
    for item in qset.items:
        answer: Answer = index.ask(item["question"], backend=backend, faithfulness="deterministic")
        quotes = list(answer.quotes)
        texts = [q.text for q in quotes]
        refused = answer.status == "refused"
        failures = sum(not check.valid for check in index.verify(answer))
        tally.failed_verify += failures
        repeats, colon, inside = _quote_problems(index, quotes)
        tally.repeats += repeats
        tally.colon_stops += colon
        tally.inside_word += inside
        row: dict[str, Any] = {"id": item["id"], "refused": refused, "quotes": texts}
        if not item["answerable"]:
            tally.unanswerable += 1
            tally.refused_unanswerable += refused
            tally.rows.append(row)
            continue
        share = 0.0 if refused else best_share(item, texts)
        tally.shares.append(share)
        tally.shown_words.append(0 if refused else sum(len(words(t)) for t in texts))
        tally.refused_answerable += refused
        hits = index.search(item["question"], top_k=max(TOP_K))
        for k in TOP_K:
            chunks = [hit.chunk.text for hit in hits[:k]]
            tally.chunk_shares.setdefault(k, []).append(best_share(item, chunks))
            tally.chunk_words.setdefault(k, []).append(sum(len(words(t)) for t in chunks))
        row.update(share=round(share, 3), top3=round(tally.chunk_shares[3][-1], 3))
        tally.rows.append(row)


def _held(shares: Sequence[float]) -> float:
    return sum(s >= HOLD for s in shares) / len(shares) if shares else 0.0


def _median(values: Sequence[int]) -> float:
    return float(statistics.median(values)) if values else 0.0


def report(out: Figures, label: str, tally: Tally, shown: str = "answer (no model)") -> None:
    """Add the figures of one set under one threshold to `out` and print its table
    (`shown`: what answered)."""
    n = len(tally.shares)
    held = _held(tally.shares)
    top = {k: _held(tally.chunk_shares.get(k, [])) for k in TOP_K}
    refused = tally.refused_answerable / n if n else 0.0
    words_shown = _median(tally.shown_words)
    print(f"\n{label}: {n} answerable, {tally.unanswerable} unanswerable")
    print(f"  {'shown':<26}{'holds':>8}{'median words':>14}")
    print(f"  {shown:<26}{100 * held:>7.1f}%{words_shown:>14.0f}")
    for k in TOP_K:
        median_k = _median(tally.chunk_words.get(k, []))
        print(f"  {f'top-{k} chunks, whole':<26}{100 * top[k]:>7.1f}%{median_k:>14.0f}")
    print(f"  answerable refused: {100 * refused:.1f}%", end="")
    if tally.unanswerable:
        share = tally.refused_unanswerable / tally.unanswerable
        print(f"   unanswerable refused: {100 * share:.1f}%", end="")
    print(
        f"\n  quotes failing verify: {tally.failed_verify}   repeated quotes: {tally.repeats}"
        f"   stopping at a colon: {tally.colon_stops}   starting inside a word: "
        f"{tally.inside_word}"
    )
    out.add(f"{label}: answer holds %", 100 * held, "%", "top-3 chunks whole", 100 * top[3])
    out.add(f"{label}: top-1 chunk holds %", 100 * top[1], "%")
    out.add(f"{label}: top-5 chunks hold %", 100 * top[5], "%")
    out.add(f"{label}: median words shown", words_shown, "words", "top-3 chunks whole",
            _median(tally.chunk_words.get(3, [])))  # fmt: skip
    out.add(f"{label}: answerable refused %", 100 * refused, "%")
    if tally.unanswerable:
        out.add(f"{label}: unanswerable refused %",
                100 * tally.refused_unanswerable / tally.unanswerable, "%")  # fmt: skip
    out.target(f"{label}: no quote fails verify", tally.failed_verify == 0)
    out.target(f"{label}: answer holds >= top-3 chunks", held >= top[3])
    out.target(f"{label}: answer holds >= {100 * HOLD_TARGET:.0f}%", held >= HOLD_TARGET)
    out.target(f"{label}: median words <= {WORDS_TARGET}", words_shown <= WORDS_TARGET)
    out.target(f"{label}: answerable refused <= {100 * REFUSED_TARGET:.0f}%",
               refused <= REFUSED_TARGET)  # fmt: skip
    out.target(f"{label}: no repeated quote", tally.repeats == 0)
    out.target(f"{label}: no quote stops at a colon", tally.colon_stops == 0)
    out.target(f"{label}: no quote starts inside a word", tally.inside_word == 0)


def build_index(corpus: Corpus, root: Path, embed: bool) -> Path:
    """Ingest `corpus` into a new index under `root` with `quoteproof ingest`."""
    path = root / f"index-{corpus.name}"
    command = [sys.executable, "-m", "quoteproof", "ingest", *map(str, corpus.paths),
               "--index", str(path)]  # fmt: skip
    if not embed:
        command.append("--no-embed")
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return path


def calibrate(index_path: Path, calibration: Path) -> None:
    """Calibrate the index with the `calibration` file (`quoteproof calibrate`)."""
    command = [sys.executable, "-m", "quoteproof", "calibrate", str(calibration),
               "--index", str(index_path)]  # fmt: skip
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS),
                        help="comma-separated set names (default: all)")  # fmt: skip
    parser.add_argument("--no-embed", action="store_true", help="BM25 only (no vectors)")
    parser.add_argument("--per-question", type=Path, help="write per-question rows (JSON)")
    parser.add_argument("--llm", choices=("local",),
                        help="also answer in quote mode with this model (local: the bundled "
                        "SmolLM2), automatic threshold only")  # fmt: skip
    add_json_option(parser)
    args = parser.parse_args()
    unknown = [name for name in args.sets.split(",") if name not in SETS]
    if unknown:
        parser.error(f"unknown set(s): {', '.join(unknown)} (known: {', '.join(SETS)})")
    chosen = [load_set(name) for name in args.sets.split(",")]
    out = Figures("answers")
    rows: dict[str, Any] = {}
    model = LocalBackend() if args.llm == "local" else None
    with tempfile.TemporaryDirectory(prefix="qp-answers-") as tmp:
        for corpus in dict.fromkeys(s.corpus for s in chosen):
            index_path = build_index(corpus, Path(tmp), not args.no_embed)
            sets = [s for s in chosen if s.corpus == corpus]
            for calibrated in (False, True):
                if calibrated:
                    if corpus.calibration is None:
                        line = f"{corpus.name}: no calibration file, calibrated pass skipped"
                        print(f"\n{line}")
                        out.note(line)
                        continue
                    calibrate(index_path, corpus.calibration)
                with Index.open(str(index_path)) as index:
                    for qset in sets:
                        label = f"{qset.name} ({'calibrated' if calibrated else 'automatic'})"
                        tally = Tally()
                        ask_set(index, qset, tally)
                        report(out, label, tally)
                        rows[label] = tally.rows
                        if model is not None and not calibrated:
                            label = f"{qset.name} (automatic, {args.llm} model)"
                            tally = Tally()
                            ask_set(index, qset, tally, model)
                            report(out, label, tally, f"answer ({args.llm} model)")
                            rows[label] = tally.rows
    if args.per_question:
        args.per_question.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    out.data = {"hold": HOLD}
    out.write(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
