"""Where the embedding and reranking models run: on a CUDA GPU when there is one.

ONNX Runtime runs on CUDA when its `CUDAExecutionProvider` is there (the `gpu`
extra installs onnxruntime-gpu, the CUDA build), torch when `torch.cuda` sees a
device; otherwise both run on the CPU. `DEVICE_VARIABLE` chooses instead: `cpu`
keeps them on the CPU, `cuda` requires a GPU (an error names what is missing),
`auto` (or unset) is the default. The vectors do not depend on the device beyond
the tolerance the ONNX export is checked to (`onnx_export.MIN_COSINE`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from quoteproof.errors import RetrievalError

__all__ = [
    "CPU_PROVIDER",
    "CUDA_PROVIDER",
    "DEVICE_VARIABLE",
    "choose_providers",
    "choose_torch_device",
    "onnx_providers",
    "torch_device",
    "wanted_device",
]

DEVICE_VARIABLE = "QUOTEPROOF_EMBED_DEVICE"
CUDA_PROVIDER = "CUDAExecutionProvider"
CPU_PROVIDER = "CPUExecutionProvider"
_CHOICES = ("auto", "cpu", "cuda")


def wanted_device() -> str:
    """`auto`, `cpu` or `cuda`, as `DEVICE_VARIABLE` says (unset: `auto`); raises
    RetrievalError for any other value."""
    wanted = os.environ.get(DEVICE_VARIABLE, "").strip().lower() or "auto"
    if wanted not in _CHOICES:
        raise RetrievalError(f"${DEVICE_VARIABLE} is {wanted!r}: use one of {', '.join(_CHOICES)}")
    return wanted


def choose_torch_device(wanted: str, cuda_available: bool) -> str:
    """The torch device for the choice `wanted` (`wanted_device`) when CUDA is, or
    is not, available: `cuda` or `cpu`. Raises RetrievalError when `cuda` is
    wanted and not available."""
    if wanted == "cuda" and not cuda_available:
        raise RetrievalError(f"${DEVICE_VARIABLE}=cuda, but torch sees no CUDA device")
    return "cuda" if cuda_available and wanted != "cpu" else "cpu"


def choose_providers(wanted: str, available: Sequence[str]) -> list[str]:
    """The ONNX Runtime providers for the choice `wanted` among `available`: CUDA
    first when it is there and not refused, then the CPU. Raises RetrievalError
    when `cuda` is wanted and ONNX Runtime has no CUDA provider."""
    if wanted == "cuda" and CUDA_PROVIDER not in available:
        raise RetrievalError(
            f"${DEVICE_VARIABLE}=cuda, but ONNX Runtime has no {CUDA_PROVIDER}: "
            "pip install 'quoteproof[gpu]' (onnxruntime-gpu in place of onnxruntime)"
        )
    order = (CPU_PROVIDER,) if wanted == "cpu" else (CUDA_PROVIDER, CPU_PROVIDER)
    return [provider for provider in order if provider in available]


def torch_device() -> str:
    """The device torch models load on here (`choose_torch_device`)."""
    import torch

    return choose_torch_device(wanted_device(), torch.cuda.is_available())


def onnx_providers() -> list[str]:
    """The providers ONNX Runtime sessions use here (`choose_providers`)."""
    import onnxruntime as ort

    return choose_providers(wanted_device(), ort.get_available_providers())
