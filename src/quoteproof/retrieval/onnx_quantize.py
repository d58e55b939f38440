"""An int8 copy of an exported graph, for embedding passages in bulk.

Embedding the chunks is nearly all of `quoteproof ingest` with vectors. ONNX
Runtime's dynamic quantization (int8 weights, one scale per output channel, the
activations quantized as each batch runs) makes it about twice as fast on a CPU
with int8 instructions. The vectors change a little: passages stay within
`MIN_PASSAGE_COSINE` of the float32 graph's (checked on `CHECK_PASSAGES` when the
copy is made; on the demo corpus the mean is 0.995), but a text of a word or two
moves more (cosine 0.93 for "ok"), so questions and the sentences an answer ranks
are embedded with the float32 graph: a question's vector is exact and meets the
passages' vectors at the passages' precision.

The copy is kept next to the float32 graph, named after it and `QUANTIZE_VERSION`,
and a refused copy is remembered there like a refused export
(`onnx_export.remember_refusal`).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from quoteproof.retrieval.onnx_export import ExportError, write_checked
from quoteproof.retrieval.onnx_model import OnnxSentenceModel

QUANTIZE_VERSION = "1"
"""Part of the copy's file name: bump it when the quantization recipe changes."""
MIN_PASSAGE_COSINE = 0.98
"""The least cosine between the int8 copy's and the float32 graph's vector of any
check passage."""
CHECK_PASSAGES = (
    "The trial enrolled 1,062 adults hospitalised with COVID-19 and evidence of lower "
    "respiratory tract involvement; the primary outcome was time to recovery.",
    "Hand hygiene should be performed before touching a patient, before clean or aseptic "
    "procedures, after body fluid exposure risk, after touching a patient, and after "
    "touching patient surroundings.",
    "Shingles usually starts as a painful rash on one side of the face or body. The rash "
    "forms blisters that typically scab over in 7 to 10 days and clears up within 2 to 4 "
    "weeks. " * 6,
)
"""Passages of different lengths (one past the token limit) compared when the copy is
made."""


def quantized_path(graph: Path) -> Path:
    """Where the int8 copy of the float32 graph at `graph` is kept."""
    return graph.with_name(f"{graph.stem}-int8-{QUANTIZE_VERSION}.onnx")


def quantize_checked(graph: Path, source: Path, target: Path) -> OnnxSentenceModel:
    """Write the int8 copy of the float32 graph `graph` (tokenised from the model
    folder `source`) to `target`, atomically, and return it loaded. Raises
    ExportError, leaving `target` untouched, when quantization fails or a check
    passage's vector has a cosine below `MIN_PASSAGE_COSINE` with the float32
    graph's (`lasting` False for a full disk or no memory)."""

    def write(temporary: Path) -> OnnxSentenceModel:
        _quantize(graph, temporary)
        model = OnnxSentenceModel(temporary, source)
        exact = OnnxSentenceModel(graph, source).encode(CHECK_PASSAGES, len(CHECK_PASSAGES))
        cosine = float(np.min(np.sum(model.encode(CHECK_PASSAGES, 4) * exact, axis=1)))
        if cosine < MIN_PASSAGE_COSINE:
            raise ExportError(f"int8 passage vectors differ from float32 (cosine {cosine:.4f})")
        return model

    return write_checked(target, write, "quantization")


def _quantize(graph: Path, target: Path) -> None:
    """Write `graph` with int8 weights, one scale per output channel, to `target`."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.disable(logging.WARNING)  # its advice to pre-process, logged to the root logger
    try:
        quantize_dynamic(
            graph,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            # the fused attention's outputs have no inferred type: they are float32
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        logging.disable(logging.NOTSET)
