"""Several processes ingesting overlapping files into one index while another
searches it: nothing is lost, duplicated or half-written, and nobody fails."""

from __future__ import annotations

import multiprocessing
import random
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from helpers.concurrency import TOY_SPACE, ingest_worker, search_worker
from quoteproof.store.open import open_store

FILES = 40
WORKERS = 4
FILES_PER_WORKER = 30


def write_files(folder: Path) -> list[Path]:
    folder.mkdir()
    paths = []
    for number in range(FILES):
        path = folder / f"topic-{number:02d}.txt"
        path.write_text(
            f"Topic {number}\n\n"
            f"Remedy {number} helps with complaint number {number} in most patients.\n\n"
            f"Side effects of remedy {number} are rare; see section {number}.\n"
        )
        paths.append(path)
    return paths


def test_concurrent_ingest_and_search(location: str, tmp_path: Path) -> None:
    paths = [str(p.resolve()) for p in write_files(tmp_path / "docs")]
    batches = []
    for worker in range(WORKERS):
        batch = [paths[(worker * 10 + i) % FILES] for i in range(FILES_PER_WORKER)]
        random.Random(worker).shuffle(batch)
        batches.append(batch)
    ready_file, stop_file = tmp_path / "ready", tmp_path / "stop"
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=WORKERS + 1, mp_context=spawn) as pool:
        searcher = pool.submit(search_worker, location, str(ready_file), str(stop_file), 60.0)
        deadline = time.monotonic() + 60
        while not ready_file.exists() and not searcher.done() and time.monotonic() < deadline:
            time.sleep(0.02)
        ingesters = [pool.submit(ingest_worker, location, batch) for batch in batches]
        try:
            outcomes = [future.result(timeout=120) for future in ingesters]
        finally:
            stop_file.touch()
        rounds, search_errors = searcher.result(timeout=120)

    assert search_errors == [] and rounds > 0
    for batch, outcome in zip(batches, outcomes, strict=True):
        assert [path for path, _, _ in outcome] == batch
        assert {(status, error) for _, status, error in outcome} <= {
            ("added", None),
            ("unchanged", None),
        }

    store = open_store(location)
    try:
        stats = store.stats()
        assert (stats.documents, stats.versions) == (FILES, FILES)
        refs = []
        for path in paths:
            current = store.current_version(path)
            assert current is not None and current.version == 1
            chunks = store.chunks_of(current.doc_id, 1)
            assert chunks and all(c.source_path == path for c in chunks)
            refs += [c.ref for c in chunks]
        assert len(refs) == len(set(refs)) == stats.chunks
        assert stats.embedded == stats.chunks and store.pending_embeddings() == []
        assert store.embedding_space() == TOY_SPACE
        hits = store.search_bm25("remedy 17 complaint", 3)
        assert hits and hits[0].chunk.source_path.endswith("topic-17.txt")
    finally:
        store.close()
