"""The embedding model run through ONNX Runtime: same vectors as torch, an export
cache that is reused and repaired, no torch on the query path, progress per batch,
and torch when the export is refused (remembered, not tried again)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import quoteproof.retrieval.onnx_export as onnx_export
import quoteproof.retrieval.onnx_model as onnx_model
import quoteproof.retrieval.onnx_quantize as onnx_quantize
from quoteproof import Index
from quoteproof.retrieval.embed_index import embed_pending
from quoteproof.retrieval.embedder import (
    DEFAULT_EMBED_MODEL,
    Embedder,
    load_onnx_model,
    load_onnx_passage_model,
    load_sentence_model,
    resolve_model,
)
from quoteproof.retrieval.onnx_model import cache_dir, cached_model_path, unsupported_reason
from quoteproof.retrieval.onnx_quantize import quantized_path
from quoteproof.retrieval.retriever import RetrievalNotice

TEXTS = [
    "Remdesivir is given once daily by intravenous infusion.",
    "  Shingles causes a painful rash.  ",
    "ok",
    "Anticoagulation lowers the risk of stroke in atrial fibrillation. " * 40,
    "",
]
SOURCE = Path(resolve_model(DEFAULT_EMBED_MODEL))


def torch_vectors(texts: list[str]) -> np.ndarray:
    model = load_sentence_model("SentenceTransformer", DEFAULT_EMBED_MODEL, str(SOURCE))
    return np.asarray(model.encode(texts, normalize_embeddings=True, convert_to_numpy=True))


@pytest.fixture(scope="session")
def exported_graph(model_cache_in_a_temporary_folder: Path) -> Path:
    """The default model exported once per session into the session's cache."""
    assert Embedder().runtime == "onnx"
    graph = cached_model_path(SOURCE)
    assert graph.is_file() and graph.parent == cache_dir()
    return graph


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder for this test, and no model loaded before it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    load_onnx_model.cache_clear()
    load_onnx_passage_model.cache_clear()
    yield tmp_path / "quoteproof" / "onnx"
    load_onnx_model.cache_clear()
    load_onnx_passage_model.cache_clear()


def test_onnx_vectors_equal_torch_vectors(exported_graph: Path) -> None:
    embedder = Embedder(batch_size=2)
    vectors = embedder.embed(TEXTS)
    assert embedder.runtime == "onnx" and vectors.dtype == np.float32
    expected = torch_vectors(TEXTS)
    assert np.abs(vectors - expected).max() < 1e-5
    assert np.sum(vectors * expected, axis=1).min() >= 0.9999


def test_the_exported_graph_is_reused(exported_graph: Path) -> None:
    written = exported_graph.stat().st_mtime_ns
    load_onnx_model.cache_clear()
    assert Embedder().embed(TEXTS[:1]).shape == (1, 384)
    assert exported_graph.stat().st_mtime_ns == written
    copy = quantized_path(exported_graph)  # made when this session ingested with vectors
    assert {p.name for p in exported_graph.parent.iterdir()} <= {exported_graph.name, copy.name}


def test_a_corrupt_cached_graph_is_exported_again(own_cache: Path) -> None:
    graph = cached_model_path(SOURCE)
    graph.parent.mkdir(parents=True)
    graph.write_bytes(b"not an onnx graph")
    embedder = Embedder()
    assert embedder.runtime == "onnx"
    assert graph.stat().st_size > 1_000_000
    assert np.sum(embedder.embed(TEXTS[:2]) * torch_vectors(TEXTS[:2]), axis=1).min() >= 0.9999


def test_a_refused_export_falls_back_to_torch_and_says_so(
    own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(onnx_export, "MIN_COSINE", 1.5)  # no export can pass the check
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        embedder = Embedder()
        assert embedder.runtime == "torch"
    notices = [str(w.message) for w in caught if w.category is RetrievalNotice]
    assert len(notices) == 1 and "runs on torch: exported vectors differ" in notices[0]
    refusal = onnx_export.refusal_path(cached_model_path(SOURCE))
    assert list(own_cache.iterdir()) == [refusal]  # nothing half-written is left
    assert np.abs(embedder.embed(TEXTS) - torch_vectors(TEXTS)).max() < 1e-6


def torch_notices() -> list[str]:
    """Load the default embedder afresh; check it runs on torch and return the
    RetrievalNotice messages given while loading."""
    load_onnx_model.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert Embedder().runtime == "torch"
    return [str(w.message) for w in caught if w.category is RetrievalNotice]


def test_a_refused_export_is_remembered_until_its_key_changes(
    own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exports: list[int] = []

    def refuse(*_: object) -> None:
        exports.append(1)
        raise onnx_export.ExportError("export failed: simulated")

    monkeypatch.setattr(onnx_export, "export_checked", refuse)
    first = torch_notices()
    refusal = onnx_export.refusal_path(cached_model_path(SOURCE))
    assert len(exports) == 1 and len(first) == 1
    assert "runs on torch: export failed: simulated" in first[0] and str(refusal) in first[0]
    assert refusal.read_text(encoding="utf-8") == "export failed: simulated\n"

    assert torch_notices() == [] and len(exports) == 1  # another process: no retry
    assert list(own_cache.iterdir()) == [refusal]

    monkeypatch.setattr(onnx_model, "EXPORTER_VERSION", "another recipe")
    assert len(torch_notices()) == 1 and len(exports) == 2
    import onnxruntime

    monkeypatch.setattr(onnxruntime, "__version__", "0.0.0-other")
    assert len(torch_notices()) == 1 and len(exports) == 3
    assert len(list(own_cache.glob("*.refused"))) == 3


def test_an_export_that_failed_for_a_passing_cause_is_tried_again(
    own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk is no reason to give up the ONNX runtime for good."""
    exports: list[int] = []

    def disk_full(*_: object) -> None:
        exports.append(1)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(onnx_export, "_export", disk_full)
    for tries in (1, 2):
        notices = torch_notices()
        assert len(exports) == tries and len(notices) == 1
        assert "No space left on device" in notices[0] and "remembered" not in notices[0]
    assert list(own_cache.glob("*.refused")) == []


def test_a_refusal_that_cannot_be_remembered_is_tried_and_told_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file where the cache folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(not_a_folder))
    exports: list[int] = []

    def refuse(*_: object) -> None:
        exports.append(1)
        raise onnx_export.ExportError("export failed: simulated")

    monkeypatch.setattr(onnx_export, "export_checked", refuse)
    for tries in (1, 2):
        notices = torch_notices()
        assert len(exports) == tries and len(notices) == 1 and "remembered" not in notices[0]
    load_onnx_model.cache_clear()


def test_the_query_path_does_not_import_torch(exported_graph: Path) -> None:
    script = (
        "import sys\n"
        "from quoteproof.retrieval.embedder import Embedder\n"
        "embedder = Embedder()\n"
        "assert embedder.embed_query('rash').shape == (1, 384), embedder.runtime\n"
        "heavy = ('torch', 'transformers', 'sentence_transformers')\n"
        "print(embedder.runtime, sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["onnx", "[]"]


def test_progress_moves_once_per_batch(exported_graph: Path, tmp_path: Path, corpus: Path) -> None:
    counts: list[int] = []
    Embedder(batch_size=2).embed(TEXTS, on_batch=counts.append)
    assert counts == [2, 2, 1]

    with Index.open(tmp_path / "index", create=True) as index:
        index.ingest([corpus], embed=False)
        totals: list[int] = []
        report = embed_pending(
            index.store, Embedder(batch_size=2), on_start=totals.append, on_progress=counts.append
        )
    del counts[:3]
    assert totals == [report.embedded] and report.embedded > 2
    assert counts == [2] * (report.embedded // 2) + [1] * (report.embedded % 2)


def test_only_local_mean_pooling_models_run_on_onnx(tmp_path: Path) -> None:
    assert unsupported_reason(SOURCE) is None
    assert unsupported_reason(Path("org/some-hub-model")) == "not a local model folder"
    folder = Path(
        shutil.copytree(SOURCE, tmp_path / "model", ignore=shutil.ignore_patterns("*.safetensors"))
    )
    (folder / "model.safetensors").write_bytes(b"")
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    pooling.write_text(
        json.dumps(config | {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True})
    )
    assert unsupported_reason(folder) == "pooling pooling_mode_cls_token is not mean pooling"
    (folder / "tokenizer.json").unlink()
    assert unsupported_reason(folder) == "no tokenizer.json"


def test_passages_are_embedded_with_an_int8_copy_close_to_the_float32_vectors(
    exported_graph: Path,
) -> None:
    """An index's passages go through the int8 copy, made once next to the graph:
    its vectors are not the float32 ones, but within the checked cosine; questions
    stay float32 (equal to torch's)."""
    passages = [text for text in TEXTS if len(text.split()) >= 5]
    embedder = Embedder()
    bulk, exact = embedder.embed_passages(passages), embedder.embed(passages)
    assert quantized_path(exported_graph).is_file()
    assert np.abs(bulk - exact).max() > 1e-4  # another graph ran
    assert np.sum(bulk * exact, axis=1).min() >= onnx_quantize.MIN_PASSAGE_COSINE
    assert np.abs(embedder.embed_query(TEXTS[0]) - torch_vectors(TEXTS[:1])).max() < 1e-5
    assert embedder.embed_passages([]).shape == (0, 384)


def test_a_refused_int8_copy_leaves_passages_in_float32_and_says_so_once(
    own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(onnx_quantize, "MIN_PASSAGE_COSINE", 1.5)  # no copy can pass
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        embedder = Embedder()
        bulk = embedder.embed_passages(TEXTS[:2])
        load_onnx_passage_model.cache_clear()
        again = Embedder().embed_passages(TEXTS[:2])  # the refusal is remembered
    notices = [str(w.message) for w in caught if w.category is RetrievalNotice]
    assert len(notices) == 1 and "embedded in float32: int8 passage vectors differ" in notices[0]
    graph = cached_model_path(SOURCE)
    refusal = onnx_export.refusal_path(quantized_path(graph))
    assert sorted(own_cache.iterdir()) == sorted([graph, refusal])  # no half-written copy
    assert np.array_equal(bulk, embedder.embed(TEXTS[:2])) and np.array_equal(again, bulk)
