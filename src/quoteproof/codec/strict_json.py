"""Reading JSON from outside (request bodies, answer files) strictly.

Python's `json.loads` accepts what JSON does not hold and what cannot be written
back out: `NaN`, `Infinity` and `-Infinity`, numbers such as `1e309` that overflow
to infinity, and `\\ud83d`-style escapes of lone UTF-16 surrogates, which make
strings that no UTF-8 encoder (SQLite, a response, the terminal) accepts.
`loads_strict` refuses them, naming where they are (`top_k`, `quotes[0].doc_id`).
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["StrictJSONError", "json_kind", "loads_strict"]


class StrictJSONError(ValueError):
    """JSON that parses but holds a value JSON cannot carry (see the module docstring)."""


def json_kind(value: object) -> str:
    """How an error message names the kind of a decoded JSON value: `null`,
    `a boolean`, `a number`, `a string`, `an array` or `an object`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def loads_strict(text: str | bytes) -> Any:
    """Parse `text` as `json.loads` does.

    Raises `json.JSONDecodeError` for malformed JSON, and `StrictJSONError` (whose
    message starts with the path of the value, `(top)` for the whole document) for a
    number that is not finite, a string or key holding a lone surrogate, an
    integer too long to read, or nesting too deep for the parser. O(size of `text`).
    """
    try:
        data = json.loads(text, parse_constant=float)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer past Python's digit limit
        raise StrictJSONError(f"(top): {exc}") from None
    except RecursionError:
        raise StrictJSONError("(top): nested too deeply") from None
    _check(data, "")
    return data


def _check(value: Any, path: str) -> None:
    """Raise `StrictJSONError` at the first value under `value` JSON cannot carry."""
    # An explicit stack: a deeply nested document must not exhaust Python's stack.
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise StrictJSONError(f"{where or '(top)'}: expected a finite number, got {item}")
        if isinstance(item, str):
            _check_text(item, where)
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                _check_text(key, f"{where or '(top)'} key {_shown(key)}")
                stack.append((child, f"{where}.{key}" if where else key))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in reversed(list(enumerate(item))))


def _check_text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end]
        raise StrictJSONError(
            f"{where or '(top)'}: holds a lone surrogate {_shown(bad)}, which is not text"
        ) from None


def _shown(text: str) -> str:
    """`text` quoted, with surrogates as `\\udXXX` escapes (printable anywhere)."""
    return json.dumps(text, ensure_ascii=True)
