"""Text made safe to show: one notion of a line ending, control characters made visible.

Shared by every renderer and every message the CLI prints, so a line break in
answer text is a line break in every format, and nothing a terminal acts on (ESC
and the other C0 and C1 controls, DEL, the bidirectional overrides and isolates
U+202A-U+202E and U+2066-U+2069) reaches a terminal or a page from a document, a
file name or a model. Each such character is shown, never dropped: C0 controls and
DEL as their Unicode pictures (`␛`, `␡`), the others as escapes (`\\x9b`,
`\\u202e`); lone surrogates (the undecodable bytes of a file name) as the byte they
stand for (`\\xff`). A single line (`visible_line`: a title, a file name) also
shows the invisible characters that make two names look alike (`INVISIBLE`:
zero-width space, bidi marks, word joiner, BOM); running text keeps them, and keeps
the zero-width (non-)joiners everywhere, which some scripts need. Every other
character is shown as it is.
"""

from __future__ import annotations

import re

__all__ = ["BIDI_CONTROLS", "INVISIBLE", "normalise_breaks", "visible", "visible_line"]

_LINE_BREAK = re.compile("\r\n|[\r\x85\u2028\u2029]")

BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
"""The bidirectional embeddings, overrides and isolates, as a regex character range:
they reorder how text after them is drawn, so `evil\u202etxt.exe` reads `evilexe.txt`."""
INVISIBLE = "\u061c\u200b\u200e\u200f\u2060-\u2064\ufeff"
"""Characters that draw nothing and join no letters, as a regex character range: the
Arabic letter mark, zero-width space, left-to-right and right-to-left marks, word
joiner and invisible operators, and the zero-width no-break space (BOM)."""
_SHOWN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}\ud800-\udfff]")
"""What `visible` shows differently: every control but tab and line feed."""
_SHOWN_IN_LINE = re.compile(
    f"[\x00-\x1f\x7f-\x9f\u2028\u2029{BIDI_CONTROLS}{INVISIBLE}\ud800-\udfff]"
)
"""What `visible_line` shows differently: every control, line separators, and the
invisible characters."""


def normalise_breaks(text: str) -> str:
    """Return `text` with every line ending (`\\r\\n`, `\\r`, NEL, U+2028, U+2029) as `\\n`."""
    return _LINE_BREAK.sub("\n", text)


def _stand_in(match: re.Match[str]) -> str:
    """The visible stand-in for one character that must not reach a terminal raw."""
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    if code <= 0xFF:
        return f"\\x{code:02x}"  # C1 controls
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # an undecodable byte (surrogateescape)
    return f"\\u{code:04x}"


def visible(text: str) -> str:
    """Return `text` with normalised line endings (`normalise_breaks`) and every other
    control character shown (see the module docstring); tabs and line feeds are
    kept. For text shown on several lines: a passage, a quote, an answer."""
    return _SHOWN.sub(_stand_in, normalise_breaks(text))


def visible_line(text: str) -> str:
    """Return `text` on one line with every control character shown, line breaks
    and tabs included (`␊`, `␍`, `␉`, `\\u2028`), and the `INVISIBLE` characters
    (`\\u200b`): for a file name, a title or a message, which must never begin a
    second line nor pass for another."""
    return _SHOWN_IN_LINE.sub(_stand_in, text)
