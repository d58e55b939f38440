"""Where the embedding model runs (quoteproof.retrieval.device): CUDA when torch or
ONNX Runtime has it, the CPU otherwise or when asked, an error when CUDA is
required and missing; and what this machine has, as ingest reports it."""

from __future__ import annotations

from pathlib import Path

import onnxruntime as ort
import pytest
import torch
from rich.console import Console

from quoteproof import Index
from quoteproof.errors import RetrievalError
from quoteproof.render.ingest import summary_table
from quoteproof.retrieval.device import (
    CPU_PROVIDER,
    CUDA_PROVIDER,
    DEVICE_VARIABLE,
    choose_providers,
    choose_torch_device,
    onnx_providers,
    torch_cuda_build,
    torch_device,
    torch_runs_where_onnx_cannot,
    wanted_device,
)
from quoteproof.retrieval.embedder import Embedder
from quoteproof.store.base import IndexStats

BOTH = [CUDA_PROVIDER, CPU_PROVIDER]
HERE = "cuda" if torch.cuda.is_available() else "cpu"
"""The torch device this machine gives (the CPU unless it has a CUDA GPU)."""


@pytest.mark.parametrize(
    ("wanted", "cuda", "device"),
    [("auto", True, "cuda"), ("auto", False, "cpu"), ("cpu", True, "cpu"), ("cuda", True, "cuda")],
)
def test_torch_takes_cuda_when_there_is_one_unless_told_not_to(
    wanted: str, cuda: bool, device: str
) -> None:
    assert choose_torch_device(wanted, cuda) == device


@pytest.mark.parametrize(
    ("wanted", "available", "chosen"),
    [
        ("auto", BOTH, BOTH),
        ("auto", [CPU_PROVIDER], [CPU_PROVIDER]),
        ("auto", ["AzureExecutionProvider", CPU_PROVIDER], [CPU_PROVIDER]),
        ("cpu", BOTH, [CPU_PROVIDER]),
        ("cuda", BOTH, BOTH),
    ],
)
def test_onnx_runtime_puts_cuda_first_when_it_has_it(
    wanted: str, available: list[str], chosen: list[str]
) -> None:
    assert choose_providers(wanted, available) == chosen


def test_cuda_required_and_missing_is_an_error_naming_the_extra() -> None:
    with pytest.raises(RetrievalError, match="no CUDA device"):
        choose_torch_device("cuda", False)
    with pytest.raises(RetrievalError, match=r"quoteproof\[gpu\]"):
        choose_providers("cuda", [CPU_PROVIDER])


@pytest.mark.parametrize(
    ("line", "cuda_build"),
    [
        ("cuda: Optional[str] = '13.0'", True),
        ("cuda = '12.1'", True),
        ("cuda: Optional[str] = None", False),
    ],
)
def test_a_cuda_build_of_torch_is_read_from_its_version_file(
    tmp_path: Path, line: str, cuda_build: bool
) -> None:
    version = tmp_path / "version.py"
    version.write_text(f"__version__ = '2.13.0'\n{line}\nhip = None\n", encoding="utf-8")
    assert torch_cuda_build(version) is cuda_build
    assert torch_cuda_build(tmp_path / "missing.py") is False


def test_the_installed_torch_build_is_read_as_torch_reports_it() -> None:
    assert torch_cuda_build() is (torch.version.cuda is not None)


def test_torch_takes_the_gpu_only_where_onnx_runtime_cannot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    assert torch_runs_where_onnx_cannot(BOTH) is False  # ONNX Runtime has CUDA itself
    expected = torch.version.cuda is not None and torch.cuda.is_available()
    assert torch_runs_where_onnx_cannot([CPU_PROVIDER]) is expected
    monkeypatch.setenv(DEVICE_VARIABLE, "cpu")
    assert torch_runs_where_onnx_cannot([CPU_PROVIDER]) is False


def test_the_variable_chooses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    assert wanted_device() == "auto"
    monkeypatch.setenv(DEVICE_VARIABLE, " CPU ")
    assert wanted_device() == "cpu"
    assert torch_device() == "cpu"
    assert onnx_providers() == [CPU_PROVIDER]
    monkeypatch.setenv(DEVICE_VARIABLE, "tpu")
    with pytest.raises(RetrievalError, match="tpu"):
        wanted_device()


def test_this_machine_gets_what_it_has(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    assert torch_device() == HERE
    available = ort.get_available_providers()
    assert onnx_providers() == [p for p in BOTH if p in available]


def test_ingest_reports_the_device_it_embedded_on(
    tmp_path: Path, model_cache_in_a_temporary_folder: Path
) -> None:
    onnx_here = "cuda" if CUDA_PROVIDER in ort.get_available_providers() else "cpu"
    assert Embedder().device == f"onnx on {onnx_here}"
    note = tmp_path / "herons.md"
    note.write_text("# Herons\n\nHerons nest in colonies called heronries.\n")
    with Index.open(tmp_path / "index", create=True) as index:
        index.ingest([note], embed=False)
        report = index.embed()
    assert report.embedded >= 1 and report.device == f"onnx on {onnx_here}"
    table = summary_table([], 1.0, "index", IndexStats(1, 1, 1), report)
    console = Console(width=80, record=True)
    console.print(table)
    rows = console.export_text().splitlines()
    (model,) = [row for row in rows if "model" in row]
    assert f"{report.model} (onnx on {onnx_here})" in model  # whole, on one line at 80 columns
