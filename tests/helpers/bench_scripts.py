"""The scripts of benchmarks/, loaded as `python benchmarks/NAME.py` runs them (their
shared modules, such as figures, import as top-level modules: tests/benchmarks/conftest.py
puts BENCH_DIR on sys.path)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
BENCH_DIR = REPO / "benchmarks"


def load_script(name: str) -> ModuleType:
    """benchmarks/NAME.py, imported by its path as the module `bench_NAME` (a name no
    other module has: `retrieval` or `serve` alone could be something else)."""
    module_name = f"bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, BENCH_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
