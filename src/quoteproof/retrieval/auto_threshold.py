"""The automatic refusal threshold: what an index refuses before anyone calibrates it.

Bundled off-topic questions (`offtopic_probes.txt`) are asked of the index's own
retrieval; each probe is used only when its topic occurs nowhere in the index under
any of its names (a leaflet on paracetamol answers the probe on acetaminophen).
The threshold sits MARGIN above the best evidence any used probe reached, so that a
question must match the documents better than any off-topic question did. On the
cosine scale (dense evidence; a reranker's scores have a scale of their own), the one
probe whose evidence stands more than OUTLIER_GAP above that of every other is set
aside first: the index covers its topic in other words ("How do I reset my router
password?" over an IT helpdesk's page on resetting passwords), so it is no off-topic
question there, and it would lift the threshold over the index's own answerable
questions.

Probes made from the corpus itself (keyword queries from its sentences, its
headings) were tried as the answerable side and left out: their evidence fell below
that of off-topic questions (generic headings and tables are not questions), so
they could only pull the threshold down. A user calibration (`quoteproof
calibrate`) always wins over the automatic threshold.

The estimate is stored with a fingerprint of the current documents, the embedding
model, the probes and the rule, and made again when any of them changes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from functools import cache
from importlib.resources import files

from quoteproof.retrieval.evidence import AUTOMATIC, COSINE, WITH_SENTENCES, Calibration
from quoteproof.store.base import Store

MARGIN = 0.05
MIN_PROBES = 10
OUTLIER_GAP = 0.1

Evidence = tuple[float | None, str]
"""A probe's retrieval evidence (None when nothing was retrieved) and its kind."""


@cache
def _probe_file() -> str:
    return files("quoteproof.retrieval").joinpath("offtopic_probes.txt").read_text("utf-8")


@cache
def offtopic_probes() -> tuple[tuple[tuple[str, ...], str], ...]:
    """The bundled `(topic names, question)` probes, in file order."""
    probes = []
    for line in _probe_file().splitlines():
        if line.strip() and not line.startswith("#"):
            topic, question = line.split("\t", 1)
            names = tuple(name.strip() for name in topic.split("|"))
            probes.append((names, question.strip()))
    return tuple(probes)


PHRASE_HITS = 20
"""Passages a topic name of several words ("wi-fi") is looked for in, best first."""


def store_covers(store: Store, name: str) -> bool:
    """Whether the index `store` holds the topic `name`: any passage BM25 finds for a
    one-word name ("router"; its other endings too), one of the PHRASE_HITS it ranks
    first that has the words of a longer name together, joined by a space or a hyphen
    or not at all ("wi-fi": "Wi-Fi", "WiFi"; not "Madison, WI" nor "sci-fi")."""
    parts = re.findall(r"[^\W_]+", name)
    hits = store.search_bm25(name, 1 if len(parts) < 2 else PHRASE_HITS, None)
    if len(parts) < 2:
        return bool(hits)
    phrase = re.compile(r"\b" + r"[\s-]?".join(map(re.escape, parts)) + r"\b", re.IGNORECASE)
    return any(phrase.search(hit.chunk.text) for hit in hits)


def corpus_fingerprint(store: Store) -> str:
    """A digest of the current document versions and the embedding model of `store`,
    and of the bundled probes and the rule that reads them (a release that changes
    either estimates the threshold again)."""
    digest = hashlib.sha256()
    for doc in sorted(store.list_documents(), key=lambda d: (d.doc_id, d.version)):
        digest.update(f"{doc.doc_id}:{doc.version}:{doc.sha256}\n".encode())
    space = store.embedding_space()
    digest.update(f"space:{space.model if space else ''}\n".encode())
    digest.update(f"rule:{MARGIN}:{OUTLIER_GAP}\n".encode())
    digest.update(_probe_file().encode())
    return digest.hexdigest()


def estimate_threshold(
    evidence_of: Callable[[str], Evidence],
    covers: Callable[[str], bool],
    fingerprint: str,
) -> Calibration | None:
    """Return the automatic threshold from the off-topic probes none of whose topic
    names the index `covers`, each scored by `evidence_of(question)`, but for one
    that stands out (`OUTLIER_GAP`, cosine evidence only); None when fewer than
    MIN_PROBES are usable (an index that covers almost every topic)."""
    scores: list[float] = []
    kind = ""
    for names, question in offtopic_probes():
        if any(covers(name) for name in names):
            continue
        evidence, kind = evidence_of(question)
        if evidence is not None:
            scores.append(evidence)
    if len(scores) < MIN_PROBES:
        return None
    scores.sort()
    cosine = kind.partition(":")[0] in (COSINE, WITH_SENTENCES)
    if cosine and len(scores) > MIN_PROBES and scores[-1] - scores[-2] > OUTLIER_GAP:
        scores.pop()
    return Calibration(
        evidence_kind=kind,
        threshold=scores[-1] + MARGIN,
        answerable=0,
        unanswerable=len(scores),
        false_refusals=0,
        missed_refusals=0,
        source=AUTOMATIC,
        fingerprint=fingerprint,
    )
