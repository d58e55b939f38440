"""Office documents: Word files (`docx.parse_docx`, read with python-docx)."""
