"""Serving under load: requests/s and p50/p95 latency of `quoteproof serve` on
127.0.0.1, with concurrent clients asking (extractive backend) and searching while
a background ingest of uploaded documents runs.

    python benchmarks/serve.py [--clients 20] [--seconds 30] [--uploads 200]

The demo corpus is ingested into a temporary index first (BM25 only, so the figures
do not depend on the embedding model). The run also checks that no request failed
and that every uploaded document is listed exactly once afterwards.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from helpers.load import make_documents, run_load, running_server  # noqa: E402
from quoteproof import Index  # noqa: E402
from quoteproof.retrieval.retriever import RetrievalNotice  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--uploads", type=int, default=200)
    args = parser.parse_args()
    warnings.simplefilter("ignore", RetrievalNotice)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with Index.open(root / "index", create=True) as index:
            index.ingest([REPO / "examples" / "corpus"], embed=False)
        documents = make_documents(root / "uploads", args.uploads)
        with running_server(root / "index", root / "server.log") as url:
            report = run_load(url, documents, args.clients, args.seconds)
    print(
        f"{args.clients} clients for {report.seconds:.1f} s against quoteproof serve "
        f"(extractive backend, BM25), while {report.uploaded} uploaded documents were ingested"
    )
    for line in report.lines():
        print(line)
    duplicates = report.listed_after - report.distinct_paths_after
    lost = report.listed_before + report.uploaded - report.listed_after
    print(
        f"errors: {len(report.errors)} · ingest job: {report.job_state} · documents "
        f"{report.listed_before} -> {report.listed_after} (lost {lost}, duplicated {duplicates})"
    )
    for error in report.errors[:10]:
        print(f"  {error}")
    return 1 if report.errors or lost or duplicates else 0


if __name__ == "__main__":
    sys.exit(main())
