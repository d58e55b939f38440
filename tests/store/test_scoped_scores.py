"""Search scores seen through a key scoped to some collections depend only on what
that key may read, on both stores: BM25 statistics are those of each chunk's own
collection. The regression test is the attack of a key that uploads a probe
document into its own collection and reads, from its scores, which candidate tokens
occur in another tenant's collection."""

from __future__ import annotations

from pathlib import Path

from quoteproof import Index
from quoteproof.keys import authenticate, create_key
from quoteproof.retrieval.retriever import RetrievalSettings
from quoteproof.service import Principal, ScopedIndex

CANDIDATES = [f"{number:04d}" for number in range(4460, 4480)]
"""The tokens the prober tries (the other tenant's secret is "4471")."""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_probe_learns_nothing_of_another_collection(location: str, tmp_path: Path) -> None:
    """The scores a key scoped to `mine` sees for each candidate token are the same
    whether the collection `theirs` holds "zebra 9999" or "zebra 4471" (they differed
    for "4471": document frequencies were counted over every collection)."""
    probe = write(tmp_path / "mine" / "probe.txt", "Probe\n\n" + " ".join(CANDIDATES))
    fillers = [
        write(tmp_path / "mine" / f"note-{n}.txt", f"Note {n}\n\nA note about lunch {n}.")
        for n in range(5)
    ]
    secret = write(tmp_path / "theirs" / "secret.txt", "Payroll\n\nThe code is zebra 9999.")
    with Index.open(location, create=True, retrieval=RetrievalSettings("bm25")) as index:
        index.ingest([probe, *fillers], collection="mine", embed=False)
        index.ingest([secret], collection="theirs", embed=False)
        token, _ = create_key(index.store, "prober", ["mine"])
        key = authenticate(index.store, token)
        assert key is not None
        view = ScopedIndex(index, Principal(key.name, tuple(key.collections)))

        def scores() -> dict[str, list[float]]:
            return {code: [hit.score for hit in view.search(code, top_k=5)] for code in CANDIDATES}

        before = scores()
        assert all(len(found) == 1 for found in before.values())  # the probe, scored
        write(secret, "Payroll\n\nThe code is zebra 4471.")
        (result,) = index.ingest([secret], collection="theirs", embed=False)
        assert result.status == "updated"
        found = [hit.chunk.source_path for hit in index.search("4471", top_k=5)]
        assert str(secret.resolve()) in found  # unscoped, the index holds it
        assert scores() == before
