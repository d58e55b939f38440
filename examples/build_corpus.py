#!/usr/bin/env python3
"""Rebuild the quoteproof demo corpus in ``examples/corpus/`` from public data sets.

The corpus has four parts (see ``examples/corpus/SOURCES.md`` for provenance and licenses):

* ``cdc-pcd/*.htm`` -- CDC *Preventing Chronic Disease* 2024 article pages, copied byte for byte
  (US Government work, public domain).
* ``medquad/*.md`` -- MedQuAD question/answer documents (CC BY 4.0) written out as Markdown:
  ``# <Focus>``, then ``## <Question>`` and the answer text for every QA pair.
* ``*.txt`` -- MedQuAD documents written out as plain text in the same way.
* ``fda/*.pdf`` -- the FDA Veklury (remdesivir) label, October 2020, copied byte for byte
  (FDA-published labeling).
* ``cdc-pcd/articles.csv`` -- one row per PCD article page, read from the page's own
  ``citation_*`` meta tags (a small table for ``ask --mode agent``).

Answer text is kept verbatim. The only changes are whitespace: each line of the XML answer is
stripped of its leading/trailing blanks (the XML indentation), and lines are separated by exactly
one blank line so that every source line stays its own paragraph (or Markdown list item, for the
lines that start with ``- ``). XML entities (``&quot;`` ...) are decoded by the XML parser. QA
pairs with an empty answer are skipped.

Usage (standard library only)::

    python examples/build_corpus.py [--data-dir /work/shared/data] [--out-dir examples/corpus]
"""

from __future__ import annotations

import argparse
import csv
import html
import io
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATA_DIR = Path("/work/shared/data")
DEFAULT_OUT_DIR = Path(__file__).resolve().parent / "corpus"
FDA_LABEL = "veklury_remdesivir_label_oct2020.pdf"

#: CDC PCD 2024 article pages (relative to ``<data-dir>/cdc-pcd-2024-html/html``), copied as is.
CDC_PCD_FILES: tuple[str, ...] = (
    "23_0115.htm",  # tobacco use reduction program, people living with HIV (Michigan)
    "23_0206.htm",  # produce boxes: access to affordable fruits and vegetables
    "24_0005.htm",  # the status of asthma in the United States
    "24_0185.htm",  # county-level hypertension prevalence and control
    "24_0255.htm",  # diabetes self-management education and support (DSMES)
)

#: MedQuAD XML documents (relative to ``<data-dir>/medquad``) -> Markdown file name.
MEDQUAD_MARKDOWN: tuple[tuple[str, str], ...] = (
    ("8_NHLBI_QA_XML/0000071.xml", "high-blood-pressure.md"),
    ("5_NIDDK_QA/0000022.xml", "type-2-diabetes-risk.md"),
    ("4_MPlus_Health_Topics_QA/0000369.xml", "flu.md"),
    ("8_NHLBI_QA_XML/0000010.xml", "asthma.md"),
    ("7_SeniorHealth_QA/0000062.xml", "shingles.md"),
    ("5_NIDDK_QA/0000150.xml", "high-blood-pressure-and-kidney-disease.md"),
    ("8_NHLBI_QA_XML/0000124.xml", "stroke.md"),
    ("8_NHLBI_QA_XML/0000058.xml", "heart-attack.md"),
    ("7_SeniorHealth_QA/0000050.xml", "osteoporosis.md"),
    ("8_NHLBI_QA_XML/0000121.xml", "smoking-and-your-heart.md"),
)

#: MedQuAD XML documents (relative to ``<data-dir>/medquad``) -> plain-text file name.
MEDQUAD_TEXT: tuple[tuple[str, str], ...] = (("8_NHLBI_QA_XML/0000118.xml", "sleep-apnea.txt"),)

ATTRIBUTION = "MedQuAD (CC BY 4.0), Ben Abacha & Demner-Fushman 2019"


@dataclass(frozen=True)
class QAPair:
    """One question with its (non-empty) answer, as paragraphs/lines of verbatim text."""

    question: str
    answer_lines: tuple[str, ...]


@dataclass(frozen=True)
class MedQuADDocument:
    """The parts of a MedQuAD ``<Document>`` that the corpus uses."""

    focus: str
    url: str
    pairs: tuple[QAPair, ...]


def answer_lines(text: str) -> tuple[str, ...]:
    """Split answer text into its non-empty lines, each stripped of surrounding whitespace."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def read_medquad(path: Path) -> MedQuADDocument:
    """Parse a MedQuAD XML file; QA pairs whose answer is empty are left out."""
    root = ET.parse(path).getroot()
    pairs: list[QAPair] = []
    for qa in root.iter("QAPair"):
        question = (qa.findtext("Question") or "").strip()
        lines = answer_lines(qa.findtext("Answer") or "")
        if question and lines:
            pairs.append(QAPair(question, lines))
    return MedQuADDocument(
        focus=(root.findtext("Focus") or "").strip(),
        url=root.get("url", ""),
        pairs=tuple(pairs),
    )


def source_line(doc: MedQuADDocument, rel_path: str) -> str:
    """The attribution line written at the end of every MedQuAD-derived file."""
    return f"Source: {doc.url} (MedQuAD {rel_path}). {ATTRIBUTION}."


def to_markdown(doc: MedQuADDocument, rel_path: str) -> str:
    """Render a document as Markdown: ``# focus``, ``## question`` + answer, source line."""
    blocks = [f"# {doc.focus}"]
    for pair in doc.pairs:
        blocks.append(f"## {pair.question}")
        blocks.extend(pair.answer_lines)
    blocks.append("---")
    blocks.append(source_line(doc, rel_path))
    return "\n\n".join(blocks) + "\n"


def to_text(doc: MedQuADDocument, rel_path: str) -> str:
    """Render a document as plain text: title, then each question and its answer paragraphs."""
    blocks = [doc.focus]
    for pair in doc.pairs:
        blocks.append(pair.question)
        blocks.extend(pair.answer_lines)
    blocks.append(source_line(doc, rel_path))
    return "\n\n".join(blocks) + "\n"


_META = re.compile(r'<meta\s+name="(citation_[a-z_]+)"\s+content="([^"]*)"', re.IGNORECASE)
ARTICLE_COLUMNS = ("file", "title", "category", "first_author", "year", "doi")


def article_row(name: str, page: str) -> dict[str, str]:
    """One ``articles.csv`` row from a PCD page's ``citation_*`` meta tags."""
    meta: dict[str, list[str]] = {}
    for key, value in _META.findall(page):
        meta.setdefault(key.lower(), []).append(html.unescape(value))
    authors = meta.get("citation_author", [])
    return {
        "file": name,
        "title": meta["citation_title"][0],
        "category": meta.get("citation_categories", [""])[0],
        "first_author": authors[0] if authors else "",
        "year": meta.get("citation_publication_date", [""])[0],
        "doi": meta.get("citation_doi", [""])[0],
    }


def articles_csv(pages: dict[str, str]) -> str:
    """The CSV table of the PCD articles, one row per page, in file-name order."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=ARTICLE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for name in sorted(pages):
        writer.writerow(article_row(name, pages[name]))
    return out.getvalue()


def write_text_file(path: Path, content: str) -> None:
    """Write UTF-8 text with LF line endings."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write(content)


def build(data_dir: Path, out_dir: Path) -> list[Path]:
    """Write every corpus file derived from ``data_dir`` into ``out_dir``; return their paths."""
    written: list[Path] = []

    html_dir = data_dir / "cdc-pcd-2024-html" / "html"
    for name in CDC_PCD_FILES:
        target = out_dir / "cdc-pcd" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(html_dir / name, target)
        written.append(target)
    pages = {
        name: (html_dir / name).read_text(encoding="utf-8", errors="replace")
        for name in CDC_PCD_FILES
    }
    target = out_dir / "cdc-pcd" / "articles.csv"
    write_text_file(target, articles_csv(pages))
    written.append(target)

    label = data_dir / "fda-remdesivir-label" / FDA_LABEL
    target = out_dir / "fda" / FDA_LABEL
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(label, target)
    written.append(target)

    medquad_dir = data_dir / "medquad"
    for rel_path, name in MEDQUAD_MARKDOWN:
        doc = read_medquad(medquad_dir / rel_path)
        target = out_dir / "medquad" / name
        write_text_file(target, to_markdown(doc, rel_path))
        written.append(target)

    for rel_path, name in MEDQUAD_TEXT:
        doc = read_medquad(medquad_dir / rel_path)
        target = out_dir / name
        write_text_file(target, to_text(doc, rel_path))
        written.append(target)

    return written


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DATA_DIR,
        help=f"public data root (default: {DEFAULT_DATA_DIR})",
    )
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=DEFAULT_OUT_DIR,
        help="corpus directory to write (default: examples/corpus)",
    )
    args = parser.parse_args(argv)
    for path in build(args.data_dir, args.out_dir):
        print(f"{path.stat().st_size:>8}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
