"""Where the embedding and reranking models run: on a CUDA GPU when there is one.

ONNX Runtime runs on CUDA when its `CUDAExecutionProvider` is there (the `gpu`
extra installs onnxruntime-gpu, the CUDA build), torch when `torch.cuda` sees a
device; otherwise both run on the CPU. `DEVICE_VARIABLE` chooses instead: `cpu`
keeps them on the CPU, `cuda` requires a GPU (an error names what is missing),
`auto` (or unset) is the default. The vectors do not depend on the device beyond
the tolerance the ONNX export is checked to (`onnx_export.MIN_COSINE`).
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Sequence
from pathlib import Path

from quoteproof.errors import RetrievalError

__all__ = [
    "CPU_PROVIDER",
    "CUDA_PROVIDER",
    "DEVICE_VARIABLE",
    "choose_providers",
    "choose_torch_device",
    "onnx_providers",
    "torch_cuda_build",
    "torch_device",
    "torch_runs_where_onnx_cannot",
    "wanted_device",
]

DEVICE_VARIABLE = "QUOTEPROOF_EMBED_DEVICE"
CUDA_PROVIDER = "CUDAExecutionProvider"
CPU_PROVIDER = "CPUExecutionProvider"
_CHOICES = ("auto", "cpu", "cuda")
_NVIDIA_DEVICES = ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia/version")
_CUDA_BUILD = re.compile(r"^cuda\b[^=\n]*=\s*['\"]\d", re.MULTILINE)


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


def torch_cuda_build(version_file: Path | None = None) -> bool:
    """True when the installed torch is a CUDA build (its `version.py`, or
    `version_file`, names a CUDA version), read without importing torch (a second
    or more): False when torch is not installed."""
    if version_file is None:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            return False
        version_file = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    try:
        return _CUDA_BUILD.search(version_file.read_text(encoding="utf-8")) is not None
    except OSError:
        return False


def torch_runs_where_onnx_cannot(onnx_available: Sequence[str]) -> bool:
    """True when torch would run on a CUDA GPU that ONNX Runtime (with the providers
    `onnx_available`) cannot use: the `dense` extra's CPU build of ONNX Runtime
    beside a CUDA build of torch on a machine with an NVIDIA device. Then torch on
    the GPU embeds instead of ONNX Runtime on the CPU. torch is imported only when
    its build and the machine both point to a GPU."""
    wanted = wanted_device()
    if wanted == "cpu" or CUDA_PROVIDER in onnx_available or not torch_cuda_build():
        return False
    if not any(Path(device).exists() for device in _NVIDIA_DEVICES):
        return False
    return torch_device() == "cuda"
