"""Every file is parsed in a child process that the operating system limits by the
file's size (memory and CPU time): a parser that blows up fails its file with a
cause naming the limit, and the batch goes on."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from helpers.memory import run_with_peak_rss
from helpers.parsing import SPIN, spin_on_marker
from helpers.pdfs import flate_bomb_pdf, image_only_pdf
from quoteproof.ingest.parse_limits import ParseLimits
from quoteproof.ingest.parsing import IngestSettings
from quoteproof.ingest.pipeline import ingest_files
from quoteproof.store.open import open_store

MB = 2**20


def quoteproof(*args: str) -> tuple[str, int, int]:
    """Run the command; return its stderr (whitespace collapsed), exit code and the
    peak resident memory of its largest process (bytes)."""
    command = [sys.executable, "-m", "quoteproof", *args]
    result, peak = run_with_peak_rss(command, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return " ".join(result.stderr.split()), result.returncode, peak


def test_a_pdf_flate_bomb_fails_within_its_memory_limit_and_the_batch_goes_on(
    tmp_path: Path,
) -> None:
    # A 1 MB PDF whose page content stream inflates to 1 GiB was stored, at 2.1 GB.
    folder = tmp_path / "files"
    folder.mkdir()
    bomb = folder / "bomb.pdf"
    bomb.write_bytes(flate_bomb_pdf(2**30))
    assert bomb.stat().st_size < 1_100_000
    (folder / "notes.txt").write_text("Notes on washing hands with soap.\n")
    said, code, peak = quoteproof(
        "ingest", str(folder), "--index", str(tmp_path / "i"), "--no-embed"
    )
    assert code == 1
    cause = (
        r"(parsing needs more than \d+ MB of memory"
        r"|the parser crashed \(SIG\w+\), most likely out of memory: it may use \d+ MB)"
        r" \(the limit for a file of 1\.0 MB\)"
    )
    assert re.search(f"failed: {re.escape(str(bomb))}: {cause}", said), said
    assert "1 added · 0 updated · 0 unchanged · 1 failed" in said
    assert peak < 600 * MB


def test_html_that_amplifies_memory_fails_at_its_memory_limit(tmp_path: Path) -> None:
    # 4.6 MB of tags that the HTML5 tree builder keeps re-opening passed the depth
    # checks, then took 26 s and 1.32 GB (290 bytes per byte).
    page = tmp_path / "amplify.html"
    page.write_text("<b>x<p>y</b>z</p>" * 270_000)
    said, code, peak = quoteproof("ingest", str(page), "--index", str(tmp_path / "i"), "--no-embed")
    assert code == 1
    expected = "parsing needs more than 550 MB of memory (the limit for a file of 4.6 MB)"
    assert f"failed: {page}: {expected}" in said, said
    assert peak < 800 * MB


def test_the_memory_limit_is_an_option_of_ingest(tmp_path: Path) -> None:
    # The same tags, 340 KB of them: within the default limit, not within 1 MB more.
    page = tmp_path / "amplify.html"
    page.write_text("<b>x<p>y</b>z</p>" * 20_000)
    index = str(tmp_path / "i")
    said, code, _ = quoteproof("ingest", str(page), "--index", index, "--no-embed")
    assert code == 0 and "1 added" in said
    page.write_text("<b>y<p>x</b>z</p>" * 20_000)
    said, code, _ = quoteproof(
        "ingest", str(page), "--index", index, "--no-embed", "--parse-memory-mb", "1"
    )
    assert code == 1
    expected = "parsing needs more than 23 MB of memory (the limit for a file of 340 KB)"
    assert f"failed: {page}: {expected}" in said, said


def test_a_parse_past_its_cpu_time_fails_and_the_batch_goes_on(tmp_path: Path) -> None:
    spinning, fine = tmp_path / "spin.txt", tmp_path / "fine.txt"
    spinning.write_bytes(SPIN + b" forever")
    fine.write_text("A fine file on herons.")
    settings = IngestSettings(limits=ParseLimits(seconds=1, seconds_per_mb=0))
    store = open_store(str(tmp_path / "i"), create=True)
    try:
        results = list(ingest_files(store, [spinning, fine], settings, 2, spin_on_marker))
    finally:
        store.close()
    assert [(r.status, r.error) for r in results] == [
        ("failed", "parsing takes more than 1 s of CPU time (the limit for a file of 12 bytes)"),
        ("added", None),
    ]


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs tesseract-ocr")
def test_ocr_runs_within_the_limits(tmp_path: Path) -> None:
    # tesseract runs under the parsing process's limits, which it inherits
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(image_only_pdf(text_page=True))
    store = open_store(str(tmp_path / "i"), create=True)
    try:
        (result,) = ingest_files(store, [scan], IngestSettings(ocr=True))
    finally:
        store.close()
    assert result.status == "added", result.error
    assert any("text from OCR" in warning for warning in result.warnings)
