"""Whether an ingest into an index has not finished.

Files are stored one by one, each in its own transaction; their vectors and the
automatic refusal threshold are computed after the last one. An ingest cut short
between the two (Ctrl-C, a crash, an embedding model that will not load) leaves
documents without vectors and a threshold estimated on other documents, and an
index that answers from the wrong sources. So an ingest records that it started
(`mark_started`) before it stores anything, and that it finished (`mark_finished`)
after the threshold; `started_unfinished` tells the index to answer no question
in between.
"""

from __future__ import annotations

from datetime import UTC, datetime

from quoteproof.store.base import Store

UNFINISHED_INGEST_SETTING = "unfinished_ingest"
"""The setting holding when the unfinished ingest started (empty: none)."""


def mark_started(store: Store) -> None:
    """Record that an ingest starts now, unless an unfinished one is recorded (its
    start is kept)."""
    if started_unfinished(store) is None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        store.put_setting(UNFINISHED_INGEST_SETTING, now)


def mark_finished(store: Store) -> None:
    """Record that no ingest is unfinished."""
    store.put_setting(UNFINISHED_INGEST_SETTING, "")


def started_unfinished(store: Store) -> str | None:
    """When the unfinished ingest started (ISO 8601, UTC), or None when none is."""
    return store.get_setting(UNFINISHED_INGEST_SETTING) or None
