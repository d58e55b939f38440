"""Dense and hybrid retrieval on a real embedding model (all-MiniLM-L6-v2, offline)."""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import quoteproof.retrieval.embedder as embedder_module
import quoteproof.retrieval.retriever as retriever_module
from helpers.answers import as_recorded
from helpers.retrieval import LABELLED, PARAPHRASE
from quoteproof import Index
from quoteproof.codec import answer_from_dict, answer_to_dict
from quoteproof.defaults import DEFAULT_ASK_TOP_K
from quoteproof.errors import RetrievalError, StoreError
from quoteproof.llm.extractive import best_unit_similarity
from quoteproof.llm.openai import OpenAIBackend
from quoteproof.retrieval.embedder import DEFAULT_EMBED_MODEL, Embedder
from quoteproof.retrieval.retriever import RetrievalNotice, RetrievalSettings


def open_with(location: Path, **settings: Any) -> Index:
    return Index.open(location, retrieval=RetrievalSettings(**settings))


def test_dense_finds_a_paraphrase_bm25_misses(embedded_index_dir: Path) -> None:
    with open_with(embedded_index_dir, retriever="bm25") as index:
        assert index.search(PARAPHRASE) == []
    for name in ("dense", "hybrid"):
        with open_with(embedded_index_dir, retriever=name) as index:
            hits = index.search(PARAPHRASE, top_k=3)
        assert "stroke" in hits[0].chunk.text, name
        assert [h.rank for h in hits] == [1, 2, 3]


def test_default_is_hybrid_and_hits_say_how_each_list_ranked(embedded_index_dir: Path) -> None:
    with Index.open(embedded_index_dir) as index:
        retrieval = index.retrieve("remdesivir dose on day 1", top_k=3)
    assert retrieval.info.retriever == "hybrid"
    assert retrieval.info.evidence_kind == f"cosine:{DEFAULT_EMBED_MODEL}"
    top = retrieval.hits[0]
    assert "200 mg" in top.chunk.text
    assert [v.retriever for v in top.via] == ["bm25", "dense"]
    assert top.score == pytest.approx(sum(1 / (60 + v.rank) for v in top.via))
    assert retrieval.info.evidence == pytest.approx(
        next(v.score for v in top.via if v.retriever == "dense")
    )


def test_fusion_weights_are_settable(embedded_index_dir: Path) -> None:
    with open_with(embedded_index_dir, bm25_weight=0.0, rrf_k=10) as index:
        fused = index.search("antiviral dose", top_k=5)
    with open_with(embedded_index_dir, retriever="dense") as index:
        dense = index.search("antiviral dose", top_k=5)
    assert [h.chunk.ref for h in fused] == [h.chunk.ref for h in dense]


def test_query_embeddings_are_cached(embedded_index_dir: Path) -> None:
    embedder = Embedder()
    first = embedder.embed_query("shingles rash")
    assert embedder.embed_query("shingles rash") is first
    assert first.shape == (1, 384) and first.dtype.name == "float32"
    assert float((first**2).sum()) == pytest.approx(1.0, abs=1e-5)


def test_reingest_embeds_only_new_or_changed_chunks(tmp_path: Path, corpus: Path) -> None:
    with Index.open(tmp_path / "index", create=True) as index:
        index.ingest([corpus], embed=False)
        first = index.embed()
        assert first.embedded == index.store.stats().chunks > 0
        index.ingest([corpus])
        assert index.embed().embedded == 0  # nothing changed: nothing embedded
        source = corpus / "shingles.md"
        source.write_text(source.read_text().replace("72 hours", "three days"))
        index.ingest([corpus], embed=False)
        assert index.embed().embedded == 1  # only the changed section's chunk
        stats = index.store.stats()
        assert stats.chunks == first.embedded and stats.embedded == stats.chunks
        hits = index.search("started within three days", top_k=1)
        assert "three days" in hits[0].chunk.text and hits[0].chunk.doc_version == 2


def test_another_embedding_model_is_refused(embedded_copy: Path) -> None:
    with (
        open_with(embedded_copy, embed_model="other/model") as index,
        pytest.raises(RetrievalError, match="other/model"),
    ):
        index.search("rash")
        with pytest.raises(StoreError, match="all-MiniLM-L6-v2"):
            index.embed("other/model")


def test_without_the_dense_extra_retrieval_is_bm25_and_says_so(
    embedded_index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retriever_module, "dense_available", lambda: False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Index.open(embedded_index_dir) as index:
            assert index.retrieve("rash").info.retriever == "bm25"
    assert [str(w.message) for w in caught if w.category is RetrievalNotice] == [
        "retrieval is BM25 alone: dense retrieval needs pip install 'quoteproof[dense]'"
    ]
    with (
        open_with(embedded_index_dir, retriever="dense") as index,
        pytest.raises(RetrievalError, match="dense extra"),
    ):
        index.search("rash")


def test_an_index_without_vectors_cannot_search_densely(index_dir: Path) -> None:
    with (
        open_with(index_dir, retriever="hybrid") as index,
        pytest.raises(RetrievalError, match="no vectors"),
    ):
        index.search("rash")


def test_calibrated_threshold_refuses_without_calling_the_model(
    embedded_copy: Path, openai_server: Any
) -> None:
    openai_server.script = ["should not be called"]
    model = OpenAIBackend(model="m", base_url=openai_server.base_url, max_retries=0)
    with Index.open(embedded_copy) as index:
        assert index.calibration() is None
        calibration = index.calibrate(LABELLED)
        assert calibration.accuracy == 1.0 and 0.0 < calibration.threshold < 1.0
        assert calibration.evidence_kind == f"cosine+sentence:{DEFAULT_EMBED_MODEL}"
    with Index.open(embedded_copy) as index:  # stored in the index
        assert index.calibration() == calibration
        answer = index.ask("Which mountain is the tallest on the planet?", backend=model)
    assert answer.status == "refused" and answer.refusal_reason == "no_relevant_sources"
    assert openai_server.requests == []
    info = answer.retrieval
    assert info is not None and info.threshold == calibration.threshold
    assert info.evidence is not None and info.evidence < calibration.threshold
    assert answer_from_dict(answer_to_dict(answer)) == as_recorded(answer)
    with Index.open(embedded_copy) as index:
        answered = index.ask("Which antivirals treat shingles?")
    assert answered.status == "answered"


def test_a_threshold_for_other_evidence_is_not_applied(embedded_copy: Path) -> None:
    with Index.open(embedded_copy) as index:
        index.calibrate(LABELLED)
    with (
        open_with(embedded_copy, retriever="bm25") as index,
        pytest.warns(RetrievalNotice, match="not applied"),
    ):
        answer = index.ask("Which mountain is the tallest on the planet?")
    assert answer.retrieval is not None and answer.retrieval.threshold is None


def test_an_index_of_truncated_vectors_says_it_needs_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vectors made before long chunks were embedded in passages (marked by the
    schema 7 migration) still search, with a notice saying what is missing."""
    from quoteproof.retrieval.retriever import Retriever
    from quoteproof.store.open import open_store
    from quoteproof.store.vectors import TRUNCATED_VECTORS_SETTING, EmbeddingSpace

    monkeypatch.setattr(retriever_module, "dense_available", lambda: True)
    store = open_store(str(tmp_path / "index"), create=True)
    try:
        store.set_embedding_space(EmbeddingSpace("toy", 3))
        with warnings.catch_warnings():
            warnings.simplefilter("error", RetrievalNotice)
            Retriever(store)  # a new index: no notice
        store.put_setting(TRUNCATED_VECTORS_SETTING, "1")
        with pytest.warns(RetrievalNotice, match="256 tokens are invisible to dense search"):
            assert Retriever(store).name == "hybrid"
    finally:
        store.close()


def test_ask_judges_a_question_by_its_best_sentence_as_well_as_its_passage(
    embedded_index_dir: Path,
) -> None:
    with Index.open(embedded_index_dir) as index:
        retrieval = index.retrieve("remdesivir dose on day 1", top_k=DEFAULT_ASK_TOP_K)
        judged = index.refusal_check("remdesivir dose on day 1", retrieval)
        sources = [hit.chunk for hit in retrieval.hits]
        embed = index.retriever.embedder
        assert embed is not None
        best = best_unit_similarity("remdesivir dose on day 1", sources, embed.embed)
    passage = retrieval.info.evidence
    assert passage is not None and judged.evidence is not None
    assert judged.evidence_kind == f"cosine+sentence:{DEFAULT_EMBED_MODEL}"
    assert judged.evidence == pytest.approx((passage + best) / 2, abs=1e-5)


class _CountingModel:
    """A stand-in sentence model: a text's vector is its length, one-hot."""

    runtime = "test"
    dimensions = 64

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def encode(self, texts: list[str], batch_size: int, on_batch: object = None) -> Any:
        self.embedded += texts
        rows = [[float(i == len(t) % 64) for i in range(64)] for t in texts]
        return np.asarray(rows, dtype=np.float32)


def test_recent_texts_are_embedded_once_and_the_cache_holds_under_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embedder_module, "QUERY_CACHE_SIZE", 8)
    embedder = Embedder()
    model = _CountingModel()
    embedder._loaded = model
    first = embedder.embed_recent(["a", "bb", "a"])
    assert first.shape == (3, 64) and model.embedded == ["a", "bb"]
    embedder.embed_recent(["bb", "ccc"])
    assert model.embedded == ["a", "bb", "ccc"]  # "bb" came from the cache

    def ask(n: int) -> None:
        for k in range(50):
            texts = [f"t{(n + k + i) % 20}" for i in range(6)]
            vectors = embedder.embed_recent(texts)
            assert [int(np.argmax(row)) for row in vectors] == [len(t) % 64 for t in texts]

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(ask, range(4)))
    assert len(embedder._recent) <= 8


def test_a_question_by_generic_name_also_searches_the_brand_its_title_declares(
    tmp_path: Path,
) -> None:
    """A label says "ZENTRIX" where a user asks about valorimab: when a found
    document's title declares "ZENTRIX® (valorimab)", the question is also searched
    with the other name, the hits say so, and the evidence is the better wording's."""
    folder = tmp_path / "docs"
    folder.mkdir()
    sections = "\n\n".join(
        f"## {heading}\n\n{text}"
        for heading, text in [
            ("Description", "Valorimab is a monoclonal antibody made in hamster ovary cells."),
            ("Dosage", "The recommended dosage of ZENTRIX for adults is 200 mg on day 1."),
            ("Storage", "Store ZENTRIX vials below 30 °C in the original carton."),
        ]
    )
    (folder / "label.md").write_text(f"# ZENTRIX® (valorimab) injection\n\n{sections}\n")
    with Index.open(tmp_path / "index", create=True) as index:
        index.ingest([folder], embed=True)
        hits = index.search("What is the recommended dose of valorimab for adults?", top_k=3)
        plain = index.search("How should the storage room be lit?", top_k=3)
        question = "What dose of valorimab do adults get?"
        retrieval = index.retrieve(question, top_k=DEFAULT_ASK_TOP_K)
        judged = index.refusal_check(question, retrieval)
        embed = index.retriever.embedder
        assert embed is not None
        sources = [hit.chunk for hit in retrieval.hits]
        units = [
            best_unit_similarity(asked, sources, embed.embed)
            for asked in (question, "What dose of ZENTRIX do adults get?")
        ]
    assert "200 mg" in hits[0].chunk.text
    assert {"bm25 as ZENTRIX", "dense as ZENTRIX"} <= {v.retriever for v in hits[0].via}
    best = {  # each dense list's best cosine: the evidence is the best of either wording
        name: max(v.score for hit in retrieval.hits for v in hit.via if v.retriever == name)
        for name in ("dense", "dense as ZENTRIX")
    }
    assert best["dense as ZENTRIX"] > best["dense"]
    assert retrieval.info.evidence == pytest.approx(best["dense as ZENTRIX"])
    assert units[1] > units[0]  # the sentence evidence, too, is the better wording's
    assert judged.evidence == pytest.approx((best["dense as ZENTRIX"] + units[1]) / 2, abs=1e-5)
    assert all(v.retriever in ("bm25", "dense") for hit in plain for v in hit.via)
