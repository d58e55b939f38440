"""Drift between two evaluation runs (`quoteproof eval --compare OLD.json`).

Works on saved runs (`report.run_to_dict` data), so any earlier run file compares
with a new one: each metric old → new with its change and whether that is better
or worse, and the items (matched by `id`) whose outcome changed: refused ↔
answered (or an error), a gold source retrieved within top_k lost or gained.
Pure functions; O(items).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from quoteproof.evaluation.report import flat_metrics, format_delta, format_value, metric_specs

__all__ = ["Drift", "ItemChange", "MetricChange", "compare_reports", "drift_lines", "drift_to_dict"]

Verdict = Literal["better", "worse", "same"]


@dataclass(frozen=True)
class MetricChange:
    """One metric in both runs; `delta` and `verdict` are None when either lacks it."""

    key: str
    label: str
    old_text: str
    new_text: str
    delta_text: str
    old: float | None
    new: float | None
    delta: float | None
    verdict: Verdict | None


@dataclass(frozen=True)
class ItemChange:
    """An item whose outcome differs: `change` says how (`refused → answered`,
    `recall hit lost`, ...)."""

    id: str
    change: str


@dataclass(frozen=True)
class Drift:
    """What changed from the run in `against` (started `against_started`) to this one."""

    against: str
    against_started: str | None
    metrics: tuple[MetricChange, ...]
    items: tuple[ItemChange, ...]
    only_old: tuple[str, ...] = ()
    only_new: tuple[str, ...] = ()


def _verdict(delta: float, higher_is_better: bool) -> Verdict:
    if abs(delta) < 1e-12:
        return "same"
    return "better" if (delta > 0) == higher_is_better else "worse"


def _by_id(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    items = report.get("items")
    return {
        str(item["id"]): item
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict) and "id" in item
    }


def _item_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    changes = []
    if old.get("status") != new.get("status"):
        changes.append(f"{old.get('status')} → {new.get('status')}")
    old_hit, new_hit = old.get("recall_hit"), new.get("recall_hit")
    if old_hit is True and new_hit is False:
        changes.append("recall hit lost")
    elif old_hit is False and new_hit is True:
        changes.append("recall hit gained")
    old_verdict, new_verdict = _verdict_of(old), _verdict_of(new)
    if old_verdict and new_verdict and old_verdict != new_verdict:
        changes.append(f"graded {old_verdict} → {new_verdict}")
    return changes


def _verdict_of(item: Mapping[str, Any]) -> str | None:
    """The grader's verdict on a saved item (None: not graded)."""
    grade = item.get("grade")
    verdict = grade.get("verdict") if isinstance(grade, dict) else None
    return verdict if isinstance(verdict, str) else None


def compare_reports(
    old: Mapping[str, Any], new: Mapping[str, Any], against: str = "earlier run"
) -> Drift:
    """Compare the earlier run `old` with `new` (both saved-run data); `against` names
    the earlier run (its file) in the output."""
    old_metrics = old.get("metrics") if isinstance(old.get("metrics"), dict) else {}
    new_metrics = new.get("metrics") if isinstance(new.get("metrics"), dict) else {}
    assert isinstance(old_metrics, dict) and isinstance(new_metrics, dict)
    old_flat, new_flat = flat_metrics(old_metrics), flat_metrics(new_metrics)
    metrics = []
    for spec in metric_specs(old_metrics, new_metrics):
        before, after = old_flat.get(spec.key), new_flat.get(spec.key)
        delta = after - before if before is not None and after is not None else None
        metrics.append(
            MetricChange(
                key=spec.key,
                label=spec.label,
                old_text=format_value(before, spec.kind),
                new_text=format_value(after, spec.kind),
                delta_text=format_delta(delta, spec.kind),
                old=before,
                new=after,
                delta=delta,
                verdict=None if delta is None else _verdict(delta, spec.higher_is_better),
            )
        )
    old_items, new_items = _by_id(old), _by_id(new)
    items = [
        ItemChange(item_id, change)
        for item_id, item in new_items.items()
        if item_id in old_items
        for change in _item_changes(old_items[item_id], item)
    ]
    started = old.get("started")
    return Drift(
        against=against,
        against_started=started if isinstance(started, str) else None,
        metrics=tuple(metrics),
        items=tuple(items),
        only_old=tuple(i for i in old_items if i not in new_items),
        only_new=tuple(i for i in new_items if i not in old_items),
    )


def drift_to_dict(drift: Drift) -> dict[str, Any]:
    """Return `drift` as JSON-ready data (the report's `compare` field)."""
    return {
        "against": drift.against,
        "against_started": drift.against_started,
        "metrics": [
            {
                "key": m.key,
                "label": m.label,
                "old": m.old,
                "new": m.new,
                "delta": m.delta,
                "verdict": m.verdict,
                "old_text": m.old_text,
                "new_text": m.new_text,
                "delta_text": m.delta_text,
            }
            for m in drift.metrics
        ],
        "items": [{"id": c.id, "change": c.change} for c in drift.items],
        "only_old": list(drift.only_old),
        "only_new": list(drift.only_new),
    }


def drift_lines(drift: Drift) -> list[str]:
    """The drift as plain lines for the terminal: one per metric
    (`quote recall: 51.2% → 49.8% (-1.4 pp, worse)`), then one per changed item."""
    lines = [f"changes since {drift.against}:"]
    for m in drift.metrics:
        if m.verdict is None:
            change = "n/a" if m.old_text == m.new_text else "no comparison"
        elif m.verdict == "same":
            change = "unchanged"
        else:
            change = f"{m.delta_text}, {m.verdict}"
        lines.append(f"  {m.label}: {m.old_text} → {m.new_text} ({change})")
    lines.append(f"items whose outcome changed: {len(drift.items)}")
    lines += [f"  {c.id}: {c.change}" for c in drift.items]
    if drift.only_old:
        lines.append(f"items only in {drift.against}: {', '.join(drift.only_old)}")
    if drift.only_new:
        lines.append(f"items only in this run: {', '.join(drift.only_new)}")
    return lines
