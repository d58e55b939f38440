"""Refusal evidence: how well the best retrieved passage matches a question, and the
calibrated threshold below which `ask` refuses without calling a model.

The evidence depends on the retrieval in use, so a threshold is stored with the
kind of evidence it was calibrated on and applied only to that kind:

- `rerank:MODEL`: the cross-encoder score of the best reranked passage;
- `cosine:MODEL`: the highest cosine similarity between question and a passage;
- `cosine+sentence:MODEL`: what `ask` judges dense retrieval on: the mean of
  `cosine:MODEL` and the highest cosine similarity between the question and one
  quotable unit (a sentence, short paragraph, list or table row) of the passages an
  answer is drawn from (`with_sentence_evidence`). A question that one sentence of
  a long chunk answers scores as it should although the rest of the chunk dominates
  the chunk's vector, and neither score alone decides;
- `bm25-coverage`: the share of the question's content words (crudely stemmed) that
  the top BM25 passage contains.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

from quoteproof.errors import StoreError, UsageError
from quoteproof.model import Hit, RetrievalInfo, ThresholdSource
from quoteproof.store.base import Store
from quoteproof.terms import query_stems, stems

BM25_COVERAGE = "bm25-coverage"
COSINE = "cosine"
WITH_SENTENCES = "cosine+sentence"
THRESHOLD_SETTING = "refusal_threshold"
AUTOMATIC_SETTING = "refusal_threshold_automatic"
CALIBRATED: ThresholdSource = "calibrated"
FALSE_REFUSAL_COST = 10
"""How many answered unanswerable questions one refused answerable question is worth
when a calibration chooses its threshold: a threshold lifted over the look-alikes of
a calibration set refuses the answerable questions of its users that score as they
do, so a calibration refuses a labelled answerable question only to stop ten
unanswerable ones."""
CALIBRATION_MARGIN = 0.05
"""How far below every answerable question it answers a calibrated threshold stays.
A calibration file's answerable questions are a few of those its users will ask, and
their lowest score is no floor: a threshold in the middle of a narrow gap just under
it refuses the users' questions that score a little lower. Measured when it was
added, on the `articles` corpus: its calibration file's lowest answerable question
scored 0.612 and a look-alike 0.563, and the threshold at 0.588 refused 4 of the 48
answerable questions of `evalsets/articles.jsonl`, the automatic threshold none."""
AUTOMATIC: ThresholdSource = "automatic"


def with_sentence_evidence(info: RetrievalInfo, best_unit: float) -> RetrievalInfo:
    """Return `info` judged with its sources' best unit: for `cosine:MODEL` evidence,
    the mean of the passage cosine and `best_unit` (the highest cosine between the
    question and one quotable unit of the sources), of kind `cosine+sentence:MODEL`;
    any other evidence unchanged."""
    kind, _, model = (info.evidence_kind or "").partition(":")
    if kind != COSINE or info.evidence is None:
        return info
    return replace(
        info, evidence=(info.evidence + best_unit) / 2, evidence_kind=f"{WITH_SENTENCES}:{model}"
    )


def term_coverage(question: str, hits: Sequence[Hit]) -> float:
    """Return the share (0-1) of the question's content words found in the top hit."""
    terms = query_stems(question)
    if not hits or not terms:
        return 0.0
    present = stems(hits[0].chunk.text + " " + hits[0].chunk.label)
    return len(terms & present) / len(terms)


@dataclass(frozen=True)
class Calibration:
    """A refusal threshold and how it was derived.

    Questions with evidence below `threshold` are refused. The counts say how the
    threshold did on the labelled questions it was derived from. `source` is
    `calibrated` (the user's labelled questions, `quoteproof calibrate`) or
    `automatic` (off-topic probes, see `auto_threshold`); an automatic one holds the
    `fingerprint` of the documents it was estimated on.
    """

    evidence_kind: str
    threshold: float
    answerable: int
    unanswerable: int
    false_refusals: int
    missed_refusals: int
    source: ThresholdSource = CALIBRATED
    fingerprint: str = ""

    @property
    def accuracy(self) -> float:
        """Share of the labelled questions the threshold classified correctly."""
        total = self.answerable + self.unanswerable
        wrong = self.false_refusals + self.missed_refusals
        return (total - wrong) / total if total else 0.0


def choose_threshold(
    evidence_kind: str, answerable: Sequence[float], unanswerable: Sequence[float]
) -> Calibration:
    """Return the threshold that best separates answerable from unanswerable questions.

    An answerable question counts as refused by a threshold it passes by less than
    CALIBRATION_MARGIN: the threshold keeps that margin below the answerable
    questions it answers, as the automatic one keeps a margin above its off-topic
    probes. Candidates are the midpoints between consecutive distinct scores (the
    answerable ones less the margin) and points just outside their range; the one
    with the lowest cost wins, a refused answerable question costing
    FALSE_REFUSAL_COST and an answered unanswerable one 1, and among equals the one
    that refuses fewest answerable questions, and of those the middle one, so the
    threshold sits centred in the gap. The returned counts are those of the threshold
    itself, without the margin. Refusing what
    the documents answer costs more because a threshold can only screen questions
    off the documents' topic: a look-alike (the documents' own terms, asking what
    they do not say) scores as high as an answerable question, and lifting the
    threshold to refuse it refuses answerable ones with it.
    Raises `UsageError` unless both groups have at least one question.
    """
    if not answerable or not unanswerable:
        raise UsageError("calibration needs at least one answerable and one unanswerable question")
    kept_below = [score - CALIBRATION_MARGIN for score in answerable]
    values = sorted(set(kept_below) | set(unanswerable))
    candidates = [values[0] - 1e-6]
    candidates += [(a + b) / 2 for a, b in itertools.pairwise(values)]
    candidates.append(values[-1] + 1e-6)

    def errors(threshold: float, answered: Sequence[float] = kept_below) -> tuple[int, int]:
        false = sum(score < threshold for score in answered)
        missed = sum(score >= threshold for score in unanswerable)
        return false, missed

    def cost(threshold: float) -> int:
        false, missed = errors(threshold)
        return FALSE_REFUSAL_COST * false + missed

    lowest = min(cost(t) for t in candidates)
    fewest = min(errors(t)[0] for t in candidates if cost(t) == lowest)
    best = [t for t in candidates if cost(t) == lowest and errors(t)[0] == fewest]
    threshold = best[len(best) // 2]
    false, missed = errors(threshold, answerable)
    return Calibration(evidence_kind, threshold, len(answerable), len(unanswerable), false, missed)


def _setting(source: ThresholdSource) -> str:
    return AUTOMATIC_SETTING if source == AUTOMATIC else THRESHOLD_SETTING


def save_calibration(store: Store, calibration: Calibration) -> None:
    """Store `calibration` in the index, replacing any earlier one of the same source
    (a calibrated and an automatic threshold are kept apart)."""
    store.put_setting(_setting(calibration.source), json.dumps(asdict(calibration)))


def load_calibration(store: Store, source: ThresholdSource = CALIBRATED) -> Calibration | None:
    """Return the index's threshold of `source`, or None when there is none.

    Raises StoreError when the stored value is unreadable.
    """
    stored = store.get_setting(_setting(source))
    if stored is None:
        return None
    try:
        return Calibration(**json.loads(stored))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"index {store.location}: unreadable refusal threshold: {exc}") from exc
