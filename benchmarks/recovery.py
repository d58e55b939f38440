"""Quote recovery: approximate quotes resolved to the source span, three matchers side by side.

Cases: `evalsets/recovery.jsonl` (format in evalsets/README.md), real passages of the
FDA Veklury label and the CDC outpatient guide after realistic edits (typos,
punctuation, dropped words, ellipses, ...), plus quotes whose words are absent from
the source (`expect: "none"`). The two PDFs are ingested into a temporary index
(no embeddings); each case is given the chunk whose span covers its `start` and
that chunk's neighbours (`store.neighbours`), as `ask` would give them. Matchers:

- quoteproof: `resolve_output` of the one quote with a `StoreLookup`, the path `ask`
  takes (threshold 90): a quote over a chunk boundary resolves in the cited chunk
  joined with its neighbour, and of a quote with an invented sentence the part found
  is shown (the span scored);
- difflib: a sliding window of the quote's word count over each candidate chunk, in
  word steps, best `difflib.SequenceMatcher(None, quote, window).ratio()`, accepted
  at >= 0.9 (see `difflib_match`);
- rapidfuzz: plain `fuzz.partial_ratio_alignment(quote, chunk.text)` over the
  candidates, best score, accepted at >= 90.

Per matcher: accuracy (share of `span` cases resolved to a span of character IoU >=
0.9 with [start, end)), false-quote rate (share of `none` cases for which anything
was returned), mean and p95 milliseconds per quote, and the speed ratio to difflib.

Run: .venv/bin/python benchmarks/recovery.py [--cases FILE] [--data-dir DIR]
     [--sample N] [--json FILE]
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from figures import Figures, add_json_option
from quoteproof import Index
from quoteproof.model import Chunk
from quoteproof.quoting.parse import ParsedOutput, QuoteItem
from quoteproof.quoting.resolve import DEFAULT_THRESHOLD, resolve_output
from quoteproof.store.base import Store
from quoteproof.store_lookup import StoreLookup

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
CASES = REPO / "evalsets" / "recovery.jsonl"

IOU_MIN = 0.9
"""A returned span counts as the passage when its character IoU with it is at least this."""
DIFFLIB_MIN = 0.9
RAPIDFUZZ_MIN = 90.0
TARGET_ACCURACY = 0.99
TARGET_SPEEDUP = 10.0

QUOTEPROOF = "quoteproof resolve_output"
DIFFLIB = "difflib SequenceMatcher"
RAPIDFUZZ = "rapidfuzz partial_ratio_alignment"

Span = tuple[int, int]
"""Document offsets [start, end)."""


@dataclass(frozen=True)
class Case:
    """One line of recovery.jsonl."""

    id: str
    source: str
    start: int
    end: int
    gold: str
    edited: str
    edits: tuple[str, ...]
    expect: str

    @classmethod
    def from_dict(cls, item: dict[str, Any]) -> Case:
        if item["expect"] not in ("span", "none"):
            raise ValueError(f"case {item['id']}: expect must be 'span' or 'none'")
        return cls(
            id=str(item["id"]),
            source=str(item["source"]),
            start=int(item["start"]),
            end=int(item["end"]),
            gold=str(item["gold"]),
            edited=str(item["edited"]),
            edits=tuple(item.get("edits", ())),
            expect=str(item["expect"]),
        )


def load_cases(path: Path, sample: int | None = None, seed: int = 0) -> list[Case]:
    """Read the cases of `path`; with `sample`, a random `sample` of them (fixed seed,
    file order kept)."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    cases = [Case.from_dict(json.loads(line)) for line in lines]
    if sample is not None and sample < len(cases):
        keep = set(random.Random(seed).sample(range(len(cases)), sample))
        cases = [case for i, case in enumerate(cases) if i in keep]
    return cases


def iou(a: Span, b: Span) -> float:
    """Character intersection over union of two [start, end) spans (0 when both empty)."""
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union if union > 0 else 0.0


def percentile(values: list[float], q: float) -> float:
    """The `q` quantile of `values`, nearest rank (as the other benchmarks compute it)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- the matchers: (quote, candidate chunks) -> document span or None ---------------

_WORD = re.compile(r"\S+")


def difflib_match(
    quote: str, candidates: Sequence[Chunk], minimum: float = DIFFLIB_MIN
) -> Span | None:
    """The sliding-window `difflib` matcher of public write-ups on quote anchoring.

    Follows the approach described in public write-ups of text anchoring / verifying
    LLM quotes against their source (for example the 2025 blog post "LangExtract:
    Demystifying Text Anchoring", which explains the difflib-based fuzzy alignment of
    Google's LangExtract): written here from that description, no code copied. For
    each candidate chunk, a window as many whitespace-delimited words long as the
    quote slides over the chunk one word at a time; each window is scored with
    `difflib.SequenceMatcher(None, quote, window).ratio()` (default settings, so
    difflib's "autojunk" heuristic applies to windows of 200+ characters); the best
    window over all candidates is returned when its ratio is at least `minimum`.
    """
    n = max(1, len(quote.split()))
    best_ratio = -1.0
    best: Span | None = None
    for chunk in candidates:
        words = list(_WORD.finditer(chunk.text))
        if not words:
            continue
        for i in range(max(1, len(words) - n + 1)):
            start = words[i].start()
            end = words[min(i + n, len(words)) - 1].end()
            ratio = difflib.SequenceMatcher(None, quote, chunk.text[start:end]).ratio()
            if ratio > best_ratio:
                best_ratio, best = ratio, (chunk.start + start, chunk.start + end)
    return best if best_ratio >= minimum else None


def rapidfuzz_match(
    quote: str, candidates: Sequence[Chunk], minimum: float = RAPIDFUZZ_MIN
) -> Span | None:
    """Plain `fuzz.partial_ratio_alignment(quote, chunk.text)`: the best-scoring
    candidate's aligned window, when its score is at least `minimum`."""
    best_score = -1.0
    best: Span | None = None
    for chunk in candidates:
        found = fuzz.partial_ratio_alignment(quote, chunk.text)
        if found is not None and found.score > best_score:
            best_score = found.score
            best = (chunk.start + found.dest_start, chunk.start + found.dest_end)
    return best if best_score >= minimum else None


Matcher = Callable[[Case, Chunk, Sequence[Chunk]], Span | None]
"""(case, cited chunk, cited chunk + neighbours) -> the document span shown, or None."""


def quoteproof_matcher(lookup: StoreLookup, threshold: float = DEFAULT_THRESHOLD) -> Matcher:
    """quoteproof's real path: `resolve_output` of one quote of the cited chunk's ref
    and the edited words, with the cited chunk and its neighbours as the retrieved
    sources; the span of the quote shown (whole or partial), if any."""

    def match(case: Case, cited: Chunk, candidates: Sequence[Chunk]) -> Span | None:
        parsed = ParsedOutput((QuoteItem(cited.ref, case.edited, case.edited),), no_answer=False)
        resolution = resolve_output(parsed, candidates, lookup, threshold=threshold)
        return next(((q.start, q.end) for q in resolution.quotes), None)

    return match


def _plain(function: Callable[[str, Sequence[Chunk]], Span | None]) -> Matcher:
    def match(case: Case, cited: Chunk, candidates: Sequence[Chunk]) -> Span | None:
        return function(case.edited, candidates)

    return match


# --- the report ----------------------------------------------------------------------


@dataclass(frozen=True)
class MatcherResult:
    """One matcher's figures over the cases."""

    name: str
    span_cases: int
    recovered: int
    none_cases: int
    false_quotes: int
    mean_ms: float
    p95_ms: float
    speedup_vs_difflib: float

    @property
    def accuracy(self) -> float:
        return self.recovered / self.span_cases if self.span_cases else 0.0

    @property
    def false_quote_rate(self) -> float:
        return self.false_quotes / self.none_cases if self.none_cases else 0.0


@dataclass(frozen=True)
class KindResult:
    """Per edit kind: span cases recovered by each matcher, false quotes of each."""

    kind: str
    span_cases: int
    recovered: dict[str, int]
    none_cases: int
    false_quotes: dict[str, int]


@dataclass(frozen=True)
class Miss:
    """A quoteproof failure: a span case not recovered, or a none case that got a quote."""

    case_id: str
    expect: str
    edits: tuple[str, ...]
    iou: float | None
    edited: str
    gold: str
    shown: str | None


@dataclass(frozen=True)
class RecoveryReport:
    """The benchmark's outcome; `lines()` is the printed table."""

    cases: int
    span_cases: int
    none_cases: int
    sources: tuple[str, ...]
    threshold: float
    matchers: tuple[MatcherResult, ...]
    by_kind: tuple[KindResult, ...]
    misses: tuple[Miss, ...]

    def matcher(self, name: str) -> MatcherResult:
        return next(m for m in self.matchers if m.name == name)

    def targets(self) -> dict[str, bool]:
        """The issue's targets for quoteproof, each met or not."""
        ours = self.matcher(QUOTEPROOF)
        return {
            f"accuracy >= {TARGET_ACCURACY:.0%}": ours.accuracy >= TARGET_ACCURACY,
            "no false quotes": ours.false_quotes == 0,
            f">= {TARGET_SPEEDUP:g}x faster than difflib": (
                ours.speedup_vs_difflib >= TARGET_SPEEDUP
            ),
        }

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for item, result in zip(out["matchers"], self.matchers, strict=True):
            item["accuracy"] = result.accuracy
            item["false_quote_rate"] = result.false_quote_rate
        out["targets"] = self.targets()
        return out

    def lines(self, misses: int = 20) -> list[str]:
        names = [m.name for m in self.matchers]
        out = [
            f"Quote recovery: {self.cases} cases ({self.span_cases} span, {self.none_cases} "
            f"none) from {len(self.sources)} PDFs; chunk + neighbours given; "
            f"IoU >= {IOU_MIN:g}; quoteproof threshold {self.threshold:g}",
            f"{'matcher':33} {'accuracy':>9} {'false quotes':>14} {'mean ms':>9} "
            f"{'p95 ms':>9} {'vs difflib':>11}",
        ]
        for m in self.matchers:
            false = f"{m.false_quotes}/{m.none_cases} {m.false_quote_rate:.0%}"
            out.append(
                f"{m.name:33} {m.accuracy:9.1%} {false:>14} {m.mean_ms:9.3f} {m.p95_ms:9.3f} "
                f"{m.speedup_vs_difflib:10.1f}x"
            )
        out.append("")
        out.append("accuracy by edit kind (span cases), and false quotes (none cases)")
        header = f"{'edit kind':16} {'span':>5} " + " ".join(f"{n.split()[0]:>10}" for n in names)
        out.append(header + f" {'none':>5} " + " ".join(f"{n.split()[0]:>10}" for n in names))
        for k in self.by_kind:
            accuracies = " ".join(
                f"{k.recovered[n] / k.span_cases:10.1%}" if k.span_cases else f"{'-':>10}"
                for n in names
            )
            falses = " ".join(f"{k.false_quotes[n]:>10}" for n in names)
            out.append(f"{k.kind:16} {k.span_cases:5d} {accuracies} {k.none_cases:5d} {falses}")
        out.append("")
        out.append(verdict_line(self.targets()))
        if self.misses:
            out.append(f"quoteproof misses ({len(self.misses)}, first {misses} shown):")
            for miss in self.misses[:misses]:
                got = "nothing" if miss.iou is None else f"IoU {miss.iou:.2f}"
                out.append(f"  {miss.case_id} [{miss.expect}; {', '.join(miss.edits)}] {got}")
                out.append(f"    edited: {_short(miss.edited)}")
                out.append(f"    gold:   {_short(miss.gold)}")
                if miss.shown is not None:
                    out.append(f"    shown:  {_short(miss.shown)}")
        return out


def verdict_line(targets: dict[str, bool]) -> str:
    """`quoteproof targets: NAME: PASS; NAME: FAIL; ...`"""
    verdicts = [f"{name}: {'PASS' if ok else 'FAIL'}" for name, ok in targets.items()]
    return "quoteproof targets: " + "; ".join(verdicts)


def _short(text: str, limit: int = 150) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# --- running it ----------------------------------------------------------------------


def cited_chunk(chunks: Sequence[Chunk], start: int, end: int) -> Chunk:
    """The chunk whose span covers `start`; of several (overlapping windows), the first
    that also covers `end`, else the first."""
    covering = [c for c in chunks if c.start <= start < c.end]
    if not covering:
        raise ValueError(f"no chunk covers offset {start}")
    return next((c for c in covering if end <= c.end), covering[0])


def _ingest(index: Index, data_dir: Path, sources: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Ingest every source; return `{source: (doc_id, version)}`."""
    paths = {source: data_dir / source for source in sources}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        raise FileNotFoundError("source PDFs not found: " + ", ".join(missing))
    results = index.ingest(list(paths.values()), embed=False)
    by_path = {Path(r.path).resolve(): r for r in results}
    found: dict[str, tuple[str, int]] = {}
    for source, path in paths.items():
        result = by_path.get(path.resolve())
        if result is None or result.doc_id is None or result.version is None:
            error = result.error if result else "no ingest result"
            raise RuntimeError(f"{source} did not ingest: {error}")
        found[source] = (result.doc_id, result.version)
    return found


@dataclass(frozen=True)
class _Prepared:
    case: Case
    cited: Chunk
    candidates: tuple[Chunk, ...]


def _prepare(
    store: Store, cases: Sequence[Case], docs: dict[str, tuple[str, int]]
) -> tuple[list[_Prepared], dict[str, str]]:
    """Each case with its cited chunk and candidates; and each source's canonical text.
    Fails when a case's `gold` is not that text's `[start:end]`."""
    chunks = {key: store.chunks_of(*key) for key in set(docs.values())}
    texts: dict[tuple[str, int], str] = {}
    for key in chunks:
        document = store.get_document(*key)
        if document is None:
            raise RuntimeError(f"document {key} missing from the index")
        texts[key] = document.text
    prepared, mismatched = [], []
    for case in cases:
        key = docs[case.source]
        if texts[key][case.start : case.end] != case.gold:
            mismatched.append(case.id)
            continue
        cited = cited_chunk(chunks[key], case.start, case.end)
        prepared.append(_Prepared(case, cited, (cited, *store.neighbours(cited))))
    if mismatched:
        raise ValueError(
            f"{len(mismatched)} case(s) whose gold is not the canonical text [start:end] "
            f"(the set was built from another text: rebuild it): {', '.join(mismatched[:10])}"
        )
    return prepared, {source: texts[key] for source, key in docs.items()}


def run_recovery(
    cases: Sequence[Case],
    data_dir: Path = DATA,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    progress: Callable[[str], None] | None = None,
) -> RecoveryReport:
    """Ingest the cases' PDFs from `data_dir` into a temporary index, resolve every
    case with each matcher (timed per quote), and score them."""
    if not cases:
        raise ValueError("no cases")
    sources = tuple(sorted({case.source for case in cases}))
    with tempfile.TemporaryDirectory() as tmp, Index.open(tmp, create=True) as index:
        docs = _ingest(index, data_dir, sources)
        prepared, full_text = _prepare(index.store, cases, docs)
        with StoreLookup(index.store) as lookup:
            matchers: dict[str, Matcher] = {
                QUOTEPROOF: quoteproof_matcher(lookup, threshold),
                DIFFLIB: _plain(difflib_match),
                RAPIDFUZZ: _plain(rapidfuzz_match),
            }
            shown: dict[str, list[Span | None]] = {}
            seconds: dict[str, list[float]] = {}
            for name, match in matchers.items():
                if progress:
                    progress(f"recovery: {name} on {len(prepared)} cases")
                first = prepared[0]
                match(first.case, first.cited, first.candidates)  # warm-up: caches, PDF open
                shown[name], seconds[name] = [], []
                for p in prepared:
                    started = time.perf_counter()
                    span = match(p.case, p.cited, p.candidates)
                    seconds[name].append(time.perf_counter() - started)
                    shown[name].append(span)
    return _score(prepared, shown, seconds, sources, threshold, full_text)


def _recovered(case: Case, span: Span | None) -> bool:
    return span is not None and iou(span, (case.start, case.end)) >= IOU_MIN


def _score(
    prepared: Sequence[_Prepared],
    shown: dict[str, list[Span | None]],
    seconds: dict[str, list[float]],
    sources: tuple[str, ...],
    threshold: float,
    full_text: dict[str, str],
) -> RecoveryReport:
    cases = [p.case for p in prepared]
    span_cases = [i for i, c in enumerate(cases) if c.expect == "span"]
    none_cases = [i for i, c in enumerate(cases) if c.expect == "none"]
    difflib_mean = statistics.mean(seconds[DIFFLIB]) if DIFFLIB in seconds else 0.0
    results = []
    for name in shown:
        mean = statistics.mean(seconds[name])
        results.append(
            MatcherResult(
                name=name,
                span_cases=len(span_cases),
                recovered=sum(_recovered(cases[i], shown[name][i]) for i in span_cases),
                none_cases=len(none_cases),
                false_quotes=sum(shown[name][i] is not None for i in none_cases),
                mean_ms=mean * 1000,
                p95_ms=percentile(seconds[name], 0.95) * 1000,
                speedup_vs_difflib=difflib_mean / mean if mean else 0.0,
            )
        )
    kinds = sorted({kind for case in cases for kind in case.edits})
    by_kind = []
    for kind in kinds:
        spans = [i for i in span_cases if kind in cases[i].edits]
        nones = [i for i in none_cases if kind in cases[i].edits]
        by_kind.append(
            KindResult(
                kind,
                len(spans),
                {n: sum(_recovered(cases[i], shown[n][i]) for i in spans) for n in shown},
                len(nones),
                {n: sum(shown[n][i] is not None for i in nones) for n in shown},
            )
        )
    misses = []
    for i, case in enumerate(cases):
        span = shown[QUOTEPROOF][i]
        failed = not _recovered(case, span) if case.expect == "span" else span is not None
        if failed:
            text = full_text.get(case.source, "")
            misses.append(
                Miss(
                    case.id,
                    case.expect,
                    case.edits,
                    None if span is None else iou(span, (case.start, case.end)),
                    case.edited,
                    case.gold,
                    None if span is None else text[span[0] : span[1]],
                )
            )
    return RecoveryReport(
        cases=len(cases),
        span_cases=len(span_cases),
        none_cases=len(none_cases),
        sources=sources,
        threshold=threshold,
        matchers=tuple(results),
        by_kind=tuple(by_kind),
        misses=tuple(misses),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=Path, default=CASES, help="The recovery JSONL file.")
    parser.add_argument("--data-dir", type=Path, default=DATA, help="Where `source` paths lie.")
    parser.add_argument("--sample", type=int, help="A random sample of N cases (fixed seed).")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    add_json_option(parser)
    args = parser.parse_args(argv)
    if not args.cases.is_file():
        print(f"no cases at {args.cases}: build them with evalsets/build.py", file=sys.stderr)
        return 2
    cases = load_cases(args.cases, args.sample)

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    report = run_recovery(cases, args.data_dir, threshold=args.threshold, progress=progress)
    print("\n".join(report.lines()))
    figures(report).write(args.json)
    return 0 if all(report.targets().values()) else 1


def figures(report: RecoveryReport) -> Figures:
    """quoteproof's time per quote, accuracy and false quotes, each next to every other
    matcher's; the targets (also as the printed verdict line); the whole report as
    `data`."""
    ours = report.matcher(QUOTEPROOF)
    others = [m for m in report.matchers if m is not ours]
    out = Figures("recovery", data=report.to_dict())
    for other in others:
        out.add("quote resolution mean ms/quote", ours.mean_ms, "ms", other.name, other.mean_ms)
        out.add("quote resolution p95 ms/quote", ours.p95_ms, "ms", other.name, other.p95_ms)
    accuracy = f"quote recovery accuracy % (IoU >= {IOU_MIN:g}, {ours.span_cases} quotes)"
    for other in others:
        out.add(accuracy, 100 * ours.accuracy, "%", other.name, 100 * other.accuracy)
    false_quotes = f"false quotes % ({ours.none_cases} absent quotes)"
    for other in others:
        out.add(
            false_quotes, 100 * ours.false_quote_rate, "%", other.name, 100 * other.false_quote_rate
        )
    targets = report.targets()
    out.note(verdict_line(targets))
    out.targets.update(targets)
    return out


if __name__ == "__main__":
    sys.exit(main())
