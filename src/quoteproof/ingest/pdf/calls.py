"""Unchecked ctypes entry points to the PDFium functions ingest calls per line or object.

pypdfium2's bindings check and convert every argument, which costs about 0.35 µs
a call; ingest makes about ten calls per text line and two per page object, so
these hot functions are re-declared here without argument conversion (twice as
fast). The rule for callers: pass handles as `ctypes.c_void_p` (see `handle`),
indexes as `int` and out-parameters as `ctypes.byref(...)`, exactly as the C
prototypes in PDFium's public headers take them. Never pass a Python int as a
handle: without declared argument types it would be cut to 32 bits.
"""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]


def _entry(name: str, restype: Any = ctypes.c_int) -> Any:
    """PDFium function `name` as a ctypes function that converts no arguments (a
    prototype with no declared parameters passes each argument as given)."""
    address = ctypes.cast(getattr(pdfium_c, name), ctypes.c_void_p).value
    assert address is not None, name
    return ctypes.CFUNCTYPE(restype)(address)


def handle(pointer: Any) -> ctypes.c_void_p:
    """A pypdfium2 handle (`textpage.raw`, `page.raw`) as a plain void pointer."""
    return ctypes.c_void_p(ctypes.cast(pointer, ctypes.c_void_p).value)


# FPDF_BOOL FPDFText_GetLooseCharBox(FPDF_TEXTPAGE, int index, FS_RECTF* rect)
loose_char_box = _entry("FPDFText_GetLooseCharBox")
# double FPDFText_GetFontSize(FPDF_TEXTPAGE, int index)
font_size = _entry("FPDFText_GetFontSize", ctypes.c_double)
# FPDF_BOOL FPDFText_GetMatrix(FPDF_TEXTPAGE, int index, FS_MATRIX* matrix)
char_matrix = _entry("FPDFText_GetMatrix")
# int FPDFText_GetFontWeight(FPDF_TEXTPAGE, int index)
font_weight = _entry("FPDFText_GetFontWeight")
# FPDF_BOOL FPDFText_GetFillColor(FPDF_TEXTPAGE, int index, uint* r, uint* g, uint* b, uint* a)
fill_color = _entry("FPDFText_GetFillColor")
# FPDF_PAGEOBJECT FPDFPage_GetObject(FPDF_PAGE, int index)
page_object = _entry("FPDFPage_GetObject", ctypes.c_void_p)
# int FPDFPageObj_GetType(FPDF_PAGEOBJECT)
object_type = _entry("FPDFPageObj_GetType")
