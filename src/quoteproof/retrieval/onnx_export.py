"""Exporting a sentence-transformers model to ONNX once, checked against torch.

The export needs torch (the dense extra); running the exported graph does not
(`onnx_model`).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from quoteproof.retrieval.onnx_model import INPUT_NAMES, OUTPUT_NAME, OnnxSentenceModel

MIN_COSINE = 0.9999
"""The least cosine between the exported graph's and torch's vector of any check text."""
CHECK_TEXTS = (
    "What reduces the risk of stroke in atrial fibrillation?",
    "  Remdesivir is a nucleotide analogue prodrug.  ",
    "ok",
    "The trial enrolled 1,062 adults hospitalised with COVID-19 and evidence of lower "
    "respiratory tract involvement; the primary outcome was time to recovery. " * 12,
)
"""Texts of different lengths (one past the token limit) compared at export time."""


REFUSAL_SUFFIX = ".refused"
"""A refused export is remembered next to where its graph would be, with this suffix."""


class ExportError(Exception):
    """The model could not be exported, or its graph gives other vectors than torch;
    `remembered` when this is an earlier refusal read back from the cache; `lasting`
    unless the cause may pass (a full disk, no memory), so that trying again with the
    same model, recipe and runtime would fail the same way."""

    def __init__(self, reason: str, remembered: bool = False, lasting: bool = True) -> None:
        super().__init__(reason)
        self.remembered = remembered
        self.lasting = lasting


def refusal_path(graph: Path) -> Path:
    """Where a refused export of the cached graph `graph` is remembered (same key)."""
    return graph.with_suffix(REFUSAL_SUFFIX)


def remembered_refusal(graph: Path) -> ExportError | None:
    """The earlier refusal to export `graph` (the reason, `remembered`), or None
    when there is none under this key."""
    try:
        reason = refusal_path(graph).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return ExportError(reason or "export refused", remembered=True)


def remember_refusal(graph: Path, refusal: ExportError) -> Path | None:
    """Write the reason of `refusal` where `remembered_refusal(graph)` reads it,
    atomically; return that path, or None when the cache cannot be written (the
    export is then tried again next time)."""
    target = refusal_path(graph)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError:
        return None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(f"{refusal}\n")
        os.replace(name, target)
    except OSError:
        Path(name).unlink(missing_ok=True)
        return None
    return target


def export_checked(sentence_model: Any, source: Path, target: Path) -> OnnxSentenceModel:
    """Export the Transformer + mean pooling of `sentence_model` (a loaded
    `SentenceTransformer` from the folder `source`) to `target`, written
    atomically, and return it loaded. Raises ExportError, leaving `target`
    untouched, when export fails or any of `CHECK_TEXTS` gets a vector whose
    cosine with torch's is below `MIN_COSINE`."""

    def write(temporary: Path) -> OnnxSentenceModel:
        _export(sentence_model, temporary)
        model = OnnxSentenceModel(temporary, source)
        exported = model.encode(CHECK_TEXTS, batch_size=len(CHECK_TEXTS))
        expected = sentence_model.encode(
            list(CHECK_TEXTS), normalize_embeddings=True, convert_to_numpy=True
        )
        cosine = float(np.min(np.sum(exported * expected, axis=1)))
        if cosine < MIN_COSINE:
            raise ExportError(f"exported vectors differ from torch's (cosine {cosine:.6f})")
        return model

    return write_checked(target, write, "export")


def write_checked(
    target: Path, write: Callable[[Path], OnnxSentenceModel], step: str
) -> OnnxSentenceModel:
    """Run `write(temporary)`, which writes a graph to a temporary file beside
    `target`, checks it and returns it loaded; move it to `target` and return it.
    Raises ExportError, leaving `target` untouched and no temporary file, when
    `write` raises one or fails otherwise (the message starts "`step` failed:";
    `lasting` False for a full disk or no memory, which may pass)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    temporary = Path(name)
    try:
        model = write(temporary)
        os.replace(temporary, target)
        return model
    except ExportError:
        raise
    except (OSError, MemoryError) as exc:  # may pass: tried again next time
        raise ExportError(f"{step} failed: {exc}", lasting=False) from exc
    except Exception as exc:  # any exporter, quantizer or runtime failure
        raise ExportError(f"{step} failed: {exc}") from exc
    finally:
        temporary.unlink(missing_ok=True)


def _export(sentence_model: Any, path: Path) -> None:
    """Write the ONNX graph of `sentence_model`'s transformer and mean pooling,
    with dynamic batch and sequence axes, to `path`."""
    import torch

    class MeanPooled(torch.nn.Module):
        def __init__(self, transformer: torch.nn.Module) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, types: torch.Tensor
        ) -> torch.Tensor:
            tokens = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=types
            )[0]
            weights = attention_mask.unsqueeze(-1).to(tokens.dtype)
            pooled: torch.Tensor = (tokens * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return pooled

    transformer = sentence_model[0].auto_model
    attention = transformer.config._attn_implementation
    transformer.set_attn_implementation("eager")  # a pattern the optimizer fuses
    module = MeanPooled(transformer).eval()
    sample = torch.ones((2, 8), dtype=torch.long)
    quiet = contextlib.redirect_stdout(io.StringIO())
    with warnings.catch_warnings(), quiet, contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            with torch.no_grad():
                _trace(module, sample, path)
        finally:
            transformer.set_attn_implementation(attention)
        _fuse(path, transformer.config)


def _trace(module: Any, sample: Any, path: Path) -> None:
    import torch

    axes = {name: {0: "batch", 1: "tokens"} for name in INPUT_NAMES}
    torch.onnx.export(
        module,
        (sample, sample, torch.zeros_like(sample)),
        str(path),
        input_names=list(INPUT_NAMES),
        output_names=[OUTPUT_NAME],
        dynamic_axes={**axes, OUTPUT_NAME: {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )


def _fuse(path: Path, config: Any) -> None:
    """Rewrite the graph at `path` with ONNX Runtime's transformer optimizer (fused
    attention, GELU and layer norms) when it takes it as a BERT-like model; leave
    it as it is otherwise (the check against torch follows either way)."""
    try:
        from onnxruntime.transformers.optimizer import optimize_model

        optimized = optimize_model(
            str(path),
            model_type="bert",
            num_heads=int(config.num_attention_heads),
            hidden_size=int(config.hidden_size),
        )
        optimized.save_model_to_file(str(path))
    except Exception:  # any model the optimizer does not know: the plain graph stays
        return
