"""Serving under load: requests/s and p50/p95 latency of `quoteproof serve` on
127.0.0.1, with concurrent clients asking (extractive backend) and searching while
a background ingest of uploaded documents runs.

    python benchmarks/serve.py [--clients 20] [--seconds 30] [--uploads 200] [--json FILE]

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

from figures import Figures, add_json_option  # noqa: E402
from helpers.load import LoadReport, make_documents, run_load, running_server  # noqa: E402
from quoteproof import Index  # noqa: E402
from quoteproof.retrieval.retriever import RetrievalNotice  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--uploads", type=int, default=200)
    add_json_option(parser)
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
    out = figures(report)
    print(out.notes[0])
    for error in report.errors[:10]:
        print(f"  {error}")
    out.write(args.json)
    return 0 if all(out.targets.values()) else 1


def figures(report: LoadReport) -> Figures:
    """req/s and p50/p95 ms per endpoint (no reference exists); the errors, lost and
    duplicated documents as a note and as targets."""
    out = Figures("serve")
    for s in report.stats():
        out.add(f"req/s, {s.endpoint}", s.per_second, "req/s")
        out.add(f"p50 ms, {s.endpoint}", s.p50_ms, "ms")
        out.add(f"p95 ms, {s.endpoint}", s.p95_ms, "ms")
    duplicates = report.listed_after - report.distinct_paths_after
    lost = report.listed_before + report.uploaded - report.listed_after
    out.note(
        f"errors: {len(report.errors)} · ingest job: {report.job_state} · documents "
        f"{report.listed_before} -> {report.listed_after} (lost {lost}, duplicated {duplicates})"
    )
    out.target("no request failed", not report.errors)
    out.target("no uploaded document lost or duplicated", not lost and not duplicates)
    return out


if __name__ == "__main__":
    sys.exit(main())
