"""JSON text for the terminal and for files: answers in the `quoteproof.answer/1`
format of `quoteproof.codec`, and any other JSON the CLI prints."""

from __future__ import annotations

import json
import re
from typing import Any

from quoteproof.codec import answer_to_dict
from quoteproof.model import Answer
from quoteproof.render.visible import BIDI_CONTROLS

__all__ = ["json_text", "render_json"]

_ESCAPED = re.compile(f"[\x7f-\x9f{BIDI_CONTROLS}\ud800-\udfff]")
"""What `json.dumps` leaves raw that a terminal would act on (DEL, C1 controls, bidi
overrides), and lone surrogates, which no UTF-8 output can carry."""


def json_text(data: Any, *, indent: int | None = None, allow_nan: bool = True) -> str:
    """Return `data` as JSON text with non-ASCII kept as is, except DEL, C1 controls,
    bidi overrides and lone surrogates, written as `\\uXXXX` escapes: the same data
    to any JSON reader, and nothing a terminal acts on (`json.dumps` escapes the
    C0 controls itself). Raises `ValueError` for NaN or infinity unless `allow_nan`."""
    text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=allow_nan)
    return _ESCAPED.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def render_json(answer: Answer) -> str:
    """Return `answer` as JSON text: indent 2, non-ASCII kept as is (`json_text`).

    Raises `ValueError` if a float (a score, a box coordinate, a data value) is NaN
    or infinite (not representable in JSON).
    """
    return json_text(answer_to_dict(answer), indent=2, allow_nan=False)
