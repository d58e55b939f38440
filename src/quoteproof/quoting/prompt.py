"""The model-facing protocol's prompt: sources in `<source ref>` form plus the rules."""

from __future__ import annotations

import re
from collections.abc import Sequence

from quoteproof.llm.base import Message
from quoteproof.model import Chunk

# Tag-like strings in source text that could be mistaken for protocol tags.
_PROTOCOL_TAG = re.compile(r"<(?=\s*/?\s*(?:source|quote|title|no[-_]answer)\b)", re.IGNORECASE)

SYSTEM_PROMPT = """\
You answer questions using only the sources you are given. Each source is wrapped \
in <source ref="REF"> ... </source>.

Rules for your reply:
1. Prefer quoting. To quote a whole source write <quote ref="REF"/>. To quote part \
of a source write <quote ref="REF">the exact words, copied from that source</quote>. \
Quotes are replaced by the source's own text, so copy the words exactly and do not \
paraphrase inside a quote.
2. You may add short sentences of your own to connect the quotes. End every such \
sentence with the refs it relies on, like [REF].
3. Use only refs that appear in the sources below. Never invent facts.
4. If the sources do not answer the question, reply with exactly <no-answer/> and nothing else.
"""


def escape_source_text(text: str) -> str:
    """Return `text` with protocol-like tags (`<quote`, `</source`, ...) made inert.

    Only the `<` that opens such a tag is replaced by `&lt;`; the aligner unescapes
    entities, so a model that copies the escaped form still resolves.
    """
    return _PROTOCOL_TAG.sub("&lt;", text)


def format_sources(chunks: Sequence[Chunk]) -> str:
    """Return the sources block: one `<source ref="REF">` element per chunk, in order."""
    parts = []
    for chunk in chunks:
        parts.append(f'<source ref="{chunk.ref}">\n{escape_source_text(chunk.text)}\n</source>')
    return "\n\n".join(parts)


def build_messages(question: str, chunks: Sequence[Chunk]) -> tuple[Message, ...]:
    """Return the system and user messages asking `question` over `chunks`."""
    user = f"{format_sources(chunks)}\n\nQuestion: {question.strip()}"
    return (Message("system", SYSTEM_PROMPT), Message("user", user))
