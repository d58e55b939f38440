"""`quoteproof documents list` and `documents retire`: the HTTP API's document
operations (GET and DELETE /v1/documents) from the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import CORPUS_FILES
from test_cli import run


def listed(index: Path) -> list[dict[str, object]]:
    result = run("documents", "list", "--index", str(index), "--json")
    assert result.returncode == 0, result.stderr
    documents: list[dict[str, object]] = json.loads(result.stdout)["documents"]
    return documents


def test_list_shows_every_current_document(index_dir: Path, corpus: Path) -> None:
    documents = listed(index_dir)
    assert [d["source_path"] for d in documents] == sorted(
        str(corpus / name) for name in CORPUS_FILES
    )
    assert set(documents[0]) == {
        "doc_id", "version", "source_path", "title", "format", "sha256", "collection"
    }  # fmt: skip
    text = run("documents", "list", "--index", str(index_dir))
    lines = text.stdout.splitlines()
    assert text.returncode == 0 and len(lines) == len(CORPUS_FILES)
    pressure = next(d for d in documents if str(d["source_path"]).endswith("pressure.html"))
    line = next(line for line in lines if line.startswith(str(pressure["doc_id"])))
    assert line.split("  ") == [
        pressure["doc_id"], "v1", "default", "html", pressure["source_path"], "Blood pressure"
    ]  # fmt: skip
    assert f"3 document(s) in {index_dir}" in text.stderr


def test_list_by_collection(index_dir: Path) -> None:
    result = run("documents", "list", "--index", str(index_dir), "--collection", "other")
    assert result.returncode == 0 and result.stdout == ""


def test_retire_by_id_takes_the_document_out_and_old_answers_still_verify(
    index_dir: Path, tmp_path: Path
) -> None:
    asked = run(
        "ask", "first sign of shingles", "--index", str(index_dir), "--retriever", "bm25",
        "--format", "json",
    )  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    answer = tmp_path / "answer.json"
    answer.write_text(asked.stdout, encoding="utf-8")
    shingles = next(d for d in listed(index_dir) if str(d["source_path"]).endswith("shingles.md"))

    retired = run("documents", "retire", str(shingles["doc_id"]), "--index", str(index_dir))
    assert retired.returncode == 0, retired.stderr
    assert retired.stdout == f"retired {shingles['doc_id']} v1 ({shingles['source_path']})\n"
    assert shingles["doc_id"] not in [d["doc_id"] for d in listed(index_dir)]
    search = run("search", "shingles", "--index", str(index_dir), "--format", "json")
    hits = json.loads(search.stdout)["hits"]
    assert all(hit["doc_id"] != shingles["doc_id"] for hit in hits)
    verified = run("verify", str(answer), "--index", str(index_dir))
    assert verified.returncode == 0 and "INVALID" not in verified.stdout

    again = run("documents", "retire", str(shingles["doc_id"]), "--index", str(index_dir))
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"error: '{shingles['doc_id']}' is already retired in {index_dir} "
        "(ingest its file again to make it current)"
    ]
    by_path = run("documents", "retire", str(shingles["source_path"]), "--index", str(index_dir))
    assert by_path.returncode == 2 and "is already retired" in by_path.stderr


def test_retire_by_path_relative_to_the_working_directory(index_dir: Path, corpus: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "quoteproof", "documents", "retire", "nested/pressure.html",
         "--index", str(index_dir)],
        capture_output=True, text=True, timeout=120, cwd=corpus, env=dict(os.environ),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert str(corpus / "nested" / "pressure.html") in result.stdout
    remaining = [Path(str(d["source_path"])).name for d in listed(index_dir)]
    assert sorted(remaining) == ["dosing.txt", "shingles.md"]


def test_retire_an_unknown_document_is_a_usage_error(index_dir: Path) -> None:
    result = run("documents", "retire", "nope00", "--index", str(index_dir))
    assert result.returncode == 2
    assert result.stderr.startswith("error: no document 'nope00' in ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert len(listed(index_dir)) == len(CORPUS_FILES)
