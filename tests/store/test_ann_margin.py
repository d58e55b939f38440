"""The rule that passes or fails a search breadth of the vector index file
(`ann._passes`): a breadth passes only once its sample's mean recall@10 lies
`MARGIN_ERRORS` standard errors above `TARGET_RECALL`, so a sample whose mean is
above the target by less than that margin asks more questions, and fails when all
of them leave it undecided.

The index searched is a stand-in that gives each question a set recall, so that
the sample's mean and spread are known exactly (real graphs' recall by breadth is
tested in test_vector_index.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from quoteproof.store import ann

MISSES = 10**9
"""Keys from here on are no question's nearest."""


class SetRecall:
    """A stand-in for the usearch index that `_passes` searches: question `q` (its
    first coordinate) finds the first `round(10 * recalls[q])` of its exact nearest
    keys (`nearest(q)`), then keys that are nobody's nearest. `asked` counts the
    questions searched."""

    def __init__(self, recalls: np.ndarray) -> None:
        self.recalls = recalls
        self.asked = 0
        self.expansion_search = 0

    def search(self, asked: np.ndarray, count: int) -> SimpleNamespace:
        """usearch's batch answer: `keys` (one row of `count` per question), `counts`."""
        rows = []
        for question in asked[:, 0].astype(int):
            hits = nearest(question)[: round(10 * self.recalls[question])]
            misses = [MISSES + count * question + k for k in range(count - len(hits))]
            rows.append(hits + misses)
        self.asked += len(asked)
        return SimpleNamespace(keys=np.asarray(rows, dtype=np.uint64), counts=[count] * len(rows))


def nearest(question: int) -> list[int]:
    """The exact 10 nearest keys of question `question`."""
    return list(range(10 * question, 10 * question + 10))


def passes(pattern: list[float]) -> tuple[bool, int]:
    """Whether `_passes` passes a breadth at which the `ann.SAMPLES` questions have
    the recalls `pattern` repeated (so every look's sample has the same mean), and
    how many questions it asked."""
    recalls = np.resize(np.asarray(pattern), ann.SAMPLES)
    index = SetRecall(recalls)
    asked = np.arange(ann.SAMPLES, dtype=np.float32).reshape(-1, 1)
    passed = ann._passes(
        index, asked, lambda count: [nearest(q) for q in range(count)], ann.BREADTHS[0]
    )
    return passed, index.asked


def margin_at(pattern: list[float], count: int) -> tuple[float, float]:
    """The mean recall of `pattern` repeated over `count` questions, and the margin
    (`MARGIN_ERRORS` standard errors) the rule asks of it."""
    recall, error = ann._estimate(np.resize(np.asarray(pattern), count).tolist())
    return recall, ann.MARGIN_ERRORS * error


def test_a_breadth_clearly_above_the_target_passes_at_the_first_look() -> None:
    assert passes([1.0]) == (True, ann._FIRST)


def test_a_breadth_clearly_below_the_target_fails_at_the_first_look() -> None:
    assert passes([0.8]) == (False, ann._FIRST)


def test_a_mean_above_the_target_by_less_than_the_margin_asks_more_questions() -> None:
    near = [1.0] * 10 + [0.9] * 6  # mean 0.9625
    recall, margin = margin_at(near, ann._FIRST)
    assert ann.TARGET_RECALL < recall < ann.TARGET_RECALL + margin
    passed, asked = passes(near)
    # not passed on the first questions; more of them narrow the error and pass it
    assert passed
    assert asked > ann._FIRST
    recall, margin = margin_at(near, asked)
    assert recall - margin >= ann.TARGET_RECALL


def test_a_mean_above_the_target_within_the_margin_of_all_questions_fails() -> None:
    barely = [1.0] * 33 + [0.9] * 31  # mean 0.9516
    recall, margin = margin_at(barely, ann.SAMPLES)
    assert ann.TARGET_RECALL < recall < ann.TARGET_RECALL + margin
    assert passes(barely) == (False, ann.SAMPLES)
