"""Turning a free-text question into an FTS5 MATCH expression (pure functions)."""

from __future__ import annotations

from quoteproof.terms import query_terms


def fts_match_query(text: str) -> str | None:
    """Return an FTS5 MATCH expression OR-ing the terms of `text`, or None if it has none.

    Each term is double-quoted, so FTS5 operators and punctuation in the question
    are never interpreted.
    """
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
