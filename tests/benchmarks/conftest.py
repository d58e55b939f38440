"""benchmarks/ on sys.path, as `python benchmarks/NAME.py` has it, so that the tests
import its shared modules (figures, table, run) by their top-level names."""

from __future__ import annotations

import sys

from helpers.bench_scripts import BENCH_DIR

if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))
