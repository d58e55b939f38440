"""Start-up: the CLI imports only what a command uses, so a question answered with BM25
and `--help` load no model runtime, LLM SDK, web server or plotting library, and
`--help` loads none of the library itself (its commands import it when they run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = (
    "openai",
    "anthropic",
    "torch",
    "sentence_transformers",
    "transformers",
    "fastapi",
    "uvicorn",
    "mcp",
    "llama_cpp",
    "onnxruntime",
    "matplotlib",
)
"""Top-level packages only some commands need; each costs from 0.1 s to seconds."""
NOT_FOR_ASK = ("markdown_it", "quoteproof.evaluation", "quoteproof.ingest.pipeline")
"""Modules a question does not use: Markdown parsing and the ingest pipeline (ingest)
and evaluation (eval)."""
LIBRARY = (
    "numpy",
    "rapidfuzz",
    "quoteproof.model",
    "quoteproof.index",
    "quoteproof.store",
    "quoteproof.audit",
    "quoteproof.service.view",
    "quoteproof.service.admin",
    "quoteproof.codec",
    "quoteproof.ingest",
    "quoteproof.retrieval",
    "quoteproof.quoting",
    "quoteproof.strategies.agent",
    "quoteproof.llm.base",
    "quoteproof.render.terminal",
)
"""What the commands use, not their registration: the CLI's import and its help
(option defaults from `quoteproof.defaults`, mode choices and the other registries from
`service.options`, which loads no other module of the service) load none of it."""

PROBE = """
import json, sys
watched, argv = json.loads(sys.argv[1]), json.loads(sys.argv[2])
import quoteproof.cli
code = 0
if argv:
    sys.argv = ["quoteproof", *argv]
    try:
        quoteproof.cli.main()
    except SystemExit as exit:
        code = exit.code
sys.stdout.flush()
print("\\nLOADED " + json.dumps([name for name in watched if name in sys.modules]))
print("EXIT " + json.dumps(code))
"""
"""Imports the CLI in a fresh interpreter, runs it with the given arguments (none: import
only), then prints which of the watched modules are loaded and the exit code."""


def loaded_after(*argv: str, watched: tuple[str, ...] = HEAVY) -> tuple[list[str], object]:
    """Return the modules of `watched` loaded by a fresh process that ran
    `quoteproof argv`, and its exit code."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(watched), json.dumps(argv)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert lines[-2].startswith("LOADED "), done.stdout + done.stderr
    loaded = json.loads(lines[-2].removeprefix("LOADED "))
    return loaded, json.loads(lines[-1].removeprefix("EXIT "))


def test_importing_the_cli_loads_no_heavy_package() -> None:
    assert loaded_after(watched=HEAVY + LIBRARY) == ([], 0)


def test_help_loads_no_heavy_package() -> None:
    assert loaded_after("--help", watched=HEAVY + LIBRARY) == ([], 0)


def test_a_command_help_loads_none_of_the_library() -> None:
    assert loaded_after("ask", "--help", watched=HEAVY + LIBRARY) == ([], 0)


def test_the_probe_sees_the_library_a_command_loads(tmp_path: Path) -> None:
    loaded, code = loaded_after("keys", "list", "--index", str(tmp_path / "none"), watched=LIBRARY)
    assert "quoteproof.index" in loaded and code == 2


def test_a_bm25_question_loads_no_heavy_package(session_index_dir: Path) -> None:
    loaded, code = loaded_after(
        "ask", "What is the first sign of shingles?",
        "--index", str(session_index_dir), "--retriever", "bm25",
        watched=HEAVY + NOT_FOR_ASK,
    )  # fmt: skip
    assert (loaded, code) == ([], 0)


def test_the_probe_sees_the_sdk_a_command_needs(
    session_index_dir: Path, dead_server_url: str
) -> None:
    loaded, code = loaded_after(
        "ask", "What is the first sign of shingles?",
        "--index", str(session_index_dir), "--retriever", "bm25",
        "--llm", "openai", "--model", "m", "--base-url", dead_server_url,
    )  # fmt: skip
    assert (loaded, code) == (["openai"], 2)
