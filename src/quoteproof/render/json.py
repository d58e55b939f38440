"""An answer as JSON text, the `quoteproof.answer/1` format of `quoteproof.codec`."""

from __future__ import annotations

import json

from quoteproof.codec import answer_to_dict
from quoteproof.model import Answer

__all__ = ["render_json"]


def render_json(answer: Answer) -> str:
    """Return `answer` as JSON text: indent 2, non-ASCII kept as is (`ensure_ascii=False`).

    Raises `ValueError` if a float (a score, a box coordinate, a data value) is NaN
    or infinite (not representable in JSON).
    """
    return json.dumps(answer_to_dict(answer), indent=2, ensure_ascii=False, allow_nan=False)
