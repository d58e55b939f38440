"""The automatic refusal threshold: off-topic probes against the index's own retrieval."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from quoteproof import Index
from quoteproof.retrieval.auto_threshold import (
    MARGIN,
    MIN_PROBES,
    estimate_threshold,
    offtopic_probes,
    store_covers,
)


def test_threshold_sits_a_margin_above_the_best_used_probe() -> None:
    scores = {question: i / 100 for i, (_, question) in enumerate(offtopic_probes())}
    covered = {names[0] for names, _ in offtopic_probes()[-5:]}  # the best-scoring five
    estimate = estimate_threshold(lambda q: (scores[q], "kind"), covered.__contains__, "fp")
    assert estimate is not None
    used = len(offtopic_probes()) - 5
    assert estimate.threshold == pytest.approx((used - 1) / 100 + MARGIN)
    assert (estimate.source, estimate.unanswerable, estimate.fingerprint) == (
        "automatic", used, "fp",
    )  # fmt: skip


def test_no_threshold_when_the_index_covers_almost_every_probe_topic() -> None:
    keep = {names[0] for names, _ in offtopic_probes()[: MIN_PROBES - 1]}
    assert estimate_threshold(lambda q: (0.1, "k"), lambda t: t not in keep, "fp") is None


def test_a_probe_far_above_every_other_is_set_aside() -> None:
    # "How do I reset my router password?" over an IT helpdesk's page on passwords: the
    # index covers its topic in other words, and it would refuse the page's questions
    questions = [q for _, q in offtopic_probes()]
    scores = dict.fromkeys(questions, 0.2) | {questions[0]: 0.3, questions[1]: 0.52}

    def threshold(kind: str = "cosine+sentence:m") -> float:
        estimate = estimate_threshold(lambda q: (scores[q], kind), lambda t: False, "fp")
        assert estimate is not None
        return estimate.threshold

    assert threshold() == pytest.approx(0.3 + MARGIN)
    assert threshold("rerank:m") == pytest.approx(0.52 + MARGIN)  # a scale of its own
    scores[questions[0]] = 0.45  # within OUTLIER_GAP of the best: both stay
    assert threshold() == pytest.approx(0.52 + MARGIN)
    scores[questions[0]] = 0.39  # one probe at most is set aside
    scores[questions[2]] = 0.25
    assert threshold() == pytest.approx(0.39 + MARGIN)
    scores[questions[0]], scores[questions[1]] = 0.5, 0.7
    assert threshold() == pytest.approx(0.5 + MARGIN)


def test_a_probe_is_not_used_when_the_index_holds_its_topic_under_another_name() -> None:
    question = "What is the maximum daily dose of acetaminophen?"
    assert question in {q for _, q in offtopic_probes()}
    scores = {q: 0.9 if q == question else 0.3 for _, q in offtopic_probes()}
    estimate = estimate_threshold(lambda q: (scores[q], "k"), "paracetamol".__eq__, "fp")
    assert estimate is not None  # a leaflet on paracetamol answers the acetaminophen probe
    assert estimate.threshold == pytest.approx(0.3 + MARGIN)
    assert estimate.unanswerable == len(offtopic_probes()) - 1


def test_the_wifi_probe_is_not_used_over_a_page_that_writes_wi_fi(tmp_path: Path) -> None:
    """A newcomer's broadband FAQ writes "Wi-Fi": the probe "Why is my wifi slow?" was
    used as off-topic there, scored 0.59 and lifted the threshold over most of the
    FAQ's own questions. The index covers the topic under that name; a page with
    "Madison, WI" and "sci-fi" does not."""
    faq = tmp_path / "faq.md"
    faq.write_text("# Broadband help\n\nRestart the router if the Wi-Fi light is red.\n")
    other = tmp_path / "other.md"
    other.write_text("# Post\n\nWrite to Madison, WI 53707 about sci-fi and hi-fi shows.\n")
    (names,) = [names for names, question in offtopic_probes() if "wifi" in question]
    for page, covered in ((other, False), (faq, True)):
        with Index.open(tmp_path / page.stem, create=True) as index:
            list(index.ingest([page], embed=False))
            assert any(store_covers(index.store, name) for name in names) is covered, page


def ask(index: Index, question: str) -> tuple[str, str | None, tuple[str, ...]]:
    answer = index.ask(question)
    return answer.status, answer.refusal_reason, answer.notices


def test_a_fresh_index_refuses_off_topic_and_look_alike_questions(
    embedded_index_dir: Path, tmp_path: Path
) -> None:
    location = shutil.copytree(embedded_index_dir, tmp_path / "index")
    with Index.open(location) as index, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert index.calibration() is None
        status, reason, notices = ask(index, "How many moons does the largest planet have?")
        assert (status, reason) == ("refused", "no_relevant_sources")
        assert any("estimated automatically" in n and "quoteproof calibrate" in n for n in notices)
        status, reason, notices = ask(index, "How many moons does Jupiter have?")  # a name
        assert (status, reason, notices) == (
            "refused", "not_in_sources", ("No retrieved source mentions 'jupiter'.",),
        )  # fmt: skip
        question = "What is the recommended dose of remdesivir with simvastatin?"
        status, reason, notices = ask(index, question)
        assert (status, reason) == ("refused", "not_in_sources")
        assert "No retrieved source mentions 'simvastatin'." in notices
        assert ask(index, "What is the recommended dose of remdesivir?")[0] == "answered"
        question = "How many moons does the planet Zorblax have?"  # off-topic, and a name
        answer = index.ask(question)
        assert answer.retrieval is not None and answer.retrieval.below_threshold
        assert (answer.status, answer.refusal_reason) == ("refused", "not_in_sources")
        assert answer.notices == ("No retrieved source mentions 'zorblax'.",)
        stored = index.automatic_threshold()
        assert stored is not None and stored.source == "automatic"
        index.calibrate(
            [("What is the recommended dose of remdesivir?", True), ("Who wrote Hamlet?", False)]
        )
        answer = index.ask("How many moons does Jupiter have?")
        assert answer.retrieval is not None
        assert answer.retrieval.threshold_source == "calibrated"


def test_the_estimate_is_made_again_when_the_documents_change(
    embedded_index_dir: Path, tmp_path: Path
) -> None:
    location = shutil.copytree(embedded_index_dir, tmp_path / "index")
    extra = tmp_path / "malaria.txt"
    extra.write_text("Malaria is treated with artemisinin-based combination therapy.\n")
    with Index.open(location) as index, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = index.automatic_threshold()
        assert before is not None
        index.ingest([extra])
        after = index.automatic_threshold()
        assert after is not None and after.fingerprint != before.fingerprint
        assert after.unanswerable == before.unanswerable - 1  # the malaria probe is left out


def test_bm25_alone_screens_by_key_terms_and_says_there_is_no_threshold(
    index_dir: Path,
) -> None:
    with Index.open(index_dir) as index, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert index.automatic_threshold() is None
        answer = index.ask("How is shingles treated and what are its symptoms?")
        assert answer.status == "answered"
        assert any("screened only for the question's key terms" in n for n in answer.notices)
        status, reason, notices = ask(index, "What are the first signs of appendicitis?")
        assert (status, reason) == ("refused", "not_in_sources")
        assert "No retrieved source mentions 'appendicitis'." in notices


def test_cli_ingest_estimates_the_threshold_on_the_vectors_it_computed(
    corpus: Path, tmp_path: Path
) -> None:
    """`quoteproof ingest` embeds before it estimates: the threshold is stored on
    cosine evidence at ingest (not left to the first ask), with no 'BM25 alone' note."""
    from quoteproof.retrieval.evidence import AUTOMATIC, load_calibration
    from test_cli import run

    location = tmp_path / "cli-index"
    result = run("ingest", str(corpus), "--index", str(location))
    assert result.returncode == 0, result.stderr
    assert "BM25 alone" not in result.stderr
    with Index.open(location) as index:
        stored = load_calibration(index.store, AUTOMATIC)
        assert stored is not None and stored.evidence_kind.startswith("cosine+sentence:")


def test_an_answer_retrieves_once_when_the_threshold_is_stored(
    embedded_index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = shutil.copytree(embedded_index_dir, tmp_path / "index")
    with Index.open(location) as index, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert index.automatic_threshold() is not None  # estimated and stored
        retriever = index.retriever
        searched: list[str] = []
        search = retriever.search
        monkeypatch.setattr(
            retriever, "search", lambda query, *rest: searched.append(query) or search(query, *rest)
        )
        answer = index.ask("What is the recommended dose of remdesivir?")
        assert answer.status == "answered" and answer.retrieval is not None
        assert answer.retrieval.threshold_source == "automatic"
        assert searched == ["What is the recommended dose of remdesivir?"]  # no probe search
