"""The model-facing protocol's prompt: sources in `<source ref>` form plus the rules.

In `quote` and `cite` prompts each source's quotable units (`quoting.units`) are
numbered: each unit starts a line with its number in braces, `{3} The words of the
unit.`, so the model can quote it with `<quote ref="REF" unit="3"/>` (a few tokens)
instead of copying its words. Text that is in no unit (a heading, a table's header
row) is shown on lines of its own without a number; a unit that starts in the lines
before it (a list item quoted with its lead-in) shows only its new words, or its last
line, behind `{N} … `, and a unit of the same span as an earlier unit M is shown as
`{N} = {M}`, so the prompt does not repeat a lead-in and its list for every item.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quoteproof.llm.base import Message
from quoteproof.llm.quotable import Unit
from quoteproof.model import Chunk
from quoteproof.quoting.units import OfferedUnits, SourceUnits

# Tag-like strings in source text that could be mistaken for protocol tags.
_PROTOCOL_TAG = re.compile(
    r"<(?=\s*/?\s*(?:source|quote|title|facts|no[-_]answer)\b)", re.IGNORECASE
)

CONTINUES = "… "
"""After a unit's number: the unit starts on the lines above (its lead-in)."""

SOURCES_RULE = f"""\
Each source is wrapped in <source ref="REF"> ... </source>, and the parts of it you \
may quote are numbered: a line that starts with {{N}} is part N of that source (with \
{{N}} {CONTINUES.strip()} the part also includes the lines above it that lead in to it)."""

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
    """Return `text` with protocol-like tags (`<quote`, `</source`, `</facts`, ...) made inert.

    Only the `<` that opens such a tag is replaced by `&lt;`; the aligner unescapes
    entities, so a model that copies the escaped form still resolves.
    """
    return _PROTOCOL_TAG.sub("&lt;", text)


def _unit_words(text: str, unit: Unit, shown: int, same: int, number: int) -> str:
    """What follows unit `number`'s number (see `numbered_text`): `text[:shown]` is
    on the lines before it, `same` the first unit of its span."""
    if same != number:
        return f"= {{{same}}}"
    if unit.start >= shown:
        return text[unit.start : unit.end]
    cut = shown if unit.end > shown else text.rfind("\n", unit.start, unit.end) + 1
    if cut <= unit.start:
        return text[unit.start : unit.end]
    return CONTINUES + text[cut : unit.end].strip()


def numbered_text(text: str, units: Sequence[Unit]) -> str:
    """Return `text` as lines: each unit's words `text[start:end]` after its number
    (`{1} `, `{2} `, … in the order of `units`), and the text between units that no
    unit covers, stripped, on lines of its own; `text` itself when `units` is empty.
    A unit that starts in the lines shown before it (a list item with its lead-in)
    shows, behind `CONTINUES`, only its words after them, or when it ends inside them
    its last line; a unit of the same span as an earlier unit M is shown as `= {M}`;
    a one-line unit inside them is shown whole again. Protocol-like tags are escaped
    (`escape_source_text`)."""
    if not units:
        return escape_source_text(text)
    lines = []
    shown = 0
    numbers: dict[tuple[int, int], int] = {}
    for number, unit in enumerate(units, start=1):
        gap = text[shown : unit.start].strip()
        if gap:
            lines.append(gap)
        same = numbers.setdefault((unit.start, unit.end), number)
        lines.append(f"{{{number}}} {_unit_words(text, unit, shown, same, number)}")
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


OFFERED_NOTE = (
    "Only the parts most likely to answer are shown, with their numbers in their "
    "source; the most likely come first."
)


def format_offered(chunks: Sequence[Chunk], units: SourceUnits, offered: OfferedUnits) -> str:
    """Return the sources block of an offer: one `<source ref="REF">` element per
    source of `offered` that is one of `chunks`, in `offered`'s order, holding only
    its offered units, each whole on a line after its number (`{N} `)."""
    by_ref = {chunk.ref: chunk for chunk in chunks}
    parts = []
    for ref, numbers in offered.items():
        chunk = by_ref.get(ref)
        if chunk is None:
            continue
        shown = [units[ref][n - 1] for n in numbers]
        text = "\n".join(
            f"{{{n}}} {chunk.text[u.start : u.end]}" for n, u in zip(numbers, shown, strict=True)
        )
        parts.append(f'<source ref="{ref}">\n{escape_source_text(text)}\n</source>')
    return "\n\n".join(parts)


def build_messages(
    question: str,
    chunks: Sequence[Chunk],
    units: SourceUnits,
    offered: OfferedUnits | None = None,
    *,
    system: str = SYSTEM_PROMPT,
) -> tuple[Message, ...]:
    """Return the system message `system` (by default, quote mode's rules) and the
    user message asking `question` over `chunks`, their quotable `units` numbered;
    with `offered`, only the offered units are shown (`format_offered`), with a note
    that says so."""
    user = f"{sources_block(chunks, units, offered)}\n\nQuestion: {question.strip()}"
    return (Message("system", system), Message("user", user))


def sources_block(
    chunks: Sequence[Chunk], units: SourceUnits, offered: OfferedUnits | None = None
) -> str:
    """The sources of a prompt: with `offered`, only the offered units, after a note
    that says so (`format_offered`); else every chunk with its units numbered."""
    if offered:
        return f"{OFFERED_NOTE}\n\n{format_offered(chunks, units, offered)}"
    return format_sources(chunks, units)
