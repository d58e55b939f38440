"""The automatic refusal threshold: what an index refuses before anyone calibrates it.

Bundled off-topic questions (`offtopic_probes.txt`) are asked of the index's own
retrieval; each probe is used only when its topic word occurs nowhere in the index.
The threshold sits MARGIN above the best evidence any used probe reached, so that a
question must match the documents better than any off-topic question did.

Probes made from the corpus itself (keyword queries from its sentences, its
headings) were tried as the answerable side and left out: their evidence fell below
that of off-topic questions (generic headings and tables are not questions), so
they could only pull the threshold down. A user calibration (`quoteproof
calibrate`) always wins over the automatic threshold.

The estimate is stored with a fingerprint of the current documents and the
embedding model, and made again when either changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cache
from importlib.resources import files

from quoteproof.retrieval.evidence import AUTOMATIC, Calibration
from quoteproof.store.base import Store

MARGIN = 0.05
MIN_PROBES = 10

Evidence = tuple[float | None, str]
"""A probe's retrieval evidence (None when nothing was retrieved) and its kind."""


@cache
def offtopic_probes() -> tuple[tuple[str, str], ...]:
    """The bundled `(topic word, question)` probes, in file order."""
    text = files("quoteproof.retrieval").joinpath("offtopic_probes.txt").read_text("utf-8")
    probes = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            topic, question = line.split("\t", 1)
            probes.append((topic.strip(), question.strip()))
    return tuple(probes)


def corpus_fingerprint(store: Store) -> str:
    """A digest of the current document versions and the embedding model of `store`."""
    digest = hashlib.sha256()
    for doc in sorted(store.list_documents(), key=lambda d: (d.doc_id, d.version)):
        digest.update(f"{doc.doc_id}:{doc.version}:{doc.sha256}\n".encode())
    space = store.embedding_space()
    digest.update(f"space:{space.model if space else ''}".encode())
    return digest.hexdigest()


def estimate_threshold(
    evidence_of: Callable[[str], Evidence],
    covers: Callable[[str], bool],
    fingerprint: str,
) -> Calibration | None:
    """Return the automatic threshold from the off-topic probes whose topic word the
    index does not `covers`, each scored by `evidence_of(question)`; None when fewer
    than MIN_PROBES are usable (an index that covers almost every topic)."""
    scores: list[float] = []
    kind = ""
    for topic, question in offtopic_probes():
        if covers(topic):
            continue
        evidence, kind = evidence_of(question)
        if evidence is not None:
            scores.append(evidence)
    if len(scores) < MIN_PROBES:
        return None
    return Calibration(
        evidence_kind=kind,
        threshold=max(scores) + MARGIN,
        answerable=0,
        unanswerable=len(scores),
        false_refusals=0,
        missed_refusals=0,
        source=AUTOMATIC,
        fingerprint=fingerprint,
    )
