"""A tolerant parser of the model's output protocol (docs/how-it-works.md).

The model answers with prose, `<quote ref="REF" unit="N"/>` (unit N of a chunk, as
numbered in the prompt: a pointer), `<quote ref="REF"/>` (a whole chunk),
`<quote ref="REF">approximate words</quote>` (part of a chunk), `[REF]` citations
after prose, and `<no-answer/>`. `parse_output` turns any string into a sequence of
`ProseItem`, `QuoteItem` and `MalformedItem` values, in the order they appear. It
never raises and never decides what is verbatim: a `QuoteItem` only names a ref and
the model's claimed words, which the resolver looks up in the index.

Tolerated: tag names in any case; the ref unquoted, in single quotes or in other
quote characters (“REF”), with spaces around `=`; the `<quote><title>REF</title>
words</quote>` form; the unit as `unit="3"`, `unit='3'`, `unit=3`, `unit=#3`, `#3`
(also inside the ref: `ref="REF#3"`), or named `u`, `n`, `num`, `number`, `sentence`,
`item`, `row` or `part`; stray whitespace; an unclosed `<quote ref=..>words` (it runs to
the next `<quote` or the end), except a pointer, which needs no body (what follows
an unclosed `<quote ref=.. unit=..>` is prose); nested quote tags (flattened into the outer quote's
words); `<no-answer/>`, `<no-answer>`, `<no_answer/>`. A quote with no ref gets
`ref=None` (the resolver searches every source). A `<quote` that never reaches its
`>`, or whose unit is not a number of at most `UNIT_DIGITS` digits, becomes a
`MalformedItem`.

Prose keeps any other tags, HTML or Markdown literally (renderers escape it); only
citation markers `[REF]`, `[REF1, REF2]`, `[REF1; REF2]`, `[REF1][REF2]` are taken
out of the text into `citations`. A REF is a token `[A-Za-z0-9][A-Za-z0-9._:@~-]*`
with at least one digit, so "[sic]" stays in the text.

Paragraph ids: `PID-n` (any case) names the n-th source given to the model, as
the rationale framework's context lines number paragraphs. `with_source_refs`
rewrites the `PID-n` of a reply's citation markers and quote tags into the refs
they stand for before the reply is parsed, so every later step sees refs only; a
`PID-n` beyond the sources stays as written and is rejected like any unknown ref.

Complexity: O(n) regular-expression scanning plus O(t log t) over the t tags.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "PID_PREFIX",
    "Item",
    "MalformedItem",
    "ParsedOutput",
    "ProseItem",
    "QuoteItem",
    "paragraph_ids",
    "parse_output",
    "split_citations",
    "with_source_refs",
]

UNIT_DIGITS = 6
"""Most digits of a unit number: longer ones are malformed, never converted."""


@dataclass(frozen=True)
class ProseItem:
    """Model-written prose, trimmed, with the citation markers taken out of it.

    `raw` is the prose as written, markers included (not part of equality), so a
    validator can tell which sentence each marker ends.
    """

    text: str
    citations: tuple[str, ...]
    raw: str = field(default="", compare=False)


@dataclass(frozen=True)
class QuoteItem:
    """A request to quote: `ref` (None: search every source) and the model's words.

    `claimed` is None for a whole-chunk quote or a bare pointer. `raw` is the quote's
    text exactly as it appears in the model's output. `unit` is the 1-based number of
    the quotable unit pointed at (None: no pointer); the parser does not know whether
    that unit exists.
    """

    ref: str | None
    claimed: str | None
    raw: str
    unit: int | None = None


@dataclass(frozen=True)
class MalformedItem:
    """Something quote-like that could not be read; `raw` as written, `reason` why."""

    raw: str
    reason: str


Item = ProseItem | QuoteItem | MalformedItem


@dataclass(frozen=True)
class ParsedOutput:
    """The items of one model output in order, and whether it declared no answer."""

    items: tuple[Item, ...]
    no_answer: bool


# Tags the protocol knows. `attrs` runs to the first ">", so a tag never spans a "<".
_TAG = re.compile(
    r"<\s*(?P<close>/)?\s*(?P<name>quote|no[-_ ]?answer)\b(?P<attrs>[^<>]*)>"
    r"|(?P<broken><\s*quote\b[^<>]*)(?=<|\Z)",
    re.IGNORECASE,
)
_REF_ATTR = re.compile(
    r"""\b(?:ref|source|src)\s*=\s*(?:
        "(?P<dq>[^"]*)"
      | '(?P<sq>[^']*)'
      | [“”„‟](?P<cq>[^“”„‟]*)[“”„‟]
      | [‘’‚‛](?P<cs>[^‘’‚‛]*)[‘’‚‛]
      | «(?P<gq>[^»]*)»
      | (?P<bare>[^\s"'“”„‟‘’‚‛«»/]+)
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# A unit attribute (`unit="3"`, `n=3`, `unit=#3`) or a `#3` (not an `&#39;` entity);
# `value` is what is written, checked against `_UNIT_NUMBER` by the caller.
_UNIT_ATTR = re.compile(
    r"""(?:\b(?:unit|u|n|num|number|sentence|item|row|part)\s*=\s*["'“”„‟‘’‚‛«]?\s*\#?
       |(?<!&)\#)
    \s*(?P<value>[^\s"'“”„‟‘’‚‛«»/]*)""",
    re.IGNORECASE | re.VERBOSE,
)
_UNIT_NUMBER = re.compile(rf"[0-9]{{1,{UNIT_DIGITS}}}")
_REF_TOKEN = r"[A-Za-z0-9][A-Za-z0-9._:@~-]*"
_IS_REF = re.compile(rf"(?=[^\d]*\d){_REF_TOKEN}")
_QUOTE_CHARS = "\"'“”„‟‘’‚‛«» "
_TITLE = re.compile(r"\A\s*<\s*title\s*>(?P<ref>.*?)<\s*/\s*title\s*>", re.IGNORECASE | re.DOTALL)
_CITATION = re.compile(r"\[(?P<body>[^\[\]\n]{1,200})\](?!\()")
_QUOTE_OPENING = re.compile(
    r"<\s*quote\b[^<>]*>?(?:\s*<\s*title\s*>[^<>]*<\s*/\s*title\s*>)?", re.IGNORECASE
)
_CITATION_SEP = re.compile(r"\s*[,;]\s*|\s+")
PID_PREFIX = "PID-"
_PID = re.compile(rf"(?<![\w.:@~-]){PID_PREFIX}(?P<n>[0-9]{{1,{UNIT_DIGITS}}})(?![\w.:@~-])", re.I)


def _clean_ref(value: str | None) -> str | None:
    """Strip whitespace, stray quote characters and [brackets]; empty -> None."""
    if value is None:
        return None
    value = value.strip().strip(_QUOTE_CHARS)
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1].strip()
    return value or None


def _unit_value(attrs: str) -> str | None:
    """The unit written in a quote tag's attributes (the first one), or None."""
    m = _UNIT_ATTR.search(attrs)
    return None if m is None else m.group("value")


def _ref_from_attrs(attrs: str) -> str | None:
    """The ref named in a quote tag's attributes (a unit written inside it left
    out), or None."""
    attrs = _UNIT_ATTR.sub(" ", attrs)
    m = _REF_ATTR.search(attrs)
    if m is not None:
        value = next((v for v in m.groupdict().values() if v is not None), None)
        return _clean_ref(value)
    # `<quote S1>` or `<quote "S1">`: a lone ref-like token.
    bare = attrs.strip().rstrip("/").strip().strip(_QUOTE_CHARS)
    if re.fullmatch(_REF_TOKEN, bare) and _IS_REF.fullmatch(bare):
        return bare
    return None


def _split_citation(body: str) -> list[str] | None:
    """The refs in a bracket's body, or None when it does not look like refs only."""
    parts = [p for p in _CITATION_SEP.split(body.strip()) if p]
    if parts and all(_IS_REF.fullmatch(p) for p in parts):
        return parts
    return None


def split_citations(text: str) -> ProseItem | None:
    """Take citation markers (and the blanks before them) out of `text`.

    Returns None when neither text nor citations are left; the item's `raw` is `text`.
    """
    citations: list[str] = []
    pieces: list[str] = []
    last = 0
    for m in _CITATION.finditer(text):
        refs = _split_citation(m.group("body"))
        if refs is None:
            continue
        citations.extend(refs)
        pieces.append(text[last : m.start()].rstrip(" \t"))
        last = m.end()
    pieces.append(text[last:])
    stripped = "".join(pieces).strip()
    if not stripped and not citations:
        return None
    return ProseItem(stripped, tuple(citations), text)


def _is_open(m: re.Match[str]) -> bool:
    return (
        m.group("name") is not None and m.group("name").lower() == "quote" and not m.group("close")
    )


def _self_closing(m: re.Match[str]) -> bool:
    return m.group("attrs").rstrip().endswith("/")


def _is_quote_start(m: re.Match[str]) -> bool:
    """Any opening of a quote: a proper open tag (self-closing or not) or a broken one."""
    return m.group("broken") is not None or _is_open(m)


def _is_no_answer(m: re.Match[str]) -> bool:
    return m.group("name") is not None and m.group("name").lower() != "quote"


def _is_close(m: re.Match[str]) -> bool:
    return bool(m.group("close")) and m.group("name").lower() == "quote"


def _claimed(body: str) -> tuple[str | None, str | None]:
    """Split a quote body into (title ref, claimed words); tags stripped from the words."""
    title_ref = None
    title = _TITLE.match(body)
    if title is not None:
        title_ref = _clean_ref(title.group("ref"))
        body = body[title.end() :]
    words = _TAG.sub("", body).strip()
    return title_ref, words or None


def _quote_item(open_tag: re.Match[str], body: str, raw: str) -> QuoteItem | MalformedItem:
    attrs = open_tag.group("attrs")
    ref = _ref_from_attrs(attrs)
    title_ref, claimed = _claimed(body)
    ref = ref or title_ref
    if ref is None and claimed is None:
        return MalformedItem(raw, "quote with neither a ref nor any words")
    unit = _unit_value(attrs)
    if unit is None:
        return QuoteItem(ref, claimed, raw)
    if not _UNIT_NUMBER.fullmatch(unit):
        return MalformedItem(raw, f"unit '{unit[:20]}' is not a unit number")
    return QuoteItem(ref, claimed, raw, int(unit))


def _is_pointer(tag: re.Match[str]) -> bool:
    """True for a quote tag that names a unit (it needs no body)."""
    return _unit_value(tag.group("attrs")) is not None


def _match_closes(tags: list[re.Match[str]]) -> dict[int, int]:
    """Map the index of each non-self-closing open quote tag to its closing tag's.

    Ordinary bracket matching: a close tag closes the latest open tag not yet closed
    (so quotes nest); unmatched closes are stray; unmatched opens are unclosed. O(t).
    """
    stack: list[int] = []
    closes: dict[int, int] = {}
    for k, tag in enumerate(tags):
        if _is_close(tag):
            if stack:
                closes[stack.pop()] = k
        elif _is_open(tag) and not _self_closing(tag):
            stack.append(k)
    return closes


def parse_output(raw: str) -> ParsedOutput:
    """Parse the model's raw output into items; never raises.

    Contract: items appear in the order of `raw`; each `QuoteItem.raw` and
    `MalformedItem.raw` is a substring of `raw`; `claimed` never contains a quote
    or no-answer tag; prose items are trimmed and never empty (text or citations).
    `no_answer` is True when any no-answer tag appears.

    Complexity: O(len(raw) + t log t) for t tags.
    """
    tags = list(_TAG.finditer(raw))
    closes = _match_closes(tags)
    starts = [k for k, t in enumerate(tags) if _is_quote_start(t)]
    items: list[Item] = []
    prose: list[str] = []
    no_answer = any(_is_no_answer(t) for t in tags)
    pos = 0

    def flush() -> None:
        item = split_citations("".join(prose))
        prose.clear()
        if item is not None:
            items.append(item)

    i = 0
    while i < len(tags):
        tag = tags[i]
        if _is_no_answer(tag):  # open, close or self-closing: dropped from the text
            prose.append(raw[pos : tag.start()])
            pos, i = tag.end(), i + 1
            continue
        if _is_close(tag):  # a stray closing tag: dropped
            prose.append(raw[pos : tag.start()])
            pos, i = tag.end(), i + 1
            continue
        prose.append(raw[pos : tag.start()])
        flush()
        if tag.group("broken") is not None:
            end, nxt = tag.end(), i + 1
            if nxt < len(tags) and _is_close(tags[nxt]):
                end, nxt = tags[nxt].end(), nxt + 1
            items.append(MalformedItem(raw[tag.start() : end], "quote tag without a closing '>'"))
            pos, i = end, nxt
            continue
        j = closes.get(i)
        if _self_closing(tag) or (j is None and _is_pointer(tag)):
            items.append(_quote_item(tag, "", tag.group()))
            pos, i = tag.end(), i + 1
            continue
        if j is not None:  # closed (possibly with nested quotes inside)
            body = raw[tag.end() : tags[j].start()]
            end, nxt = tags[j].end(), j + 1
        else:  # unclosed: runs to the next quote opening or the end
            k = bisect.bisect_right(starts, i)
            nxt = starts[k] if k < len(starts) else len(tags)
            end = tags[nxt].start() if nxt < len(tags) else len(raw)
            body = raw[tag.end() : end]
        items.append(_quote_item(tag, body, raw[tag.start() : end]))
        pos, i = end, nxt
    prose.append(raw[pos:])
    flush()
    return ParsedOutput(tuple(items), no_answer)


def paragraph_ids(refs: Sequence[str]) -> dict[int, str]:
    """The paragraph id numbers of sources given in the order of `refs`: n -> the
    ref of the n-th (1-based)."""
    return dict(enumerate(refs, start=1))


def with_source_refs(raw: str, ids: Mapping[int, str]) -> str:
    """`raw` with each `PID-n` (any case) of its citation markers (brackets that
    hold refs only) and quote tags replaced by `ids[n]`, the ref it stands for;
    the rest unchanged, an unknown `PID-n` too. O(len(raw))."""
    if not ids or "-" not in raw:
        return raw

    def named(m: re.Match[str]) -> str:
        return ids.get(int(m["n"]), m.group())

    def inside(m: re.Match[str]) -> str:
        return _PID.sub(named, m.group())

    def marker(m: re.Match[str]) -> str:
        return m.group() if _split_citation(m["body"]) is None else inside(m)

    return _CITATION.sub(marker, _QUOTE_OPENING.sub(inside, raw))
