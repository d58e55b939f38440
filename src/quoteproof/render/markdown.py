"""Answer -> Markdown (CommonMark, also safe under GitHub-flavoured extensions).

Contract (the guarantee of DESIGN.md section 1, for Markdown):

- The output holds exactly one block quote per `QuoteSegment` whose quote the
  answer holds, and no other block quote. Each one is the quote's `text`, preceded
  by a header line `**Verbatim from source** — label (file, chars start–end)`.
- Every other piece of text (prose, question, labels, reasons, rejected output) is
  escaped by `escape_markdown`/`escape_inline`: whatever it contains, it renders as
  literal characters in plain paragraphs. It can never become a block quote,
  heading, list, table, code block, HTML, link, image or emphasis. Prose is labelled
  `*Generated — not a quote:*`.
- Quote text inside the block quote is escaped the same way, so a source that
  contains Markdown or HTML shows those characters literally.

Line endings are `\\n`, `\\r\\n` and `\\r` (CommonMark's). Within escaped text, spaces
and tabs at the start and end of a line are dropped (a rendered paragraph drops
them anyway, and leading ones could start a code block), and control characters are
written as numeric character references so that the raw file is safe to `cat`.
Everything here is O(length of the answer).
"""

from __future__ import annotations

import re

from quoteproof.ingest.labels import page_part
from quoteproof.model import REFUSAL_TEXT, Answer, ProseSegment, Quote

__all__ = [
    "GENERATED_LABEL",
    "VERBATIM_LABEL",
    "code_span",
    "escape_inline",
    "escape_markdown",
    "render_markdown",
]

VERBATIM_LABEL = "**Verbatim from source**"
GENERATED_LABEL = "*Generated — not a quote:*"

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WHITESPACE = re.compile(r"\s+")
# Characters with a meaning somewhere in CommonMark or a common extension (GFM tables
# and strikethrough, footnotes, math, attributes, superscript). Backslash-escaping an
# ASCII punctuation character always yields the literal character (CommonMark 2.4).
_BACKSLASHED = frozenset("\\`*_{}[]>#+-!|~=^$")
_ENTITIES = {"&": "&amp;", "<": "&lt;"}
# "1." / "1)" at the start of a line begin an ordered list; ":" a definition.
_LIST_NUMBER = re.compile(r"(\d+)([.)])")


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return (code < 0x20 and ch not in "\t\n\r") or 0x7F <= code <= 0x9F


def _escape_char(ch: str) -> str:
    if ch in _BACKSLASHED:
        return "\\" + ch
    if ch in _ENTITIES:
        return _ENTITIES[ch]
    if _is_control(ch):
        return f"&#x{ord(ch):X};"
    return ch


def _escape_line(line: str) -> str:
    """Escape one line (no line endings in it) so it renders as literal text.

    The result never starts a block construct: it starts with a letter, a digit not
    followed by `.`/`)`, a non-ASCII character, `\\` (an escape) or `&` (a reference).
    """
    line = line.strip(" \t")
    escaped = "".join(_escape_char(ch) for ch in line)
    number = _LIST_NUMBER.match(escaped)
    if number:
        escaped = f"{number.group(1)}\\{number.group(2)}{escaped[number.end() :]}"
    elif escaped.startswith(":"):
        escaped = "\\" + escaped
    return escaped


def escape_markdown(text: str) -> str:
    """Return `text` escaped: rendered, it is plain paragraphs of exactly its characters.

    Line structure is kept (a line of `text` is a line of the result); lines that
    are empty or only spaces/tabs become empty lines (paragraph breaks), and leading
    and trailing ones are dropped. See the module docstring for the details.
    """
    return "\n".join(_escape_lines(text))


def _escape_lines(text: str) -> list[str]:
    lines = [_escape_line(line) for line in _LINE_BREAK.split(text)]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def escape_inline(text: str) -> str:
    """Return `text` on one line, runs of whitespace collapsed to a space, escaped."""
    return _escape_line(_WHITESPACE.sub(" ", text))


def code_span(text: str) -> str:
    """Return `text` as a CommonMark code span (literal; line endings become spaces)."""
    content = "".join("\ufffd" if _is_control(ch) else ch for ch in _LINE_BREAK.sub(" ", text))
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * (longest + 1)
    if content.startswith("`") or content.endswith("`") or content.startswith(" "):
        content = f" {content} "
    return f"{fence}{content}{fence}"


def _file_name(source_path: str) -> str:
    name = re.split(r"[\\/]", source_path)[-1]
    return name or source_path


def _quote_header(quote: Quote) -> str:
    where = [escape_inline(_file_name(quote.source_path))]
    page = page_part(quote.pages)
    if page is not None:
        where.append(page)
    where.append(f"chars {quote.start}–{quote.end}")
    header = f"{VERBATIM_LABEL} — {escape_inline(quote.label)} ({', '.join(where)})"
    if quote.ocr:
        header += " · OCR text: check against the page"
    if quote.differs:
        header += f" · **differs:** {escape_inline(quote.differs)}"
    return header


def _quote_block(quote: Quote) -> list[str]:
    """Header line, then every line of the quote as `> line` (`>` for blank lines)."""
    body = [_escape_line(line) for line in _LINE_BREAK.split(quote.text)]
    return [_quote_header(quote), *(f"> {line}" if line else ">" for line in body), ""]


def _prose_block(segment: ProseSegment) -> list[str]:
    lines = _escape_lines(segment.text)
    if segment.citations:
        cites = " ".join(code_span(f"[{ref}]") for ref in segment.citations)
        if lines:
            lines[-1] = f"{lines[-1]} {cites}"
        else:
            lines = [cites]
    if not lines:
        return []
    return [GENERATED_LABEL, *lines, ""]


def render_markdown(answer: Answer) -> str:
    """Return `answer` as a Markdown document (see the module docstring for the contract).

    Layout: the question; the segments in order (prose labelled as generated, with
    its citations as code spans; quotes as block quotes); for a refused answer a
    `**Refused:**` line instead of the segments (the fixed `REFUSAL_TEXT` sentence,
    never text from the answer); then rejected output under "Removed (not
    verifiable)". A quote segment whose quote is missing is reported, never drawn.
    """
    out = [f"**Question:** {escape_inline(answer.question)}", ""]
    if answer.status == "refused":
        reason = answer.refusal_reason or "no reason given"
        out += [f"**Refused:** {REFUSAL_TEXT} ({escape_inline(reason)})", ""]
    for segment in answer.segments if answer.status == "answered" else ():
        if isinstance(segment, ProseSegment):
            out.extend(_prose_block(segment))
            continue
        try:
            quote = answer.quote(segment.quote_id)
        except KeyError:
            out += [f"**Missing quote** {code_span(segment.quote_id)} — not shown.", ""]
            continue
        out.extend(_quote_block(quote))
    if answer.rejected:
        out += ["**Removed (not verifiable)**", ""]
        out += [
            f"- {escape_inline(item.raw)} — {escape_inline(item.reason)}"
            for item in answer.rejected
        ]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
