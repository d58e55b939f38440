"""Tests for quoteproof.evaluation.metrics, and for `runner.score_answer` on hand-built
answers: every expected figure is worked out by hand."""

from __future__ import annotations

import pytest

from helpers.answers import make_answer, make_quote
from quoteproof.evaluation.evalset import EvalItem
from quoteproof.evaluation.metrics import (
    DocKey,
    GoldQuote,
    ItemScores,
    QuoteOverlap,
    Span,
    citation_counts,
    gold_ranks,
    locate,
    merge_spans,
    normalize_whitespace,
    overlap_chars,
    percentile,
    quote_overlap,
    recall_at_k,
    ref_matches,
    summarize,
)
from quoteproof.evaluation.runner import ItemResult, score_answer
from quoteproof.model import (
    Answer,
    Document,
    ProseSegment,
    QuoteSegment,
    SourceInfo,
    Usage,
    sha256_text,
)

#        0         1         2         3         4         5         6
#        0123456789012345678901234567890123456789012345678901234567890123456789
SOURCE = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota. Kappa lambda mu."
OTHER = "Nothing relevant here. Delta epsilon zeta."
DOC: DocKey = ("doc", 1)


class Documents:
    """A `DocumentSource` over two documents and three chunks, in memory."""

    def __init__(self) -> None:
        self.docs = {
            DOC: Document("doc", 1, "/c/corpus/doc.txt", "Doc", "text", SOURCE,
                          sha256_text(SOURCE)),
            ("other", 1): Document("other", 1, "/c/corpus/other.txt", "Other", "text", OTHER,
                                   sha256_text(OTHER)),
        }  # fmt: skip
        self.chunks = {
            "doc-1": Span(DOC, 0, 37),
            "doc-2": Span(DOC, 38, 70),
            "other-1": Span(("other", 1), 0, len(OTHER)),
        }

    def get(self, doc_id: str, version: int) -> Document | None:
        return self.docs.get((doc_id, version))

    def matching(self, gold_ref: str) -> list[DocKey]:
        return [key for key, d in self.docs.items() if ref_matches(d.source_path, gold_ref)]

    def chunk_span(self, ref: str) -> Span | None:
        return self.chunks.get(ref)


def source(ref: str, doc_id: str, rank: int) -> SourceInfo:
    return SourceInfo(ref, ref, doc_id, 1, f"/c/corpus/{doc_id}.txt", 1.0, rank)


def score(item: EvalItem, answer: Answer, **extra: object) -> ItemResult:
    return score_answer(item, answer, Documents(), **extra)  # type: ignore[arg-type]


# --- pure helpers ----------------------------------------------------------------------


def test_locate_exact_then_whitespace_normalised() -> None:
    assert SOURCE[18:37] == "Delta epsilon zeta."
    assert locate(SOURCE, "Delta epsilon zeta.") == [(18, 37)]
    assert locate("ab ab", "ab") == [(0, 2), (3, 5)]
    text = "a  b\nc d"
    assert locate(text, "b c") == [(3, 6)] and text[3:6] == "b\nc"
    assert locate(text, "  b   c\n") == [(3, 6)]
    assert locate(text, "x") == [] and locate(text, " ") == []
    assert normalize_whitespace(" a \n b ") == ("a b", [1, 4, 5])  # a run: its last character


def test_ref_matches_at_path_boundaries() -> None:
    assert ref_matches("/c/fda/label.pdf", "fda/label.pdf")
    assert ref_matches("/c/fda/label.pdf", "label.pdf")
    assert ref_matches("fda/label.pdf", "fda/label.pdf")
    assert ref_matches("C:\\c\\fda\\label.pdf", "fda/label.pdf")
    assert not ref_matches("/c/fda/label.pdf", "bel.pdf")
    assert not ref_matches("/c/scifact/14983.txt", "4983.txt")
    assert not ref_matches("/c/fda/label.pdf", "")


def test_spans_merge_and_overlap_by_characters() -> None:
    a, b = ("a", 1), ("b", 1)
    spans = [Span(a, 5, 9), Span(a, 0, 3), Span(a, 3, 4), Span(b, 0, 2), Span(a, 7, 7)]
    assert merge_spans(spans) == [Span(a, 0, 4), Span(a, 5, 9), Span(b, 0, 2)]
    assert overlap_chars([Span(a, 0, 10)], [Span(a, 5, 15), Span(a, 8, 12), Span(b, 0, 10)]) == 5
    assert overlap_chars([Span(a, 0, 4), Span(a, 2, 6)], [Span(a, 0, 100)]) == 6  # union, once
    assert overlap_chars([Span(a, 0, 4)], [Span(a, 4, 8)]) == 0


def test_quote_overlap_precision_and_recall() -> None:
    shown = [Span(DOC, 6, 37), Span(DOC, 38, 53)]  # 31 + 15 characters
    gold = [GoldQuote(19, (Span(DOC, 18, 37),)), GoldQuote(10)]  # the second found nowhere
    overlap = quote_overlap(shown, gold)
    assert overlap == QuoteOverlap(
        shown_chars=46, overlap_chars=19, gold_chars=29, covered_chars=19, unlocated=1
    )
    assert overlap.precision == 19 / 46 and overlap.recall == 19 / 29
    # a gold quote found twice counts once, with the occurrence covered best
    twice = GoldQuote(5, (Span(DOC, 0, 5), Span(DOC, 60, 65)))
    assert quote_overlap([Span(DOC, 62, 70)], [twice]) == QuoteOverlap(8, 3, 5, 3)
    assert quote_overlap([], [twice]).precision is None


def test_citation_counts() -> None:
    gold = [Span(DOC, 18, 37)]
    refs = {"doc-1": Span(DOC, 0, 37), "doc-2": Span(DOC, 38, 70), "gone": None}
    assert citation_counts(refs, gold) == (1, 3)
    assert citation_counts({}, gold) == (0, 0)


def test_gold_ranks_and_recall_at_k() -> None:
    hits = ["/a/x/doc.txt", "/a/y/other.txt", "/a/z/doc.txt"]
    ranks = gold_ranks(hits, ["doc.txt", "y/other.txt", "missing.txt"])
    assert ranks == {"doc.txt": 1, "y/other.txt": 2, "missing.txt": None}
    assert [recall_at_k(ranks, k) for k in (1, 2, 3)] == [1 / 3, 2 / 3, 2 / 3]
    assert recall_at_k({}, 5) is None


def test_percentile_interpolates_linearly() -> None:
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile([10, 20, 30, 40, 50], 95) == pytest.approx(48.0)
    assert percentile([7], 95) == 7 and percentile([], 50) is None


def test_summarize_refusals_recall_latency_tokens() -> None:
    scores = [
        ItemScores(answerable=True, latency_ms=10, ranks={"a": 1, "b": None}, usage=(10, 5)),
        ItemScores(answerable=True, latency_ms=20, ranks={"c": 3}),
        ItemScores(answerable=True, refused=True, latency_ms=30, usage=(3, 2)),
        ItemScores(answerable=False, refused=True, latency_ms=40),
        ItemScores(answerable=False, latency_ms=50),
        ItemScores(answerable=False, error=True, ranks={"d": 1}),
    ]
    metrics = summarize(scores, [1, 5])
    assert (metrics.items, metrics.answerable, metrics.unanswerable, metrics.errors) == (6, 3, 3, 1)
    assert metrics.false_refusal_rate == 1 / 3
    assert metrics.refusal_correct == 1 / 2  # the errored item is left out
    assert metrics.retrieval_recall == {1: 0.25, 5: 0.75}
    assert metrics.latency_p50_ms == 30 and metrics.latency_p95_ms == pytest.approx(48.0)
    assert (metrics.prompt_tokens, metrics.completion_tokens) == (13, 7)
    assert metrics.verbatim_rate is None and metrics.quote_precision is None
    assert summarize(scores[1:2], [5]).prompt_tokens is None


# --- scoring hand-built answers --------------------------------------------------------


def test_precision_recall_and_citations_of_hand_built_answers() -> None:
    first = EvalItem(
        "first", "Q?", True, gold_refs=("corpus/doc.txt",), gold_quotes=("Delta epsilon zeta.",)
    )
    q1 = make_quote(SOURCE, 6, 37, "q1", ref="doc-1")  # "beta gamma. Delta epsilon zeta."
    q2 = make_quote(SOURCE, 38, 53, "q2", ref="doc-2")  # "Eta theta iota."
    answer = make_answer(
        (ProseSegment("See also", ("doc-2", "nope")), QuoteSegment("q1"), QuoteSegment("q2")),
        (q1, q2),
    )
    one = score(first, answer)
    assert one.scores.overlap == QuoteOverlap(46, 19, 19, 19)
    assert one.scores.citations == (1, 3)  # doc-2 and nope miss, doc-1 holds the gold
    assert one.not_verbatim == () and one.scores.quotes_checked == 2

    # whitespace in the gold quote differs from the source; found all the same
    second = EvalItem("second", "Q?", True, gold_quotes=("Eta   theta\niota.",))
    q3 = make_quote(SOURCE, 38, 45, "q1", ref="doc-2")  # "Eta the"
    answer = make_answer((QuoteSegment("q1"),), (q3,), sources=(source("doc-2", "doc", 1),))
    two = score(second, answer)
    assert two.scores.overlap == QuoteOverlap(7, 7, 15, 7)
    assert two.scores.citations == (1, 1)

    metrics = summarize([one.scores, two.scores], [5])
    assert metrics.quote_precision == 26 / 53
    assert metrics.quote_recall == 26 / 34
    assert metrics.citation_accuracy == 2 / 4
    assert metrics.verbatim_rate == 1.0 and metrics.quotes_checked == 3


def test_gold_quotes_are_looked_for_in_the_gold_documents_only() -> None:
    gold = "Delta epsilon zeta."
    in_other = make_quote(OTHER, 23, 42, "q1", ref="other-1", doc_id="other")
    answer = make_answer((QuoteSegment("q1"),), (in_other,))
    named = score(EvalItem("a", "Q?", True, ("doc.txt",), (gold,)), answer)
    assert named.scores.overlap == QuoteOverlap(19, 0, 19, 0)  # the same words, wrong document
    # without gold refs, any retrieved or quoted document counts
    anywhere = score(EvalItem("b", "Q?", True, (), (gold,)), answer)
    assert anywhere.scores.overlap == QuoteOverlap(19, 19, 19, 19)


def test_refused_answer_scores_zero_recall_and_unlocated_gold_is_listed() -> None:
    item = EvalItem("r", "Q?", True, ("doc.txt", "absent.pdf"), ("Delta epsilon zeta.", "Zzz."))
    refused = make_answer((), (), status="refused", refusal_reason="no_relevant_sources")
    result = score(item, refused, ranks={"doc.txt": 2, "absent.pdf": None}, latency_ms=5.0)
    assert result.scores.refused and result.status == "refused"
    assert result.scores.overlap == QuoteOverlap(0, 0, 19 + 4, 0, unlocated=1)
    assert result.scores.citations == (0, 0)
    assert result.unlocated == ("Zzz.",) and result.missing_refs == ("absent.pdf",)
    assert (result.hit_at(1), result.hit_at(2)) == (False, True)


def test_quotes_that_are_not_the_stored_text_are_failures() -> None:
    good = make_quote(SOURCE, 0, 5, "q1")
    tampered = make_quote(SOURCE, 0, 5, "q2", text="Alphx")
    old_version = make_quote(SOURCE, 0, 5, "q3", doc_version=2)
    outside = make_quote(SOURCE + "tail", 70, 74, "q4")
    cited = make_quote(SOURCE, 6, 10, "c1", text="BETA")
    answer = make_answer(
        tuple(QuoteSegment(q.id) for q in (good, tampered, old_version, outside)),
        (good, tampered, old_version, outside),
        cited=(cited,),
        usage=Usage(10, 5),
    )
    result = score(EvalItem("v", "Q?", True), answer)
    reasons = {f.quote_id: f.reason for f in result.not_verbatim}
    assert reasons == {
        "q2": "text differs from the stored text at its offsets",
        "q3": "document version not in the index",
        "q4": "offsets outside the document (length 70)",
        "c1": "text differs from the stored text at its offsets",
    }
    assert (result.scores.quotes_checked, result.scores.not_verbatim) == (5, 4)
    assert result.scores.usage == (10, 5)
    metrics = summarize([result.scores], [5])
    assert metrics.verbatim_rate == 1 / 5
