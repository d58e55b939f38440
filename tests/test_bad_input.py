"""Bad input as a user meets it: one batch of hostile files through `quoteproof ingest`.

Each bad file gets one line naming it and its cause, the good files are ingested,
the exit code is 1, and a failed file leaves the index exactly as it was.
"""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from helpers import pdfs
from helpers.rows import index_rows


def zip_bomb_docx() -> bytes:
    """A DOCX whose one image member deflates 60 MiB of zeros (ratio ~1000)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"<w:document/>")
        archive.writestr("word/media/image1.png", bytes(60 * 2**20))
    return buffer.getvalue()


BAD_FILES: dict[str, tuple[bytes, str]] = {
    "encrypted.pdf": (pdfs.encrypted_pdf(), "encrypted PDF: a password is required"),
    "corrupt.pdf": (b"%PDF-1.7\n" + bytes(range(256)) * 8, "corrupt or truncated PDF"),
    "truncated.pdf": (pdfs.truncated_pdf(), "corrupt or truncated PDF"),
    "empty.pdf": (b"", "empty file (0 bytes)"),
    "zero-pages.pdf": (pdfs.zero_page_pdf(), "PDF has no pages"),
    "scanned.pdf": (pdfs.image_only_pdf(), "no text layer on any page"),
    "page.pdf": (b"<!doctype html><html><p>hi</p></html>", "named .pdf but the content is HTML"),
    "huge.txt": (b"word " * 240_000, "file is 1.2 MB, over the 1 MB limit"),
    "bomb.docx": (zip_bomb_docx(), "DOCX rejected as a zip bomb: word/media/image1.png"),
    "nul.txt": (b"text with a \x00 NUL byte", "the text contains NUL characters"),
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quoteproof", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("batch")
    for name, (data, _) in BAD_FILES.items():
        (folder / name).write_bytes(data)
    (folder / "good.pdf").write_bytes(pdfs.report_pdf())
    (folder / "good.md").write_text("# Good\n\nThis file is fine.\n")
    return folder


def test_each_bad_file_fails_alone_with_its_cause(batch: Path, tmp_path: Path) -> None:
    result = run(
        "ingest", "--no-embed", str(batch), "--index", str(tmp_path / "idx"), "--max-file-mb", "1"
    )
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("failed: ")]
    for name, (_, cause) in BAD_FILES.items():
        (line,) = [line for line in lines if line.startswith(f"failed: {batch / name}: ")]
        assert cause in line
    assert len(lines) == len(BAD_FILES)
    assert f"2 added · 0 updated · 0 unchanged · {len(BAD_FILES)} failed" in result.stderr
    assert (
        f"{len(BAD_FILES)} failed (above)" in result.stderr and "Failed files" not in result.stderr
    )
    assert run("search", "fine", "--index", str(tmp_path / "idx")).returncode == 0


def test_a_failed_file_leaves_the_index_unchanged(batch: Path, tmp_path: Path) -> None:
    index = tmp_path / "idx"
    first = run(
        "ingest",
        "--no-embed",
        str(batch / "good.pdf"),
        str(batch / "good.md"),
        "--index",
        str(index),
    )
    assert first.returncode == 0
    before = index_rows(index)
    for name in BAD_FILES:
        result = run(
            "ingest", "--no-embed", str(batch / name), "--index", str(index), "--max-file-mb", "1"
        )
        assert result.returncode == 1, name
        assert index_rows(index) == before, name


def test_a_good_file_replaced_by_a_bad_one_keeps_its_last_good_version(
    batch: Path, tmp_path: Path
) -> None:
    index, target = tmp_path / "idx", tmp_path / "label.pdf"
    target.write_bytes(pdfs.report_pdf())
    assert run("ingest", "--no-embed", str(target), "--index", str(index)).returncode == 0
    before = index_rows(index)
    target.write_bytes(pdfs.truncated_pdf())
    result = run("ingest", "--no-embed", str(target), "--index", str(index))
    assert result.returncode == 1 and "corrupt or truncated PDF" in result.stderr
    assert index_rows(index) == before


def test_a_broken_link_fails_alone(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "a.txt").write_text("hi\n")
    (folder / "d.txt").symlink_to(tmp_path / "nonexistent")
    result = run(
        "ingest", "--no-embed", "--jobs", "2", str(folder), "--index", str(tmp_path / "idx")
    )
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("failed: ")]
    assert lines == [
        f"failed: {folder / 'd.txt'}: symbolic link to {tmp_path / 'nonexistent'} "
        "cannot be followed: No such file or directory"
    ]
    assert "1 added · 0 updated · 0 unchanged · 1 failed" in result.stderr
