"""The CLI's own usage: `--version`, and usage errors worded for what is wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import quoteproof
from test_cli import run


def test_version_prints_the_package_version() -> None:
    result = run("--version")
    assert (result.returncode, result.stdout) == (0, f"quoteproof {quoteproof.__version__}\n")


def test_an_empty_question_is_a_usage_error(session_index_dir: Path) -> None:
    for question in ("", "  \t\n"):
        result = run("ask", question, "--index", str(session_index_dir), "--format", "json")
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.strip().splitlines() == [
            'error: the question is empty: ask a question in words, e.g. "What causes it?"'
        ]


def test_an_empty_search_is_a_usage_error(session_index_dir: Path) -> None:
    for query in ("", "  \t\n"):
        result = run("search", query, "--index", str(session_index_dir), "--format", "json")
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.strip().splitlines() == [
            'error: QUERY is empty: search for something, e.g. quoteproof search "hand hygiene"'
        ]


def test_verify_without_an_index_says_which_index_it_needs(
    session_index_dir: Path, tmp_path: Path
) -> None:
    asked = run(
        "ask", "first sign of shingles", "--index", str(session_index_dir),
        "--retriever", "bm25", "--format", "json",
    )  # fmt: skip
    answer = tmp_path / "answer.json"
    answer.write_text(asked.stdout, encoding="utf-8")
    assert json.loads(asked.stdout)["quotes"]
    env = {k: v for k, v in os.environ.items() if k != "QUOTEPROOF_INDEX"}
    result = subprocess.run(
        [sys.executable, "-m", "quoteproof", "verify", str(answer)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: no index at .quoteproof (the default): the quotes are checked against the "
        "index the answer came from; pass --index PATH (or set QUOTEPROOF_INDEX)"
    ]
    assert "ingest" not in result.stderr
    elsewhere = run("verify", str(answer), "--index", str(tmp_path / "other"))
    assert elsewhere.returncode == 2
    assert f"no index at {tmp_path / 'other'}: the quotes are checked" in elsewhere.stderr


def test_an_unknown_option_that_names_a_choice_points_to_the_option_taking_it() -> None:
    result = run("ask", "What causes it?", "--json")
    assert result.returncode == 2 and result.stdout == ""
    assert "No such option: --json (Possible options: --format json)" in result.stderr
    result = run("search", "hand hygiene", "--bm25")
    assert "--retriever bm25" in result.stderr and "--bm25-weight" in result.stderr
    result = run("ask", "What causes it?", "--nonsense")
    assert result.returncode == 2 and "No such option: --nonsense\n" in result.stderr
