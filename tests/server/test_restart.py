"""A real `quoteproof serve` killed with SIGKILL after accepting an upload: on
restart the job resumes, every file is ingested exactly once, and the job id
still answers."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx2 as httpx

from helpers.load import serving
from quoteproof.index import Index
from quoteproof.keys import create_key
from quoteproof.server.state import INGEST_HOLD_ENV


def test_an_accepted_upload_survives_sigkill_and_resumes(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    with Index.open(index_dir, create=True) as index:
        key, _ = create_key(index.store, "alice", ["A"])
    auth = {"Authorization": f"Bearer {key}"}
    upload_dir, log, hold = tmp_path / "uploads", tmp_path / "serve.log", tmp_path / "hold"
    names = [f"note-{n}.md" for n in range(6)]
    files = [
        ("file", (name, f"# Note {n}\n\nHeron note number {n}.\n".encode(), "text/markdown"))
        for n, name in enumerate(names)
    ]
    hold.touch()  # the first server accepts the upload but ingests nothing
    with serving(index_dir, upload_dir, log, env={INGEST_HOLD_ENV: str(hold)}) as (url, process):
        answer = httpx.post(
            f"{url}/v1/documents", files=files, data={"collection": "A"}, headers=auth
        )
        assert answer.status_code == 202, answer.text
        job = answer.json()["job"]
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    hold.unlink()

    with serving(index_dir, upload_dir, log) as (url, process):
        deadline = time.monotonic() + 60
        while (body := httpx.get(f"{url}/v1/jobs/{job}", headers=auth).json())["state"] != "done":
            assert body["state"] in ("queued", "running") and time.monotonic() < deadline, body
            time.sleep(0.1)
        assert body["total"] == body["done"] == len(names)
        assert sorted(Path(r["path"]).name for r in body["results"]) == sorted(names)
        assert {r["status"] for r in body["results"]} == {"added"}
        process.send_signal(signal.SIGTERM)
        # uvicorn shuts down cleanly, then re-raises the signal it caught.
        assert process.wait(timeout=30) in (0, -signal.SIGTERM)
        assert "Application shutdown complete" in log.read_text()
    with Index.open(index_dir) as index:
        for result in body["results"]:
            assert index.store.latest_version(result["path"]) == 1  # stored exactly once
