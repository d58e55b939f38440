"""`answer_stats`: what the audit log says about the answers of a time window, for
users without Prometheus (`quoteproof stats`): answers and refusals per day (the
refusal rate), refusal reasons, faithfulness per mode, tokens, rejected model
output by reason.

The same figures as the server's `GET /metrics` (`server.metrics`), but for the
times: the audit log does not record how long an answer took. Read from each
entry's recorded answer JSON; an entry recorded before faithfulness existed counts
everywhere but in the faithfulness figures. O(entries in the log).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from quoteproof.audit import all_entries, visible_to
from quoteproof.store.base import AuditEntry, Store

_VARIABLE = re.compile(r"'[^']*'|\"[^\"]*\"|“[^”]*”|\[[^\]]*\]|\d+(?:[.,]\d+)*")
REASON_CHARS = 80

__all__ = ["Day", "ModeFaithfulness", "Stats", "answer_stats", "reason_kind"]


@dataclass
class Day:
    """One day's answers (UTC): how many, how many refused."""

    day: str
    answers: int = 0
    refused: int = 0

    @property
    def refusal_rate(self) -> float:
        """The share of the day's answers refused."""
        return self.refused / self.answers if self.answers else 0.0


@dataclass
class ModeFaithfulness:
    """The faithfulness of one mode's answers that made claims: how many, their
    scores' mean and lowest, and by which method they were checked."""

    mode: str
    scores: list[float] = field(default_factory=list)
    methods: Counter[str] = field(default_factory=Counter)

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores)

    @property
    def lowest(self) -> float:
        return min(self.scores)


@dataclass
class Stats:
    """The answers of the window `since` .. `until` (ISO 8601 UTC, either None:
    open), as `answer_stats` counts them."""

    since: str | None
    until: str | None
    answers: int = 0
    days: dict[str, Day] = field(default_factory=dict)
    modes: Counter[str] = field(default_factory=Counter)
    refusal_reasons: Counter[str] = field(default_factory=Counter)
    faithfulness: dict[str, ModeFaithfulness] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    unreadable: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON-ready data (`stats --format json`)."""
        return {
            "since": self.since,
            "until": self.until,
            "answers": self.answers,
            "days": [
                {
                    "day": d.day,
                    "answers": d.answers,
                    "refused": d.refused,
                    "refusal_rate": round(d.refusal_rate, 4),
                }
                for d in sorted(self.days.values(), key=lambda d: d.day)
            ],
            "modes": dict(self.modes),
            "refusal_reasons": dict(self.refusal_reasons),
            "faithfulness": [
                {
                    "mode": f.mode,
                    "answers": len(f.scores),
                    "mean": round(f.mean, 4),
                    "lowest": round(f.lowest, 4),
                    "methods": dict(f.methods),
                }
                for f in sorted(self.faithfulness.values(), key=lambda f: f.mode)
            ],
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
            "rejected": dict(self.rejected),
            "unreadable": self.unreadable,
        }

    def add(self, time: str, answer: dict[str, Any]) -> None:
        """Count one recorded answer (its JSON data) recorded at `time`."""
        self.answers += 1
        day = self.days.setdefault(time[:10], Day(time[:10]))
        day.answers += 1
        mode = str(answer.get("mode", "quote"))
        self.modes[mode] += 1
        if answer.get("status") == "refused":
            day.refused += 1
            self.refusal_reasons[str(answer.get("refusal_reason"))] += 1
        usage = answer.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens", 0))
        self.completion_tokens += int(usage.get("completion_tokens", 0))
        for item in answer.get("rejected", ()):
            self.rejected[reason_kind(str(item.get("reason", "")))] += 1
        found = answer.get("faithfulness") or {}
        if found.get("score") is not None:
            per_mode = self.faithfulness.setdefault(mode, ModeFaithfulness(mode))
            per_mode.scores.append(float(found["score"]))
            per_mode.methods[str(found.get("method"))] += 1


def reason_kind(reason: str) -> str:
    """A rejection reason with its variable parts (quoted words, refs in brackets,
    numbers) each made `…`, cut to `REASON_CHARS` characters: few distinct values,
    fit for a metric label or a count."""
    return _VARIABLE.sub("…", " ".join(reason.split()))[:REASON_CHARS]


def answer_stats(
    store: Store,
    collections: Collection[str] | None,
    since: str | None = None,
    until: str | None = None,
) -> Stats:
    """The figures of the answers recorded from `since` (inclusive) to `until`
    (exclusive), ISO 8601 UTC texts compared as such (a date alone is its
    midnight), that a principal scoped to `collections` may see (None: all)."""
    return count_entries(
        (e for e in all_entries(store) if visible_to(e, collections)), since, until
    )


def count_entries(entries: Iterable[AuditEntry], since: str | None, until: str | None) -> Stats:
    """`Stats` of the `entries` recorded in the window (see `answer_stats`)."""
    stats = Stats(since, until)
    for entry in entries:
        if (since is not None and entry.time < since) or (
            until is not None and entry.time >= until
        ):
            continue
        try:
            data = json.loads(entry.body)
        except ValueError:
            stats.unreadable += 1
            continue
        if isinstance(data, dict):
            stats.add(entry.time, data)
        else:
            stats.unreadable += 1
    return stats
