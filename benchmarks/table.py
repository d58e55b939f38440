"""The combined table of `benchmarks/run.py`: each figure, its reference from the
same run and the ratio figure / reference, then notes and failures."""

from __future__ import annotations

from collections.abc import Sequence

from figures import Figure


def number(value: float | None) -> str:
    """`value` to about three significant digits (thousands grouped); `-` for None."""
    if value is None:
        return "-"
    size = abs(value)
    if size >= 1000:
        return f"{value:,.0f}"
    if size >= 100:
        return f"{value:.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1 or value == 0:
        return f"{value:.2f}"
    return f"{value:.3g}"


def ratio(value: float | None) -> str:
    """A ratio as `0.53x`, `14.8x`, `208x`; `-` for None."""
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f}x"
    if value >= 10:
        return f"{value:.1f}x"
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def format_table(
    title: str,
    rows: Sequence[tuple[str, Figure]],
    notes: Sequence[str] = (),
    failures: Sequence[str] = (),
) -> list[str]:
    """The lines of the table: `title`, a header, one line per (benchmark, figure) of
    `rows`; then, each after a blank line, `notes` and `failures` (as `failed: ...`)."""
    figure_width = max([len(f.name) for _, f in rows] + [6])
    ref_width = max([len(f.reference_name) for _, f in rows] + [9])
    lines = [
        title,
        f"{'benchmark':10} {'figure':{figure_width}} {'value':>9}  "
        f"{'reference':{ref_width}} {'ref value':>9} {'ratio':>8}",
    ]
    for benchmark, f in rows:
        lines.append(
            f"{benchmark:10} {f.name:{figure_width}} {number(f.value):>9}  "
            f"{f.reference_name:{ref_width}} {number(f.reference):>9} {ratio(f.ratio):>8}"
        )
    if notes:
        lines.append("")
        lines.extend(notes)
    if failures:
        lines.append("")
        lines.extend(f"failed: {line}" for line in failures)
    return lines
