"""The evaluation report's plots as PNG bytes, drawn with matplotlib's Agg canvas.

Figures are made with the object API (`matplotlib.figure.Figure` on a
`FigureCanvasAgg`), so nothing here touches pyplot's global state or the process's
chosen backend. matplotlib is optional (`pip install 'quoteproof[eval]'`):
`plots_available()` says whether it is installed; each function returns None when
there is nothing to draw.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from importlib.util import find_spec
from typing import TYPE_CHECKING

from quoteproof.evaluation.metrics import percentile

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "grade_distribution",
    "latency_histogram",
    "metric_bars",
    "plots_available",
    "recall_curve",
]

_BLUE = "#1d4ed8"
_SIZE = (6.4, 3.2)


def plots_available() -> bool:
    """Whether matplotlib is installed."""
    return find_spec("matplotlib") is not None


def _figure() -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=_SIZE, dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def latency_histogram(latencies_ms: Sequence[float]) -> bytes | None:
    """A histogram of ask latencies (ms), with the p50 and p95 marked."""
    if not latencies_ms:
        return None
    figure = _figure()
    axes = figure.add_subplot()
    axes.hist(latencies_ms, bins=min(30, max(5, len(latencies_ms) // 3)), color=_BLUE)
    for q, style in ((50, "--"), (95, ":")):
        value = percentile(latencies_ms, q)
        if value is not None:
            axes.axvline(value, color="#92400e", linestyle=style, label=f"p{q} {value:,.0f} ms")
    axes.set_xlabel("latency of ask (ms)")
    axes.set_ylabel("questions")
    axes.legend()
    return _png(figure)


def metric_bars(values: Mapping[str, float | None]) -> bytes | None:
    """A horizontal bar per rate metric (0-100 %); metrics without a value are left
    out."""
    shown = [(label, value) for label, value in values.items() if value is not None]
    if not shown:
        return None
    figure = _figure()
    axes = figure.add_subplot()
    labels = [label for label, _ in reversed(shown)]
    percents = [value * 100 for _, value in reversed(shown)]
    bars = axes.barh(labels, percents, color=_BLUE)
    axes.bar_label(bars, labels=[f"{p:.1f}%" for p in percents], padding=3)
    axes.set_xlim(0, 112)
    axes.set_xlabel("%")
    return _png(figure)


def recall_curve(points: Sequence[tuple[int, float]]) -> bytes | None:
    """Retrieval recall (0-100 %) against k, from `(k, recall)` points."""
    if not points:
        return None
    figure = _figure()
    axes = figure.add_subplot()
    ks = [k for k, _ in points]
    axes.plot(ks, [r * 100 for _, r in points], marker="o", markersize=3, color=_BLUE)
    axes.set_xlabel("k (hits retrieved)")
    axes.set_ylabel("recall of gold sources (%)")
    axes.set_ylim(0, 105)
    axes.set_xlim(0.5, max(ks) + 0.5)
    axes.grid(alpha=0.3)
    return _png(figure)


def grade_distribution(counts: Mapping[int, int]) -> bytes | None:
    """A bar per grade 1-5: how many answers the grader gave it (None when no
    answer was graded)."""
    if not any(counts.values()):
        return None
    from matplotlib.ticker import MaxNLocator

    figure = _figure()
    axes = figure.add_subplot()
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    grades = sorted(counts)
    bars = axes.bar([str(g) for g in grades], [counts[g] for g in grades], color=_BLUE)
    axes.bar_label(bars, padding=2)
    axes.set_ylim(0, max(counts.values()) * 1.15)
    axes.set_xlabel("grade (1 worst, 5 best)")
    axes.set_ylabel("answers")
    return _png(figure)
