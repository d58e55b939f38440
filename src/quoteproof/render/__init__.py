"""Renderers of answers and search hits: terminal, Markdown, JSON."""
