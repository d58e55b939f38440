"""`quoteproof stats` (`service.stats`): the figures of a time window, read from the
audit log: refusal rate per day, faithfulness per mode."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from helpers.cli import cli
from quoteproof.service.stats import count_entries, reason_kind
from quoteproof.store.base import AuditEntry


def entry(time: str, **answer: Any) -> AuditEntry:
    body = {"mode": "quote", "status": "answered", "refusal_reason": None, **answer}
    return AuditEntry(1, "e", time, "u", ("A",), json.dumps(body), "p", "h")


def faith(score: float | None, method: str = "deterministic") -> dict[str, Any]:
    return {"method": method, "score": score, "claims": [], "removed": 0}


ENTRIES = [
    entry("2026-11-01T10:00:00+00:00", mode="cite", faithfulness=faith(1.0)),
    entry("2026-11-01T11:00:00+00:00", mode="cite", faithfulness=faith(0.5, "model")),
    entry("2026-11-01T12:00:00+00:00", status="refused", refusal_reason="no_relevant_sources"),
    entry("2026-11-02T09:00:00+00:00", usage={"prompt_tokens": 10, "completion_tokens": 3}),
    entry(  # recorded before faithfulness existed
        "2026-11-02T10:00:00+00:00",
        status="refused",
        refusal_reason="model_no_answer",
        rejected=[{"raw": "x", "reason": "unknown ref 'x9'"}],
    ),
    entry("2026-11-02T11:00:00+00:00", faithfulness=faith(None)),
    AuditEntry(9, "bad", "2026-11-02T12:00:00+00:00", None, ("A",), "not json", "p", "h"),
    entry("2026-11-03T00:00:00+00:00", mode="rationale", faithfulness=faith(0.0)),
]


def test_refusal_rate_per_day_and_faithfulness_per_mode() -> None:
    stats = count_entries(ENTRIES, "2026-11-01", "2026-11-03")
    data = stats.to_dict()
    assert data["answers"] == 6 and data["unreadable"] == 1
    assert data["days"] == [
        {"day": "2026-11-01", "answers": 3, "refused": 1, "refusal_rate": 0.3333},
        {"day": "2026-11-02", "answers": 3, "refused": 1, "refusal_rate": 0.3333},
    ]
    assert data["refusal_reasons"] == {"no_relevant_sources": 1, "model_no_answer": 1}
    assert data["faithfulness"] == [
        {
            "mode": "cite",
            "answers": 2,
            "mean": 0.75,
            "lowest": 0.5,
            "methods": {"deterministic": 1, "model": 1},
        }
    ]
    assert data["tokens"] == {"prompt": 10, "completion": 3}
    assert data["rejected"] == {reason_kind("unknown ref 'x9'"): 1} == {"unknown ref …": 1}
    assert data["modes"] == {"cite": 2, "quote": 4}
    assert count_entries(ENTRIES, "2026-11-03", None).faithfulness["rationale"].scores == [0.0]


def test_the_stats_command_reads_the_audit_log(index_dir: Path) -> None:
    index = str(index_dir)
    assert cli("ask", "How is shingles treated?", "--index", index).returncode == 0
    refused = cli("ask", "What is the capital of Zorblat?", "--index", index)
    assert refused.returncode == 0, refused.stderr
    ran = cli("stats", "--index", index, "--json")
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    today = datetime.now(UTC).date().isoformat()
    assert data["answers"] == 2 and data["days"] == [
        {"day": today, "answers": 2, "refused": 1, "refusal_rate": 0.5}
    ]
    text = cli("stats", "--index", index, "--days", "1")
    assert text.returncode == 0, text.stderr
    assert "Refusal rate per day (UTC)" in text.stdout
    assert f"  {today}        2        1   50.0%" in text.stdout
    assert "Faithfulness per mode (answers with claims)" in text.stdout
    empty = cli("stats", "--index", index, "--since", "2000-01-01", "--until", "2000-01-02")
    assert "(all collections): 0" in empty.stdout
    assert "  (none: no answer in this window has a faithfulness score)" in empty.stdout
    assert "  none" not in empty.stdout.splitlines()
