"""The BEIR SciFact data set in ../shared/data/beir-scifact, as benchmarks use it."""

from __future__ import annotations

import csv
import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCIFACT = REPO.parent / "shared" / "data" / "beir-scifact"


def corpus() -> dict[str, tuple[str, str]]:
    """Return `{doc id: (title, abstract)}`."""
    docs = {}
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            docs[doc["_id"]] = (doc["title"], doc["text"])
    return docs


def write_folder(root: Path) -> Path:
    """Write each abstract as `ID.txt` (title, blank line, abstract) under `root/scifact`."""
    folder = root / "scifact"
    folder.mkdir()
    for doc_id, (title, text) in corpus().items():
        (folder / f"{doc_id}.txt").write_text(f"{title}\n\n{text}\n", encoding="utf-8")
    return folder


def queries() -> dict[str, str]:
    """Return `{query id: text}` for every query."""
    lines = (SCIFACT / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return {item["_id"]: item["text"] for item in map(json.loads, lines)}


def test_qrels() -> dict[str, dict[str, int]]:
    """Return the test judgements: `{query id: {doc id: relevance}}`."""
    qrels: dict[str, dict[str, int]] = {}
    with (SCIFACT / "qrels" / "test.tsv").open(encoding="utf-8") as rows:
        for row in csv.DictReader(rows, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return qrels
