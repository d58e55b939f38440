"""Reranking with a tiny cross-encoder the test builds and saves itself (random weights:
the test checks loading and reordering, not quality)."""

from __future__ import annotations

from pathlib import Path

import pytest

from quoteproof import Index
from quoteproof.errors import RetrievalError
from quoteproof.model import Chunk, Hit, Via
from quoteproof.retrieval.rerank import Reranker
from quoteproof.retrieval.retriever import RetrievalSettings

WORDS = "shingles rash pain blood pressure stroke dose remdesivir antiviral day the a of".split()


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-layer BERT cross-encoder with a 20-word vocabulary, saved to a folder."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    tokenizer = BertTokenizerFast(vocab={word: i for i, word in enumerate(vocab)})
    torch.manual_seed(7)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        num_labels=1,
        initializer_range=1.0,  # wide random weights: distinct scores for distinct texts
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def hit(ref: str, text: str, rank: int) -> Hit:
    chunk = Chunk(ref, "d", 1, rank, 0, len(text), text, (), ref, "/d.txt")
    return Hit(chunk, 1.0 / rank, rank, (Via("bm25", rank, 1.0 / rank),))


def test_reranker_orders_by_the_cross_encoders_own_scores(tiny_cross_encoder: Path) -> None:
    from sentence_transformers import CrossEncoder

    candidates = ["shingles rash pain", "blood pressure stroke", "remdesivir dose day", "antiviral"]
    scores = CrossEncoder(str(tiny_cross_encoder)).predict(
        [("shingles pain", t) for t in candidates]
    )
    assert len(set(scores.tolist())) == len(candidates)
    # Hand the texts over worst first, so reranking has to reverse them.
    texts = sorted(candidates, key=lambda t: scores[candidates.index(t)])
    hits = [hit(f"r{i}", text, i) for i, text in enumerate(texts, start=1)]
    reranked = Reranker(str(tiny_cross_encoder)).rerank("shingles pain", hits, keep=3)
    assert [h.chunk.ref for h in reranked] == ["r4", "r3", "r2"]
    assert [h.rank for h in reranked] == [1, 2, 3]
    assert [h.score for h in reranked] == pytest.approx(sorted(scores.tolist(), reverse=True)[:3])
    assert reranked[0].via == (Via("bm25", 4, 0.25), Via("rerank", 1, reranked[0].score))


def test_retriever_reranks_the_fused_head_and_keeps_the_best(
    tiny_cross_encoder: Path, embedded_index_dir: Path
) -> None:
    settings = RetrievalSettings(
        rerank_model=str(tiny_cross_encoder), rerank_candidates=4, rerank_keep=2
    )
    with Index.open(embedded_index_dir, retrieval=settings) as index:
        retrieval = index.retrieve("shingles rash pain", top_k=10)
    assert len(retrieval.hits) == 2
    assert retrieval.info.evidence_kind == f"rerank:{tiny_cross_encoder}"
    assert retrieval.info.evidence == retrieval.hits[0].score
    assert all(h.via[-1].retriever == "rerank" and h.via[0].rank <= 4 for h in retrieval.hits)


def test_a_missing_rerank_model_is_a_clear_error(tmp_path: Path, embedded_index_dir: Path) -> None:
    settings = RetrievalSettings(rerank_model=str(tmp_path / "no-such-model"))
    with (
        Index.open(embedded_index_dir, retrieval=settings) as index,
        pytest.raises(RetrievalError, match="no-such-model"),
    ):
        index.search("rash")
