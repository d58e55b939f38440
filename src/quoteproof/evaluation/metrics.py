"""Scoring an evaluation run: pure functions over plain values (no index, no I/O).

The runner (`evaluation.runner`) reads what these need from the index; everything
here can be checked by hand. Definitions:

- **verbatim rate**: quotes whose text equals the stored document text at their
  offsets / quotes checked (`answer.quotes` and `answer.cited`). Must be 1.
- **quote precision / recall** (items with gold quotes, micro-averaged): spans are
  compared as sets of characters of documents. Shown characters are the union of
  the shown quotes' spans; a shown character is correct when it lies in some
  occurrence of some gold quote (precision = correct / shown). For recall each gold
  quote counts once, with the occurrence the shown spans cover best: recall =
  covered gold characters / gold characters; a gold quote found nowhere counts its
  whitespace-normalised length, uncovered.
- **citation accuracy** (items with gold quotes): distinct cited refs (prose
  citations and quote refs) whose chunk overlaps an occurrence of a gold quote /
  distinct cited refs. A ref whose chunk is unknown counts as wrong.
- **refusal**: refused unanswerable / unanswerable items (should be 1); refused
  answerable / answerable items (false refusals, should be 0).
- **retrieval recall@k** (items with gold refs, macro-averaged): gold refs that
  some hit among the first k matches / gold refs. A hit matches a gold ref when
  its source path ends with the ref at a path boundary.
- **faithfulness** (answers with a faithfulness score): the mean of the answers'
  `faithfulness.score` (the share of an answer's generated sentences, removed ones
  included, that the passages they cite support, `quoteproof.faithfulness`), over
  the run and per answer mode. An answer without a score (it shows and removed no
  generated sentence: quotes only, a refusal) is left out.
- **latency**: p50 and p95 with linear interpolation between closest ranks.

Items whose ask failed (`error`) are counted apart and left out of every rate.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "DocKey",
    "GoldQuote",
    "ItemScores",
    "ModeFaithfulness",
    "QuoteOverlap",
    "RunMetrics",
    "Span",
    "citation_counts",
    "faithfulness_by_mode",
    "gold_ranks",
    "locate",
    "merge_spans",
    "normalize_whitespace",
    "overlap_chars",
    "percentile",
    "quote_overlap",
    "ratio",
    "recall_at_k",
    "ref_matches",
    "summarize",
]

DocKey = tuple[str, int]
"""A stored document version: `(doc_id, version)`."""

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, order=True)
class Span:
    """Characters `[start, end)` of the canonical text of document version `doc`."""

    doc: DocKey
    start: int
    end: int

    def __len__(self) -> int:
        return max(0, self.end - self.start)


@dataclass(frozen=True)
class GoldQuote:
    """A gold quote and where it was found (`occurrences`, possibly none).
    `length` is its whitespace-normalised length, used when it was found nowhere."""

    length: int
    occurrences: tuple[Span, ...] = ()


def normalize_whitespace(text: str) -> tuple[str, list[int]]:
    """Return `text` with each run of whitespace turned into one space (and leading and
    trailing whitespace dropped), and for each character of the result its offset in
    `text`. O(len(text))."""
    out: list[str] = []
    offsets: list[int] = []
    for match in re.finditer(r"\S+", text):
        if out:
            out.append(" ")
            offsets.append(match.start() - 1)
        out.append(match.group())
        offsets.extend(range(match.start(), match.end()))
    return "".join(out), offsets


def _find_all(text: str, needle: str) -> list[int]:
    found = []
    at = text.find(needle)
    while at >= 0:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def locate(text: str, needle: str) -> list[tuple[int, int]]:
    """Return every `(start, end)` at which `needle` occurs in `text`: exact
    occurrences, or when there are none, occurrences after whitespace runs in both
    are collapsed (mapped back to offsets of `text`; the span runs from the first to
    the last non-space character matched). Empty `needle`: no occurrences.
    O(len(text) * len(needle)) at worst (str.find)."""
    if not needle.strip():
        return []
    exact = _find_all(text, needle)
    if exact:
        return [(at, at + len(needle)) for at in exact]
    flat, offsets = normalize_whitespace(text)
    wanted = _SPACE.sub(" ", needle).strip()
    return [(offsets[at], offsets[at + len(wanted) - 1] + 1) for at in _find_all(flat, wanted)]


def ref_matches(source_path: str, gold_ref: str) -> bool:
    """Whether `source_path` ends with `gold_ref` at a path boundary
    (`/c/fda/label.pdf` matches `fda/label.pdf` and `label.pdf`, not `bel.pdf`);
    backslashes count as slashes."""
    path = source_path.replace("\\", "/")
    ref = gold_ref.replace("\\", "/").lstrip("/")
    return bool(ref) and (path == ref or path.endswith("/" + ref))


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    """Return the union of `spans` as sorted, disjoint, non-adjacent spans (empty
    ones dropped). O(n log n)."""
    merged: list[Span] = []
    for span in sorted(s for s in spans if s.end > s.start):
        last = merged[-1] if merged else None
        if last is not None and last.doc == span.doc and span.start <= last.end:
            merged[-1] = Span(last.doc, last.start, max(last.end, span.end))
        else:
            merged.append(span)
    return merged


def overlap_chars(a: Iterable[Span], b: Iterable[Span]) -> int:
    """Return how many characters lie in both the union of `a` and the union of `b`.
    O((n + m) log(n + m))."""
    by_doc: dict[DocKey, list[Span]] = defaultdict(list)
    for span in merge_spans(b):
        by_doc[span.doc].append(span)
    total = 0
    for span in merge_spans(a):
        for other in by_doc.get(span.doc, ()):
            total += max(0, min(span.end, other.end) - max(span.start, other.start))
    return total


@dataclass(frozen=True)
class QuoteOverlap:
    """Character counts of one item's shown quotes against its gold quotes.

    `shown_chars`: characters in the union of shown spans; `overlap_chars`: those in
    an occurrence of a gold quote; `gold_chars`: summed over gold quotes (best
    occurrence, or normalised length when not found); `covered_chars`: gold
    characters the shown spans cover; `unlocated`: gold quotes found nowhere.
    """

    shown_chars: int
    overlap_chars: int
    gold_chars: int
    covered_chars: int
    unlocated: int = 0

    @property
    def precision(self) -> float | None:
        return ratio(self.overlap_chars, self.shown_chars)

    @property
    def recall(self) -> float | None:
        return ratio(self.covered_chars, self.gold_chars)


def quote_overlap(shown: Sequence[Span], gold: Sequence[GoldQuote]) -> QuoteOverlap:
    """Score the spans shown for one item against its gold quotes (see the module
    docstring). O((n + m) log(n + m)) per gold occurrence."""
    shown_union = merge_spans(shown)
    all_gold = [span for quote in gold for span in quote.occurrences]
    gold_chars = covered = unlocated = 0
    for quote in gold:
        if not quote.occurrences:
            unlocated += 1
            gold_chars += quote.length
            continue
        best = max(quote.occurrences, key=lambda span: overlap_chars([span], shown_union))
        gold_chars += len(best)
        covered += overlap_chars([best], shown_union)
    return QuoteOverlap(
        shown_chars=sum(len(span) for span in shown_union),
        overlap_chars=overlap_chars(shown_union, all_gold),
        gold_chars=gold_chars,
        covered_chars=covered,
        unlocated=unlocated,
    )


def citation_counts(ref_spans: Mapping[str, Span | None], gold: Iterable[Span]) -> tuple[int, int]:
    """Return `(correct, total)` over the cited refs: `ref_spans` maps each distinct
    cited ref to its chunk's span (None: unknown chunk, counted wrong); a ref is
    correct when its chunk overlaps a gold span."""
    gold_spans = list(gold)
    correct = sum(
        1 for span in ref_spans.values() if span is not None and overlap_chars([span], gold_spans)
    )
    return correct, len(ref_spans)


def gold_ranks(hit_paths: Sequence[str], gold_refs: Iterable[str]) -> dict[str, int | None]:
    """For each gold ref, the rank (1-based) of the first hit whose source path matches
    it (`ref_matches`), or None when no hit does."""
    ranks: dict[str, int | None] = {}
    for ref in gold_refs:
        ranks[ref] = next(
            (rank for rank, path in enumerate(hit_paths, start=1) if ref_matches(path, ref)),
            None,
        )
    return ranks


def recall_at_k(ranks: Mapping[str, int | None], k: int) -> float | None:
    """Share of gold refs ranked within the first `k` hits (None without gold refs)."""
    found = sum(1 for rank in ranks.values() if rank is not None and rank <= k)
    return ratio(found, len(ranks))


def ratio(part: float, whole: float) -> float | None:
    """`part / whole`, or None when `whole` is 0."""
    return part / whole if whole else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The `q`-th percentile (0-100) of `values` with linear interpolation between the
    closest ranks (numpy's default); None for no values. O(n log n)."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class ItemScores:
    """What one item contributes to the run's metrics.

    `overlap` and `citations` (`(correct, total)`) are set for items with gold
    quotes, `ranks` (gold ref -> rank) for items with gold refs; `usage` is
    `(prompt, completion)` tokens when the model server reported them. `mode` is
    the answer's mode and `faithfulness` its faithfulness score (None: no answer, or
    one that makes no claim of its own).
    """

    answerable: bool
    refused: bool = False
    error: bool = False
    quotes_checked: int = 0
    not_verbatim: int = 0
    overlap: QuoteOverlap | None = None
    citations: tuple[int, int] | None = None
    ranks: Mapping[str, int | None] | None = None
    latency_ms: float | None = None
    usage: tuple[int, int] | None = None
    mode: str | None = None
    faithfulness: float | None = None


@dataclass(frozen=True)
class ModeFaithfulness:
    """The faithfulness of one answer mode's answers in a run: how many answers it
    gave (`answers`), how many had a score (`scored`) and their mean (None: none)."""

    answers: int
    scored: int
    mean: float | None


@dataclass(frozen=True)
class RunMetrics:
    """The metrics of one run (see the module docstring); None where nothing was
    there to measure (no quotes, no gold quotes, no unanswerable items...)."""

    items: int
    answerable: int
    unanswerable: int
    errors: int
    quotes_checked: int
    not_verbatim: int
    verbatim_rate: float | None
    quote_precision: float | None
    quote_recall: float | None
    citation_accuracy: float | None
    refusal_correct: float | None
    false_refusal_rate: float | None
    retrieval_recall: dict[int, float | None] = field(default_factory=dict)
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    faithfulness: float | None = None
    faithfulness_by_mode: dict[str, ModeFaithfulness] = field(default_factory=dict)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(scores: Sequence[ItemScores], ks: Sequence[int]) -> RunMetrics:
    """Combine per-item scores into the run's metrics; `ks` are the retrieval depths
    to report recall at. O(n log n)."""
    ok = [s for s in scores if not s.error]
    answerable = [s for s in ok if s.answerable]
    unanswerable = [s for s in ok if not s.answerable]
    overlaps = [s.overlap for s in ok if s.overlap is not None]
    citations = [s.citations for s in ok if s.citations is not None]
    ranked = [s.ranks for s in ok if s.ranks]
    checked = sum(s.quotes_checked for s in scores)
    not_verbatim = sum(s.not_verbatim for s in scores)
    latencies = [s.latency_ms for s in ok if s.latency_ms is not None]
    usages = [s.usage for s in scores if s.usage is not None]
    scored = [s.faithfulness for s in ok if s.faithfulness is not None]
    recall: dict[int, float | None] = {}
    for k in sorted(set(ks)):
        recall[k] = _mean([r for ranks in ranked if (r := recall_at_k(ranks, k)) is not None])
    return RunMetrics(
        items=len(scores),
        answerable=sum(s.answerable for s in scores),
        unanswerable=sum(not s.answerable for s in scores),
        errors=len(scores) - len(ok),
        quotes_checked=checked,
        not_verbatim=not_verbatim,
        verbatim_rate=ratio(checked - not_verbatim, checked),
        quote_precision=ratio(
            sum(o.overlap_chars for o in overlaps), sum(o.shown_chars for o in overlaps)
        ),
        quote_recall=ratio(
            sum(o.covered_chars for o in overlaps), sum(o.gold_chars for o in overlaps)
        ),
        citation_accuracy=ratio(sum(c[0] for c in citations), sum(c[1] for c in citations)),
        refusal_correct=ratio(sum(s.refused for s in unanswerable), len(unanswerable)),
        false_refusal_rate=ratio(sum(s.refused for s in answerable), len(answerable)),
        retrieval_recall=recall,
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
        prompt_tokens=sum(u[0] for u in usages) if usages else None,
        completion_tokens=sum(u[1] for u in usages) if usages else None,
        faithfulness=_mean(scored),
        faithfulness_by_mode=faithfulness_by_mode(ok),
    )


def faithfulness_by_mode(scores: Sequence[ItemScores]) -> dict[str, ModeFaithfulness]:
    """The faithfulness of each answer mode among `scores` (those with a mode), by
    mode name in alphabetical order. O(n)."""
    by_mode: dict[str, list[ItemScores]] = defaultdict(list)
    for s in scores:
        if s.mode is not None:
            by_mode[s.mode].append(s)
    found = {}
    for mode in sorted(by_mode):
        values = [s.faithfulness for s in by_mode[mode] if s.faithfulness is not None]
        found[mode] = ModeFaithfulness(len(by_mode[mode]), len(values), _mean(values))
    return found
