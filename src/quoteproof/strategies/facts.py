"""Triplets in an answer's context (`ask --context triplets|both`): their context
lines `TID-n`, how they enter a prompt, what a sentence citing one rests on, and
the facts an answer shows, each with the quote of its provenance read by lookup.

A triplet is generated text (imported from a graph file, or extracted from a
paragraph by the model): it is never drawn as a quote. What supports it is quoted
by lookup, as any quote: for an extracted triplet the sentence it came from (the
unit the model named, `REF #N`), for an imported one the words the graph file
gives, found in its document (`cited_facts`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from quoteproof.llm.quotable import Unit
from quoteproof.model import Chunk, Fact, FactOrigin, Message, Quote, Rejected, Triplet
from quoteproof.quoting.prompt import escape_source_text
from quoteproof.quoting.resolve import SourceLookup, resolve_pointer, resolve_quote
from quoteproof.quoting.units import unit_at
from quoteproof.store.kg import entity_key

__all__ = [
    "FACTS_RULE",
    "NO_MODEL_FACTS",
    "TID_PREFIX",
    "ContextFact",
    "cited_facts",
    "combined_facts",
    "fact_passages",
    "facts_block",
    "imported_fact",
    "parse_triplet_lines",
    "triplet_key",
    "with_facts",
]

TID_PREFIX = "TID-"
NO_MODEL_FACTS = 3
"""Triplets an answer made without a model shows: the best ranked."""

FACTS_RULE = """\
Facts are given inside <facts> ... </facts>, one per line: TID-N: subject | relation | \
object. They are knowledge-graph triplets, not quotes: never quote a fact. A sentence \
or statement that relies on a fact ends with its id, like [TID-N], as it would with \
a source ref."""

_TRIPLET_LINE = re.compile(
    r"\A\s*(?:[-*•]\s*)?(?P<ref>[A-Za-z0-9][A-Za-z0-9._:@~-]*)\s*#\s*(?P<unit>\d{1,6})\s*[:.)-]?\s*"
    r"(?P<subject>[^|\n]+?)\s*\|\s*(?P<relation>[^|\n]+?)\s*\|\s*(?P<object>[^|\n]+?)\s*\Z"
)


@dataclass(frozen=True)
class ContextFact:
    """A triplet in the model's context as line `id` (`TID-n`): `imported` (its
    stored `triplet`, and `support`, the chunks of its document in which the words
    its file gives are looked up) or `generated` (extracted from unit `unit` of
    passage `ref`, the chunk `source`)."""

    id: str
    subject: str
    relation: str
    object: str
    origin: FactOrigin
    triplet: Triplet | None = None
    support: tuple[Chunk, ...] = ()
    source: Chunk | None = None
    unit: int | None = None

    @property
    def line(self) -> str:
        """The context line: `TID-n: subject | relation | object` (protocol-like tags
        in its text made inert)."""
        text = f"{self.id}: {self.subject} | {self.relation} | {self.object}"
        return escape_source_text(" ".join(text.split()))


def triplet_key(subject: str, relation: str, object: str) -> tuple[str, str, str]:
    """What makes two triplets the same: their three parts' entity keys
    (`store.kg.entity_key`: case, marks and punctuation do not count)."""
    return entity_key(subject), entity_key(relation), entity_key(object)


def _key(fact: ContextFact) -> tuple[str, str, str]:
    return triplet_key(fact.subject, fact.relation, fact.object)


def combined_facts(
    imported: Sequence[ContextFact], extracted: Sequence[ContextFact]
) -> list[ContextFact]:
    """The context's facts when a graph and the model both give triplets: the
    `imported` ones as they are (`TID-1`, ...), then each `extracted` one that is
    not the same triplet (`triplet_key`) as one before it, numbered on from them.
    Of two equal triplets the imported one is kept. O(len(imported) + len(extracted))."""
    kept = list(imported)
    seen = {_key(fact) for fact in kept}
    for fact in extracted:
        key = _key(fact)
        if key not in seen:
            seen.add(key)
            kept.append(replace(fact, id=f"{TID_PREFIX}{len(kept) + 1}"))
    return kept


def imported_fact(number: int, triplet: Triplet, support: Sequence[Chunk]) -> ContextFact:
    """The context line `TID-number` of a stored `triplet`, its quote looked up in
    `support`."""
    return ContextFact(
        f"{TID_PREFIX}{number}",
        triplet.subject,
        triplet.relation,
        triplet.object,
        "imported",
        triplet=triplet,
        support=tuple(support),
    )


def facts_block(facts: Sequence[ContextFact]) -> str:
    """The `<facts>` block of the prompt, one context line per fact."""
    return "<facts>\n" + "\n".join(fact.line for fact in facts) + "\n</facts>"


def with_facts(messages: tuple[Message, ...], facts: Sequence[ContextFact]) -> tuple[Message, ...]:
    """`messages` with the facts in them: `FACTS_RULE` after the system prompt, and
    the `<facts>` block in the last user message, before its question (else at its
    end). Without facts, `messages` as they are."""
    if not facts:
        return messages
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    changed = []
    for i, message in enumerate(messages):
        if message.role == "system" and FACTS_RULE not in message.content:
            message = replace(message, content=f"{message.content.rstrip()}\n\n{FACTS_RULE}\n")
        elif i == last_user:
            content = message.content
            at = content.rfind("\n\nQuestion: ")
            at = len(content) if at < 0 else at
            content = f"{content[:at]}\n\n{facts_block(facts)}{content[at:]}"
            message = replace(message, content=content.lstrip("\n"))
        changed.append(message)
    return tuple(changed)


def fact_passages(facts: Sequence[ContextFact]) -> dict[str, str]:
    """What a sentence citing each fact may rest on: its subject, relation (its `_`
    as spaces) and object, by id."""
    return {
        fact.id: f"{fact.subject} {fact.relation.replace('_', ' ')} {fact.object}" for fact in facts
    }


def _provenance(
    fact: ContextFact, quote_id: str, lookup: SourceLookup
) -> tuple[Quote | None, str | None]:
    """The quote that supports `fact`, read by lookup, or None and why not."""
    if fact.origin == "generated":
        assert fact.source is not None and fact.unit is not None
        found = resolve_pointer(fact.source.ref, fact.unit, quote_id, [fact.source], lookup)
        if isinstance(found, Rejected):
            return None, f"its source sentence was not found: {found.reason}"
        return found, None
    triplet = fact.triplet
    assert triplet is not None
    if triplet.quote is None:
        return None, None
    if not fact.support:
        return None, "the document its graph file names is not in the index"
    raw = triplet.quote
    found = resolve_quote(None, triplet.quote, quote_id, fact.support, lookup, raw=raw)
    if isinstance(found, Rejected):
        return None, "the words its graph file quotes were not found in the document"
    return found, None


def cited_facts(
    facts: Sequence[ContextFact], refs: Sequence[str], lookup: SourceLookup
) -> tuple[tuple[Fact, ...], tuple[Quote, ...]]:
    """The facts among `facts` whose ids are in `refs` (in context order), as the
    answer shows them, and the quotes of their provenance (ids `f1`, `f2`, ...),
    each read from the stored document (`_provenance`)."""
    wanted = set(refs)
    shown: list[Fact] = []
    quotes: list[Quote] = []
    for fact in facts:
        if fact.id not in wanted:
            continue
        quote, note = _provenance(fact, f"f{len(quotes) + 1}", lookup)
        if quote is not None:
            quotes.append(quote)
        triplet = fact.triplet
        shown.append(
            Fact(
                id=fact.id,
                subject=fact.subject,
                relation=fact.relation,
                object=fact.object,
                origin=fact.origin,
                triplet_id=triplet.triplet_id if triplet else None,
                graph_file=triplet.graph_file if triplet else None,
                row=triplet.row if triplet else None,
                ref=fact.source.ref if fact.source else None,
                quote_id=quote.id if quote else None,
                provenance_note=note,
            )
        )
    return tuple(shown), tuple(quotes)


def parse_triplet_lines(
    text: str, sources: Sequence[Chunk], units: Mapping[str, Sequence[Unit]], first: int
) -> tuple[list[ContextFact], list[Rejected]]:
    """The triplets of an extraction reply, numbered `TID-first`, `TID-first+1`, ...:
    lines `REF #N: subject | relation | object` whose unit N of source REF exists;
    each other line that looks like one is rejected with the reason. A repeated
    triplet (`triplet_key`) is kept once. Never raises; O(len(text))."""
    by_ref = {chunk.ref: chunk for chunk in sources}
    facts: list[ContextFact] = []
    rejected: list[Rejected] = []
    seen: set[tuple[str, str, str]] = set()
    for line in text.splitlines():
        m = _TRIPLET_LINE.match(line)
        if m is None:
            if "|" in line:
                rejected.append(Rejected(line, "not a triplet line 'REF #N: s | r | o'"))
            continue
        ref, unit = m["ref"], int(m["unit"])
        chunk = by_ref.get(ref)
        if chunk is None:
            rejected.append(Rejected(line, f"'{ref}' is not a retrieved source"))
            continue
        if unit_at(units.get(ref, ()), unit) is None:
            rejected.append(Rejected(line, f"source '{ref}' has no part {unit}"))
            continue
        key = triplet_key(m["subject"], m["relation"], m["object"])
        if key in seen:
            continue
        seen.add(key)
        facts.append(
            ContextFact(
                f"{TID_PREFIX}{first + len(facts)}",
                m["subject"],
                m["relation"],
                m["object"],
                "generated",
                source=chunk,
                unit=unit,
            )
        )
    return facts, rejected
