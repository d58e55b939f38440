"""Markup documents: web pages (`parse.parse_html`, its main content found with
trafilatura, under the depth and size limits of `depth`) and FDA SPL labels
(`spl.parse_spl`, HL7 XML whose sections hold HTML-like text)."""
