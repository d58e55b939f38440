"""A saved run's values as the HTML report reads them: the run's JSON may hold
anything where a section expects an object, a list or text, so every value is
escaped as HTML text (`esc`), and an object or a list is read as one, empty when
it is not (`as_dict`, `as_list`).
"""

from __future__ import annotations

from typing import Any

from quoteproof.render.html import escape

__all__ = ["as_dict", "as_list", "esc"]


def esc(value: object) -> str:
    """Any value from the run, as escaped HTML character data (None as "")."""
    return escape("" if value is None else str(value))


def as_dict(value: object) -> dict[str, Any]:
    """`value` when it is a JSON object, else {}."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """`value` when it is a JSON array, else []."""
    return value if isinstance(value, list) else []
