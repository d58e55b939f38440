"""`quoteproof ingest` as a user runs it: files it skips are counted and named, and
an interrupted ingest says what it did and leaves an index that answers no question
until an ingest finishes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from quoteproof.store.open import open_store

NOTES = "Notes on washing hands with soap and water for twenty seconds.\n"
CONTACTS = (
    "Contact list\n\nJane Smith, 12 Collins Street, Melbourne, Australia. "
    "Phone +61 3 5550 1234.\nTom Brown, 4 George Street, Sydney, Australia.\n"
)


def quoteproof(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quoteproof", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def said(result: subprocess.CompletedProcess[str]) -> str:
    return " ".join(result.stderr.split())


def test_skipped_files_are_counted_and_named_in_the_summary_and_the_json(
    tmp_path: Path,
) -> None:
    # A folder with .doc, .pages and .png files reported "1 added · 0 failed" and
    # never named them; a folder's SOURCE.md was ingested as a document.
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "notes.txt").write_text(NOTES)
    for name in ("old.doc", "plan.pages", "pic.png"):
        (folder / name).write_bytes(b"not ours")
    (folder / "SOURCE.md").write_text("# Sources\n\nDownloaded from a public site.\n")
    index = str(tmp_path / "idx")
    result = quoteproof("ingest", str(folder), "--index", index, "--no-embed")
    assert result.returncode == 0
    text = said(result)
    assert "1 added · 0 updated · 0 unchanged · 0 failed · 4 skipped" in text
    assert "Skipped files" in text and text.count("unsupported file type") == 3
    report = json.loads(
        quoteproof("ingest", str(folder), "--index", index, "--format", "json").stdout
    )
    assert report["finished"] is True
    assert report["counts"] == {
        "added": 0, "updated": 0, "unchanged": 1, "failed": 0, "skipped": 4
    }  # fmt: skip
    assert {(Path(f["path"]).name, f["status"], f["reason"]) for f in report["files"]} == {
        ("notes.txt", "unchanged", None),
        (
            "SOURCE.md",
            "skipped",
            "notes about the folder (README-type name): name the file to ingest it",
        ),
        ("old.doc", "skipped", "unsupported file type '.doc'"),
        ("plan.pages", "skipped", "unsupported file type '.pages'"),
        ("pic.png", "skipped", "unsupported file type '.png'"),
    }
    named = quoteproof("ingest", str(folder / "SOURCE.md"), "--index", index, "--no-embed")
    assert named.returncode == 0 and "1 added" in said(named)


def _documents(index: Path) -> int:
    """How many documents the index holds now (0 before it exists)."""
    if not (index / "index.sqlite3").exists():
        return 0
    store = open_store(str(index))
    try:
        return len(store.list_documents())
    finally:
        store.close()


def test_an_interrupted_ingest_says_what_it_did_and_the_index_answers_nothing_until_one_finishes(
    tmp_path: Path,
) -> None:
    # Ctrl-C during ingest exited 130 with no message and left documents without
    # vectors or a refusal threshold, and the next ask answered "the capital of
    # Australia" from a contact list.
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_text(NOTES)
    slow = folder / "b.html"  # nested 300,000 deep: the HTML parser takes a minute
    slow.write_text("<div>" * 300_000 + "deep" + "</div>" * 300_000)
    (folder / "c.txt").write_text(CONTACTS)
    index = tmp_path / "idx"
    command = [sys.executable, "-m", "quoteproof", "ingest", str(folder), "--index", str(index)]
    running = subprocess.Popen(
        [*command, "--no-embed"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        # as from a terminal: a suite started in the background (`cmd &` in a script)
        # passes SIGINT on ignored, and the ingest would then never see the Ctrl-C
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while _documents(index) < 1:
        assert running.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    running.send_signal(signal.SIGINT)  # as Ctrl-C does
    _, stderr = running.communicate(timeout=60)
    assert running.returncode == 130
    assert (
        "interrupted: 1 of 3 files done (1 added), 2 not ingested; no vectors and no "
        f"refusal threshold computed for them. Until an ingest into {index} finishes, it "
        "answers no question"
    ) in " ".join(stderr.split())
    assert "Traceback" not in stderr
    for asked in (
        quoteproof("ask", "What is the capital of Australia?", "--index", str(index)),
        quoteproof("search", "Australia", "--index", str(index)),
    ):
        assert asked.returncode == 2
        assert "did not finish" in said(asked) and "run `quoteproof ingest" in said(asked)
    slow.unlink()
    finished = quoteproof("ingest", str(folder), "--index", str(index), "--no-embed")
    assert finished.returncode == 0
    assert "1 added · 0 updated · 1 unchanged" in said(finished)
    assert quoteproof("search", "Australia", "--index", str(index)).returncode == 0


def test_an_ingest_whose_every_file_fails_names_them_and_gives_no_retrieval_advice(
    tmp_path: Path,
) -> None:
    # Every file failing left an empty index, and the threshold estimate then said
    # "retrieval is BM25 alone: ... has no vectors (ingest again with the dense extra
    # installed ...)", although the extra was installed and the files were the cause.
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "empty.txt").write_bytes(b"")
    (folder / "invalid.txt").write_bytes(b"hello \xff\xfe world\n")
    result = quoteproof("ingest", str(folder), "--index", str(tmp_path / "idx"))
    assert result.returncode == 1
    text = said(result)
    assert f"{folder / 'empty.txt'}: empty file (0 bytes)" in text
    assert f"{folder / 'invalid.txt'}: not valid UTF-8 (byte offset 6: 0xFF, line 1)" in text
    assert "BM25 alone" not in text and "dense extra" not in text
    # asking the empty index said it had no vectors and advised calibrating
    printed: dict[str, str] = {}
    for command in ("ask", "search"):
        run = quoteproof(command, "What is the dose?", "--index", str(tmp_path / "idx"))
        printed[command] = " ".join((run.stdout + run.stderr).replace("!", "").split())
        assert "BM25 alone" not in printed[command], printed[command]
        assert "calibrat" not in printed[command], printed[command]
    assert "The index holds no documents" in printed["ask"]
    assert "No matching passages: the index holds no documents." in printed["search"]
