"""Grammars for constrained generation: the reply shapes of each answer mode, in GBNF
(llama.cpp's grammar format, also read by llama.cpp's server and vLLM).

A backend that can constrain its output (`Capability.CONSTRAINED`) samples only tokens
the grammar allows, so a model can write nothing but the protocol: quotes whose
`ref` is one of the retrieved refs, prose sentences that end with `[REF]`
citations, or `<no-answer/>`. A quote can only be a pointer,
`<quote ref="REF" unit="N"/>`, to a unit the source has (`quoting.units`, numbered
as the prompt shows them), or `<quote ref="REF"/>` for a source with no units: the
model chooses what to quote in a few tokens and never spells out words that the
resolver would replace anyway. The grammar makes replies *parse*; it does not make
them true. Pointers are still resolved from the index, citations still checked,
and whatever a grammar lets through is treated like any model output.

Prose is written without `<`, `>`, `[`, `]`, line breaks and sentence ends (`.`
only inside a number, as in "2.5 mg"), so every sentence the grammar allows is one
sentence to the citation checker and carries its own markers. Each text run is
bounded, and so is the number of items, so a reply cannot run away inside the
grammar (the request's `max_tokens` bounds it as well).

Every function is pure and O(size of its inputs); a quote grammar grows with the
number of sources and units, not with the length of their text.
"""

from __future__ import annotations

from collections.abc import Sequence

from quoteproof.llm.gbnf import literal
from quoteproof.model import Chunk
from quoteproof.quoting.units import OfferedUnits, SourceUnits

__all__ = [
    "CITE_REPLY_TOKENS",
    "QUOTE_REPLY_TOKENS",
    "cite_grammar",
    "facts_grammar",
    "finished_items",
    "quote_grammar",
    "statement_grammar",
    "triplet_grammar",
    "verdict_grammar",
]

MAX_ITEMS = 8
"""Most quotes and sentences one reply may hold."""
MAX_QUOTES = 4
"""Most quotes of a `quote` mode reply (then at most one short sentence)."""
SENTENCE_CHARS = 300
QUOTE_MODE_SENTENCE_CHARS = 150
"""A `quote` mode reply's one sentence only adds to its quotes: shorter than a `cite`
sentence (and every token a model writes costs time)."""
QUOTE_REPLY_TOKENS = 256
"""The tokens a `quote` mode reply may take: room for `MAX_QUOTES` pointers and one
sentence at about a token per character. A reply cut there loses only its sentence's
citation, and an uncited sentence is never shown."""
CITE_REPLY_TOKENS = 96
"""The tokens a `cite` reply under the grammar may take: two or three short cited
sentences (every token a local model writes costs it 25-50 ms on two cores); the
unfinished item a reply cut there ends with is dropped (`finished_items`)."""
MAX_CITES = 3
"""Most citation markers after one sentence (a tiny model repeats them in a loop)."""
JUSTIFICATION_CHARS = 300


def _common(sentence_chars: int = SENTENCE_CHARS) -> str:
    """The rules every protocol grammar shares; a sentence's text is at most
    `sentence_chars` + 1 letters and numbers, and a number (at most 6 digits, then
    at most 4 decimals) is followed by a letter, never by another number: a digit
    run is bounded like a word."""
    return f"""
no-answer ::= "<no-answer/>"
sep ::= " " | "\\n"
cite ::= " "? "[" ref "]"
sentence ::= text cite{{1,{MAX_CITES}}} "."?
text ::= piece{{1,{sentence_chars + 1}}}
piece ::= letter | number letter
letter ::= [^<>\\[\\]\\n.!?0-9]
number ::= [0-9]{{1,6}} ("." [0-9]{{1,4}})?
"""


def finished_items(reply: str) -> tuple[str, str]:
    """Split a reply written under a `quote` or `cite` grammar into its finished items
    and the unfinished rest. Every item those grammars allow ends with a citation
    marker (`]`, then perhaps `.`) or a pointer's `/>`, so text after the last such end
    is an item the token budget cut before it was finished. O(len(reply))."""
    pointer = reply.rfind("/>")
    end = max(reply.rfind("]") + 1, pointer + 2 if pointer >= 0 else 0)
    if end and reply[end : end + 1] == ".":
        end += 1
    return reply[:end], reply[end:].strip()


def _choice(values: Sequence[str]) -> str:
    return " | ".join(literal(value) for value in dict.fromkeys(values))


def _ref_rule(refs: Sequence[str]) -> str:
    if not refs:
        raise ValueError("a protocol grammar needs at least one retrieved ref")
    return f"ref ::= {_choice(refs)}"


_UNIT_ATTR = '" unit="'
"""What follows a ref in a pointer, before the unit number."""


def _quote_rules(
    sources: Sequence[Chunk], units: SourceUnits, offered: OfferedUnits | None = None
) -> str:
    """`quote`: a pointer to a unit of one of `sources` (`units`, by ref), or the
    whole of a source that has none; with `offered`, a pointer to an offered unit of
    an offered source only. The numbers of sources with the same choice share one
    rule."""
    if offered:
        sources = [chunk for chunk in sources if chunk.ref in offered]
    if not sources:
        raise ValueError("a protocol grammar needs at least one retrieved source")
    targets = []
    numbers: dict[str, str] = {}
    for chunk in sources:
        count = len(units.get(chunk.ref, ()))
        allowed = sorted(offered[chunk.ref]) if offered else range(1, count + 1)
        if count:
            name = "unit-" + ("-".join(map(str, allowed)) if offered else f"1-{count}")
            numbers[name] = _choice([str(n) for n in allowed])
            targets.append(f"{literal(chunk.ref + _UNIT_ATTR)} {name}")
        else:
            targets.append(literal(chunk.ref))
    rules = [
        'quote ::= "<quote ref=\\"" target "\\"/>"',
        f"target ::= {' | '.join(dict.fromkeys(targets))}",
        *(f"{name} ::= {body}" for name, body in numbers.items()),
    ]
    return "\n".join(rules)


def quote_grammar(
    sources: Sequence[Chunk],
    units: SourceUnits,
    offered: OfferedUnits | None = None,
    facts: Sequence[str] = (),
) -> str:
    """The `quote` mode reply: `<no-answer/>`, or 1 to `MAX_QUOTES` quotes of `sources`
    (pointers to their `units`, or with `offered` to the offered units only, see
    `_quote_rules`), then at most one short cited sentence
    (`QUOTE_MODE_SENTENCE_CHARS`) citing the quoted sources or the triplets `facts`
    (`TID-n`).

    Raises `ValueError` when `sources` is empty.
    """
    refs = [chunk.ref for chunk in sources if not offered or chunk.ref in offered]
    refs += facts
    return (
        f"root ::= no-answer | quote (sep quote){{0,{MAX_QUOTES - 1}}} (sep sentence)?\n"
        f"{_quote_rules(sources, units, offered)}\n{_ref_rule(refs)}"
        f"{_common(QUOTE_MODE_SENTENCE_CHARS)}"
    )


def cite_grammar(sources: Sequence[Chunk], units: SourceUnits, facts: Sequence[str] = ()) -> str:
    """The `cite` reply (and the rationale's answer): `<no-answer/>`, or up to
    `MAX_ITEMS` sentences citing `sources` (or the triplets `facts`, `TID-n`) and
    quotes of them (pointers to their `units`). Raises `ValueError` when `sources`
    is empty."""
    refs = [chunk.ref for chunk in sources] + list(facts)
    return (
        f"root ::= no-answer | item (sep item){{0,{MAX_ITEMS - 1}}}\n"
        "item ::= sentence | quote\n"
        f"{_quote_rules(sources, units)}\n{_ref_rule(refs)}{_common()}"
    )


def _numbered_lines(ids: Sequence[str], body: str, *, optional: bool) -> str:
    """`S1: <body>` lines for `ids` in order; with `optional`, each line after the
    first may be left out together with the lines after it."""
    root = ""
    for position, statement_id in enumerate(reversed(ids)):
        line = f"{literal(f'{statement_id}: ')} {body}"
        if position == 0:
            root = line
        elif optional:
            root = f'{line} ("\\n" {root})?'
        else:
            root = f'{line} "\\n" {root}'
    return root


def statement_grammar(refs: Sequence[str], ids: Sequence[str], *, no_answer: bool) -> str:
    """Numbered rationale statements, `S1: text [REF]`, one per line.

    `ids` are the statement numbers allowed, in order (all of them required when
    `no_answer` is False, as for the refine stage; else a prefix of at least one, or
    `<no-answer/>`). Raises `ValueError` when `refs` or `ids` is empty.
    """
    if not ids:
        raise ValueError("a statement grammar needs at least one statement id")
    lines = _numbered_lines(ids, "sentence", optional=no_answer)
    root = f"root ::= no-answer | {lines}" if no_answer else f"root ::= {lines}"
    return f"{root}\n{_ref_rule(refs)}{_common()}"


def verdict_grammar(ids: Sequence[str], labels: Sequence[str]) -> str:
    """One verdict line per statement of `ids`, in order: `S1: LABEL — justification`.
    Raises `ValueError` when `ids` or `labels` is empty."""
    if not ids or not labels:
        raise ValueError("a verdict grammar needs statement ids and labels")
    return (
        f"root ::= {_numbered_lines(ids, 'verdict', optional=False)}\n"
        f'verdict ::= label " — " [^\\n]{{1,{JUSTIFICATION_CHARS}}}\n'
        f"label ::= {_choice(labels)}\n"
    )


def facts_grammar(fact_refs: Sequence[str]) -> str:
    """A reply from triplets alone (`--context triplets`): `<no-answer/>`, or up to
    `MAX_ITEMS` sentences, each citing the triplets `fact_refs` (`TID-n`). Raises
    `ValueError` when `fact_refs` is empty."""
    return (
        f"root ::= no-answer | sentence (sep sentence){{0,{MAX_ITEMS - 1}}}\n"
        f"{_ref_rule(fact_refs)}{_common()}"
    )


MAX_TRIPLETS = 12
"""Most triplets one extraction reply may hold."""
TRIPLET_PART_CHARS = 60
"""Most characters of an extracted triplet's subject, relation or object: a short
name, as the extraction prompt asks (longer parts let a small model run its reply
to the token limit: 12 lines of 120-character parts filled SmolLM2's 1,024 tokens)."""


def triplet_grammar(sources: Sequence[Chunk], units: SourceUnits) -> str:
    """Triplets extracted from `sources`: 1 to `MAX_TRIPLETS` lines
    `REF #N: subject | relation | object`, where unit N of source REF (`units`) is
    the sentence the triplet comes from. Raises `ValueError` when no source has a
    unit."""
    targets = []
    numbers: dict[str, str] = {}
    for chunk in sources:
        count = len(units.get(chunk.ref, ()))
        if count:
            name = f"unit-1-{count}"
            numbers[name] = _choice([str(n) for n in range(1, count + 1)])
            targets.append(f"{literal(chunk.ref + ' #')} {name}")
    if not targets:
        raise ValueError("a triplet grammar needs a source with numbered units")
    part = f"[^|<>\\[\\]\\n]{{1,{TRIPLET_PART_CHARS}}}"
    return (
        "\n".join(
            [
                f'root ::= triplet ("\\n" triplet){{0,{MAX_TRIPLETS - 1}}}',
                'triplet ::= target ": " part " | " part " | " part',
                f"target ::= {' | '.join(dict.fromkeys(targets))}",
                *(f"{name} ::= {body}" for name, body in numbers.items()),
                f"part ::= {part}",
            ]
        )
        + "\n"
    )
