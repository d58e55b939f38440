"""Turning a free-text question into an FTS5 MATCH expression (pure functions)."""

from __future__ import annotations

from quoteproof.terms import query_terms


def fts_match_query(text: str) -> str | None:
    """Return an FTS5 MATCH expression OR-ing the terms of `text`, or None if it has none.

    Each term is double-quoted, so FTS5 operators and punctuation in the question
    are never interpreted.
    """
    phrases = fts_phrases(text)
    return " OR ".join(phrases) if phrases else None


def fts_phrases(text: str) -> list[str]:
    """Return the terms of `text` (`query_terms`) as FTS5 phrases: each double-quoted
    (quotes doubled), so that FTS5 operators and punctuation are never interpreted."""
    return ['"' + term.replace('"', '""') + '"' for term in query_terms(text)]
