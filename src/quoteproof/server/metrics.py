"""The server's metrics, in the Prometheus text format (`GET /metrics`).

One `Metrics` per app, its own `prometheus_client` registry. Every series carries
a `collection` label: the collections its answer, verification or ingest job
concerned, sorted and joined with `,` (`ALL` when it was asked over every
collection). `observe_answer` is called once per answer recorded in the audit log
(`ScopedIndex.ask`'s observer), whichever face asked, so each answer moves each
counter once.

`exposition(principal)` renders the series the principal may see: all of them for
a principal that sees every collection (an admin key, or `serve --no-auth`); for a
key limited to collections, only the series whose collections are all its own, so
another collection's name never appears.

Several processes (`serve --workers N`): prometheus-client's multiprocess mode. The
parent makes a directory for this server alone and names it in
`PROMETHEUS_MULTIPROC_DIR` before it starts the workers (`server.workers`), so that
each worker's prometheus-client writes its values to files there (one per process
and kind); a scrape, whichever worker answers it, sums the files of every worker,
so the counts are the whole server's. Counters and histograms only (no gauges), so
a worker that died and was replaced still counts what it did.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, values
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector

from quoteproof.audit import ALL_COLLECTIONS as ALL
from quoteproof.service import AnswerTiming, Asked, Principal
from quoteproof.service.stats import reason_kind

__all__ = ["ALL", "CONTENT_TYPE", "MULTIPROCESS_VARIABLE", "Metrics", "collection_label"]

MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
"""The environment variable that puts prometheus-client in multiprocess mode: it
must name the directory before prometheus-client is imported."""

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
SHARES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 1.0)


def collection_label(collections: Iterable[str] | None) -> str:
    """The `collection` label of `collections` (None: every collection, `ALL`)."""
    return ALL if collections is None else ",".join(sorted(set(collections)))


def _counter(registry: CollectorRegistry, what: str, documentation: str, *labels: str) -> Counter:
    """A counter `quoteproof_{what}` by collection, then by `labels`."""
    return Counter(f"quoteproof_{what}", documentation, ["collection", *labels], registry=registry)


def _seconds(registry: CollectorRegistry, what: str, documentation: str) -> Histogram:
    """A histogram `quoteproof_{what}_seconds` by collection, buckets `SECONDS`."""
    return Histogram(
        f"quoteproof_{what}_seconds",
        documentation,
        ["collection"],
        buckets=SECONDS,
        registry=registry,
    )


class Metrics:
    """The counters and histograms of one server (see the module docstring).

    `directory` None: this process's own counts. Otherwise the server's
    multiprocess directory: counts go to files there and a scrape sums every
    process's; raises RuntimeError unless prometheus-client was imported with
    `MULTIPROCESS_VARIABLE` naming that directory (else the counts would stay in
    this process)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.registry = CollectorRegistry()
        self._scraped = self.registry
        if directory is not None:
            named = os.environ.get(MULTIPROCESS_VARIABLE)
            if (
                not getattr(values.ValueClass, "_multiprocess", False)
                or named is None
                or (Path(named).resolve() != directory.resolve())
            ):
                raise RuntimeError(
                    f"the metrics of several processes need ${MULTIPROCESS_VARIABLE}={directory} "
                    "before prometheus_client is imported"
                )
            self._scraped = CollectorRegistry()
            MultiProcessCollector(self._scraped, path=str(directory))  # type: ignore[no-untyped-call]
        r = self.registry
        self.answers = _counter(
            r,
            "answers",
            "Answers recorded, by mode, status and refusal reason (none: answered).",
            "mode",
            "status",
            "refusal_reason",
        )
        self.retrieval = _seconds(r, "retrieval", "Time spent retrieving an answer's sources.")
        self.model = _seconds(
            r, "model", "Time an answer spent in model calls (answers that called a model)."
        )
        self.total = _seconds(
            r, "answer", "Time to make an answer, from question to recorded answer's content."
        )
        self.tokens = _counter(
            r, "tokens", "Tokens the model servers reported, by kind (prompt, completion).", "kind"
        )
        self.rejected = _counter(
            r,
            "quotes_rejected",
            "Model output not shown (quotes that did not resolve, ...), by reason.",
            "reason",
        )
        self.faithfulness = Histogram(
            "quoteproof_faithfulness",
            "Share of an answer's claims its cited passages support (answers with claims).",
            ["collection", "mode", "method"],
            buckets=SHARES,
            registry=r,
        )
        self.verify_failures = _counter(
            r, "verify_failures", "Saved answers that failed verification (a quote or the seal)."
        )
        self.ingest_jobs = _counter(
            r, "ingest_jobs", "Ingest jobs ended, by state (done, failed).", "state"
        )
        self.ingest_failures = _counter(r, "ingest_failures", "Files of ingest jobs that failed.")

    def observe_answer(
        self, asked: Asked, collections: tuple[str, ...] | None, timing: AnswerTiming
    ) -> None:
        """Count one recorded answer: its mode, status and refusal reason, its times,
        tokens, rejected output and faithfulness."""
        answer, where = asked.answer, collection_label(collections)
        reason = answer.refusal_reason or "none"
        self.answers.labels(where, answer.mode, answer.status, reason).inc()
        self.retrieval.labels(where).observe(timing.retrieval_s)
        if answer.calls:
            self.model.labels(where).observe(timing.model_s)
        self.total.labels(where).observe(timing.total_s)
        if answer.usage is not None:
            self.tokens.labels(where, "prompt").inc(answer.usage.prompt_tokens)
            self.tokens.labels(where, "completion").inc(answer.usage.completion_tokens)
        for item in answer.rejected:
            self.rejected.labels(where, reason_kind(item.reason)).inc()
        found = answer.faithfulness
        if found is not None and found.score is not None:
            self.faithfulness.labels(where, answer.mode, found.method).observe(found.score)

    def verify_failed(self, collections: tuple[str, ...] | None) -> None:
        """Count a saved answer that failed verification for a principal who sees
        `collections`."""
        self.verify_failures.labels(collection_label(collections)).inc()

    def ingest_ended(self, collection: str, state: str, failed_files: int) -> None:
        """Count an ingest job of `collection` that ended in `state`, with
        `failed_files` files that failed."""
        self.ingest_jobs.labels(collection, state).inc()
        if failed_files:
            self.ingest_failures.labels(collection).inc(failed_files)

    def exposition(self, principal: Principal) -> bytes:
        """The metrics `principal` may see, in the Prometheus text format (every
        process's, summed, in multiprocess mode)."""
        if principal.collections is None:
            return generate_latest(self._scraped)
        return generate_latest(_Visible(self._scraped, set(principal.collections)))


class _Visible:
    """A registry's metrics limited to the series whose collections are all in
    `allowed` (a collector `generate_latest` can read)."""

    def __init__(self, registry: CollectorRegistry, allowed: set[str]) -> None:
        self._registry = registry
        self._allowed = allowed

    def _visible(self, label: str | None) -> bool:
        return label is not None and label != ALL and set(label.split(",")) <= self._allowed

    def collect(self) -> Iterator[Metric]:
        for metric in self._registry.collect():
            kept = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            kept.samples = [s for s in metric.samples if self._visible(s.labels.get("collection"))]
            yield kept
