"""OCR of PDF pages without a text layer: PDFium renders, the `tesseract` command reads.

The page is rendered in grey at `OCR_DPI` and handed to tesseract as a PGM image on
standard input; its plain-text output on standard output is split into paragraphs
at blank lines. No Python wrapper (pytesseract) is used, only the command.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pypdfium2 as pdfium  # type: ignore[import-untyped]

from quoteproof.errors import IngestError

OCR_DPI = 300
"""Resolution pages are rendered at for OCR (tesseract works best at about 300 dpi)."""

OCR_TIMEOUT_S = 120
"""Longest one page's OCR may take before ingest gives up on the file."""

TESSERACT_MISSING = "OCR requested but the tesseract command was not found (install tesseract-ocr)"

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def tesseract_path(path: str) -> str:
    """Return the path of the `tesseract` command; raise `IngestError(path, ...)` if absent."""
    found = shutil.which("tesseract")
    if found is None:
        raise IngestError(path, TESSERACT_MISSING)
    return found


def render_pgm(page: pdfium.PdfPage, dpi: int = OCR_DPI) -> bytes:
    """Render `page` in 8-bit grey at `dpi` and return it as a binary PGM image."""
    bitmap = page.render(scale=dpi / 72, grayscale=True)
    try:
        width, height, stride = int(bitmap.width), int(bitmap.height), int(bitmap.stride)
        data = memoryview(bitmap.buffer).cast("B")
        rows = (
            data
            if stride == width
            else b"".join(data[row * stride : row * stride + width] for row in range(height))
        )
        return f"P5\n{width} {height}\n255\n".encode("ascii") + bytes(rows)
    finally:
        bitmap.close()


def paragraphs(text: str) -> list[list[str]]:
    """Split tesseract's plain text into paragraphs (at blank lines), each a list of
    its non-blank lines, stripped."""
    found: list[list[str]] = []
    for chunk in _PARAGRAPH_BREAK.split(text.replace("\f", "\n\n")):
        lines = [line.strip() for line in chunk.split("\n") if line.strip()]
        if lines:
            found.append(lines)
    return found


def ocr_page(
    page: pdfium.PdfPage, number: int, path: str, *, dpi: int = OCR_DPI
) -> list[list[str]]:
    """Read the text of page `number` of file `path` by OCR; return its paragraphs.

    Raises `IngestError(path, ...)` when tesseract is not installed, fails or times out.
    Takes seconds per page (rendering plus recognition), so callers only OCR pages
    that have no text layer.
    """
    command = [tesseract_path(path), "stdin", "stdout", "--dpi", str(dpi)]
    try:
        result = subprocess.run(
            command, input=render_pgm(page, dpi), capture_output=True, timeout=OCR_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise IngestError(path, f"OCR of page {number} failed ({exc})") from None
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = reason[-1] if reason else f"exit status {result.returncode}"
        raise IngestError(path, f"OCR of page {number} failed (tesseract: {detail})")
    return paragraphs(result.stdout.decode("utf-8", "replace"))
