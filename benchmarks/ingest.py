"""Ingest speed on real PDFs: quoteproof's parse + chunk + index next to raw PDFium.

Files: every PDF in ../shared/data/pdfs-medical, ../shared/data/pdfs-structure-pdfplumber
and the FDA Veklury label. Both sides run in this process, alternating, `--rounds`
times; the best round of each is reported (the least disturbed by the machine).

- raw pypdfium2: open each file, `get_text_range()` of every page: the reference.
- quoteproof parse: `parse_file` (text, lines, headings, furniture, tables, layout).
- quoteproof ingest: `Index.ingest` into a fresh SQLite index: parse + chunk +
  label + store (FTS5), no embeddings; once in one process, once with two worker
  processes parsing while the main process stores (`quoteproof ingest --jobs 2`,
  the default on this 2-core machine).

Run: .venv/bin/python benchmarks/ingest.py [--rounds 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pypdfium2 as pdfium

from figures import Figures, add_json_option
from quoteproof import Index
from quoteproof.ingest.files import parse_file

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
FOLDERS = ("pdfs-medical", "pdfs-structure-pdfplumber", "fda-remdesivir-label")
RAW = "raw pypdfium2 get_text_range"
FIGURES = {
    "quoteproof parse + chunk + index": "pages/s, parse + chunk + index (1 process)",
    "  same, --jobs 2 (2 parse workers)": "pages/s, parse + chunk + index (--jobs 2)",
    "quoteproof parse": "pages/s, parse only",
}
"""The figure of each quoteproof side (by its row in the printed table), in table order."""


def pdf_files() -> list[Path]:
    """The benchmark's PDFs, sorted."""
    return sorted(path for folder in FOLDERS for path in (DATA / folder).glob("*.pdf"))


def raw_extraction(files: list[Path]) -> int:
    """Extract every page's text with PDFium alone; return the page count."""
    pages = 0
    for path in files:
        document = pdfium.PdfDocument(path)
        for page in document:
            textpage = page.get_textpage()
            textpage.get_text_range()
            textpage.close()
            page.close()
            pages += 1
        document.close()
    return pages


def quoteproof_parse(files: list[Path]) -> int:
    """Parse every file as ingest does (no chunking, no storage); return pages."""
    pages = 0
    for path in files:
        layout = parse_file(path).layout
        pages += len(layout.page_starts) if layout else 0
    return pages


def quoteproof_ingest(files: list[Path], jobs: int = 1) -> int:
    """Ingest every file into a fresh index; return pages; fail loudly on errors."""
    with tempfile.TemporaryDirectory() as folder, Index.open(folder, create=True) as index:
        results = index.ingest(files, jobs=jobs, embed=False)
    failed = [f"{r.path}: {r.error}" for r in results if r.status == "failed"]
    if failed:
        raise SystemExit("ingest failed:\n" + "\n".join(failed))
    return sum(r.pages for r in results)


def timed(run: Callable[[list[Path]], int], files: list[Path], timings: list[float]) -> int:
    """Run once, append the seconds taken to `timings`, return the pages processed."""
    started = time.perf_counter()
    pages = run(files)
    timings.append(time.perf_counter() - started)
    return pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="Rounds per side (best is kept).")
    add_json_option(parser)
    args = parser.parse_args()
    files = pdf_files()
    sides: dict[str, Callable[[list[Path]], int]] = {
        RAW: raw_extraction,
        "quoteproof parse": quoteproof_parse,
        "quoteproof parse + chunk + index": quoteproof_ingest,
        "  same, --jobs 2 (2 parse workers)": partial(quoteproof_ingest, jobs=2),
    }
    timings: dict[str, list[float]] = {name: [] for name in sides}
    pages: dict[str, int] = {}
    for _ in range(args.rounds):
        for name, run in sides.items():
            pages[name] = timed(run, files, timings[name])
    print(f"{len(files)} PDFs, {pages[RAW]} pages, best of {args.rounds} rounds, 1 process")
    print(f"{'':36} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'share of raw':>13}")
    rates = {name: pages[name] / min(timings[name]) for name in sides}
    for name in sides:
        seconds = min(timings[name])
        share = rates[name] / rates[RAW]
        print(f"{name:36} {pages[name]:6d} {seconds:8.3f} {rates[name]:8.0f} {share:12.0%}")
    out = Figures("ingest")
    for name, figure in FIGURES.items():
        out.add(figure, rates[name], "pages/s", RAW, rates[RAW])
    out.write(args.json)


if __name__ == "__main__":
    main()
