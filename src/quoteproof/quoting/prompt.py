"""The model-facing protocol's prompt: sources in `<source ref>` form plus the rules.

In `quote` and `cite` prompts each source's quotable units (`quoting.units`) are
numbered: each unit starts a line with its number in braces, `{3} The words of the
unit.`, so the model can quote it with `<quote ref="REF" unit="3"/>` (a few tokens)
instead of copying its words. Text that is in no unit (a heading, a table's header
row) is shown on lines of its own without a number; a unit that overlaps the one
before (a list item shown with its lead-in) is shown whole again, so every number
stands before exactly the words it quotes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quoteproof.llm.base import Message
from quoteproof.llm.quotable import Unit
from quoteproof.model import Chunk
from quoteproof.quoting.units import SourceUnits

# Tag-like strings in source text that could be mistaken for protocol tags.
_PROTOCOL_TAG = re.compile(r"<(?=\s*/?\s*(?:source|quote|title|no[-_]answer)\b)", re.IGNORECASE)

SOURCES_RULE = """\
Each source is wrapped in <source ref="REF"> ... </source>, and the parts of it you \
may quote are numbered: a line that starts with {N} is part N of that source."""

QUOTE_RULE = """\
To quote part N of a source, write <quote ref="REF" unit="N"/>; it is replaced by \
that part's own words, so never copy the words yourself. A source with no numbered \
part can be quoted whole: <quote ref="REF"/>."""

SYSTEM_PROMPT = f"""\
You answer questions using only the sources you are given. {SOURCES_RULE}

Rules for your reply:
1. Prefer quoting. {QUOTE_RULE}
2. After your quotes you may add one short sentence of your own. End it with the \
refs it relies on, like [REF].
3. Use only refs and part numbers that appear in the sources below. Never invent facts.
4. If the sources do not answer the question, reply with exactly <no-answer/> and nothing else.
"""


def escape_source_text(text: str) -> str:
    """Return `text` with protocol-like tags (`<quote`, `</source`, ...) made inert.

    Only the `<` that opens such a tag is replaced by `&lt;`; the aligner unescapes
    entities, so a model that copies the escaped form still resolves.
    """
    return _PROTOCOL_TAG.sub("&lt;", text)


def numbered_text(text: str, units: Sequence[Unit]) -> str:
    """Return `text` as lines: each unit's words `text[start:end]` after its number
    (`{1} `, `{2} `, … in the order of `units`), and the text between units that no
    unit covers, stripped, on lines of its own; `text` itself when `units` is empty.
    Protocol-like tags are escaped (`escape_source_text`)."""
    if not units:
        return escape_source_text(text)
    lines = []
    shown = 0
    for number, unit in enumerate(units, start=1):
        gap = text[shown : unit.start].strip()
        if gap:
            lines.append(gap)
        lines.append(f"{{{number}}} {text[unit.start : unit.end]}")
        shown = max(shown, unit.end)
    rest = text[shown:].strip()
    if rest:
        lines.append(rest)
    return escape_source_text("\n".join(lines))


def format_sources(chunks: Sequence[Chunk], units: SourceUnits | None = None) -> str:
    """Return the sources block: one `<source ref="REF">` element per chunk, in order;
    with `units`, each chunk's quotable units numbered (`numbered_text`)."""
    parts = []
    for chunk in chunks:
        if units is None:
            text = escape_source_text(chunk.text)
        else:
            text = numbered_text(chunk.text, units.get(chunk.ref, ()))
        parts.append(f'<source ref="{chunk.ref}">\n{text}\n</source>')
    return "\n\n".join(parts)


def build_messages(
    question: str, chunks: Sequence[Chunk], units: SourceUnits
) -> tuple[Message, ...]:
    """Return the system and user messages asking `question` over `chunks`, their
    quotable `units` numbered."""
    user = f"{format_sources(chunks, units)}\n\nQuestion: {question.strip()}"
    return (Message("system", SYSTEM_PROMPT), Message("user", user))
