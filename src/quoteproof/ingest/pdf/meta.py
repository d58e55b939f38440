"""Reading a PDF's metadata with PDFium: outline (bookmarks), title and language."""

from __future__ import annotations

import ctypes
import re
from pathlib import PurePath

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from quoteproof.ingest.pdf.headings import Bookmark

_GENERATED_TITLE = re.compile(
    r"(microsoft\s+\w+\s+-|\(?anonymous\)?$|untitled\b|title$|document\s*\d*$)", re.I
)
_FILE_NAME = re.compile(r"\.[A-Za-z][A-Za-z0-9]{1,4}$")
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*")
_SPACES = re.compile(r"\s+")


def _bookmark_page(document: pdfium.PdfDocument, bookmark: pdfium.PdfBookmark) -> int | None:
    dest = bookmark.get_dest()
    if dest is not None:
        index: int | None = dest.get_index()
        return index
    action = pdfium_c.FPDFBookmark_GetAction(bookmark.raw)
    if not action or pdfium_c.FPDFAction_GetType(action) != pdfium_c.PDFACTION_GOTO:
        return None
    raw_dest = pdfium_c.FPDFAction_GetDest(document.raw, action)
    if not raw_dest:
        return None
    page = int(pdfium_c.FPDFDest_GetDestPageIndex(document.raw, raw_dest))
    return page if page >= 0 else None


def read_bookmarks(document: pdfium.PdfDocument) -> list[Bookmark]:
    """The outline entries that name a page, in outline order (titles starting with
    "_", such as Word's "_GoBack", are skipped)."""
    bookmarks: list[Bookmark] = []
    for item in document.get_toc():
        title = str(item.get_title())
        page = _bookmark_page(document, item)
        if page is not None and title.strip() and not title.startswith("_"):
            bookmarks.append(Bookmark(int(item.level), title, page))
    return bookmarks


def meaningful_title(title: str, path: str) -> bool:
    """Whether a metadata Title names the document: not empty, not a generator's
    label ("Microsoft Word - x.docx", "Untitled", reportlab's "(anonymous)"), not a
    file name."""
    title = _SPACES.sub(" ", title).strip()
    if sum(char.isalpha() for char in title) < 2:
        return False
    if _GENERATED_TITLE.match(title) or _FILE_NAME.search(title):
        return False
    return title.casefold() != PurePath(path).stem.casefold()


def read_language(document: pdfium.PdfDocument) -> str:
    """The catalog's /Lang as a BCP 47 tag in its usual case ("fr-CA"), or "en" when
    absent or malformed."""
    size = int(pdfium_c.FPDFCatalog_GetLanguage(document.raw, None, 0))
    if size <= 2:
        return "en"
    buffer = (ctypes.c_ushort * (size // 2))()
    pdfium_c.FPDFCatalog_GetLanguage(document.raw, buffer, size)
    tag = ctypes.string_at(buffer, size - 2).decode("utf-16-le", errors="replace").strip()
    if not _LANGUAGE_TAG.fullmatch(tag):
        return "en"
    language, *subtags = tag.split("-")
    cased = [part.upper() if len(part) == 2 else part.lower() for part in subtags]
    return "-".join([language.lower(), *cased])
