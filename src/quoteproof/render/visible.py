"""Text made safe to show: one notion of a line ending, control characters as pictures.

Shared by every renderer, so a line break in answer text is a line break in every
format, and no control character (ESC included) reaches a terminal or a page.
"""

from __future__ import annotations

import re

__all__ = ["normalise_breaks", "visible"]

_LINE_BREAK = re.compile("\r\n|[\r\x85\u2028\u2029]")


def normalise_breaks(text: str) -> str:
    """Return `text` with every line ending (`\\r\\n`, `\\r`, NEL, U+2028, U+2029) as `\\n`."""
    return _LINE_BREAK.sub("\n", text)


def _picture(ch: str) -> str:
    """Return a visible stand-in for a control character, or `ch` itself."""
    code = ord(ch)
    if ch in "\n\t":
        return ch
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    if 0x80 <= code <= 0x9F:
        return "\ufffd"
    return ch


def visible(text: str) -> str:
    """Return `text` with normalised line endings (`normalise_breaks`) and every other
    control character shown as its Unicode picture (`␛`; U+FFFD for C1 controls);
    tabs are kept."""
    text = normalise_breaks(text)
    if all(" " <= ch < "\x7f" or ch in "\t\n" or ch > "\x9f" for ch in text):
        return text
    return "".join(_picture(ch) for ch in text)
