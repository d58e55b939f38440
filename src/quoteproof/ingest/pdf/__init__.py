"""PDF documents: `parse.parse_pdf` reads a PDF with PDFium into canonical text,
blocks and page layout; the other modules are its stages (page content, ruled
tables and their cells, headings, outline and metadata, block structure, line
text, OCR of pages without a text layer)."""
