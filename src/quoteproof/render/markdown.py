"""Answer -> Markdown (CommonMark, also safe under GitHub-flavoured extensions).

Contract (the guarantee of DESIGN.md section 1, for Markdown):

- The output holds exactly one block quote per `QuoteSegment` whose quote the
  answer holds, plus, with `show_cited`, one per passage a shown prose segment
  cites (`answer.cited_passages(segment.citations)`: real `Quote`s from
  `answer.cited`, right after that prose), and no other block quote. Each one is
  the quote's `text`, preceded by a header line
  `**Verbatim from source** — label (file, chars start–end)`.
- Every other piece of text (prose, question, labels, reasons, rejected output,
  rationale statements with their justifications and earlier versions, the reason
  for an escalation, a data result's table, columns, filter values and cells) is
  escaped by `escape_markdown`/`escape_inline`: whatever it contains, it renders as
  literal characters in plain paragraphs (or, for a data result's preview rows,
  in the cells of a table whose structure is ours). It can never become a block
  quote, heading, list, table, code block, HTML, link, image or emphasis. Prose is
  labelled `*Generated — not a quote:*`; statements are listed under
  `**Rationale statements (generated, checked by the model)**`, each with its
  label (the verifier's verdict, or UNVERIFIED).
- A `DataSegment` shows its data result, labelled `**Computed from table**`:
  every parameter of the query (filters, period, columns, aggregate and value),
  the row count and the preview rows as a GFM table (one per data segment with
  preview rows; every cell escaped, `|` included).
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
from quoteproof.model import (
    REFUSAL_TEXT,
    Answer,
    DataResult,
    DataSegment,
    ProseSegment,
    Quote,
    Statement,
)
from quoteproof.render.dataresult import (
    cell_text,
    describe_aggregate,
    describe_filters,
    describe_rows,
    describe_source,
    preview_header,
)
from quoteproof.render.provenance import NO_MODEL_NOTICE, model_parts

__all__ = [
    "DATA_LABEL",
    "GENERATED_LABEL",
    "STATEMENTS_LABEL",
    "VERBATIM_LABEL",
    "code_span",
    "escape_inline",
    "escape_markdown",
    "render_markdown",
]

VERBATIM_LABEL = "**Verbatim from source**"
GENERATED_LABEL = "*Generated — not a quote:*"
DATA_LABEL = "**Computed from table**"
STATEMENTS_LABEL = "**Rationale statements (generated, checked by the model)**"
PARTIAL_LINE = (
    "**Partial answer:** sentences without a valid citation were removed, "
    "or the work stopped before it was complete."
)
ESCALATION_LABEL = "**Escalated to a person.** The model's reason (generated, not a quote):"

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


def _table_row(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(escape_inline(cell) for cell in cells) + " |"


def _data_block(result: DataResult) -> list[str]:
    """The data result's origin and parameters, then its preview rows as a table."""
    source = describe_source(result).removeprefix("computed from table ")
    lines = [f"{DATA_LABEL} {escape_inline(source)} — not a quote"]
    lines.append(f"Query: {escape_inline(describe_filters(result.filters))}")
    if result.period is not None:
        lines.append(f"Period: {escape_inline(result.period)}")
    if result.columns:
        lines.append(f"Columns: {escape_inline(', '.join(result.columns))}")
    if result.source is not None:
        lines.append(f"From query: {escape_inline(result.source)}")
    aggregate = describe_aggregate(result)
    if aggregate is not None:
        lines.append(f"**Value:** {escape_inline(aggregate)}")
    lines += [escape_inline(describe_rows(result)), ""]
    header = preview_header(result)
    if result.rows and header:
        lines.append(_table_row(header))
        lines.append("| " + " | ".join("---" for _ in header) + " |")
        lines += [_table_row(tuple(cell_text(cell) for cell in row)) for row in result.rows]
        lines.append("")
    return lines


def _statement_block(statement: Statement) -> list[str]:
    """`Statement id · **LABEL**`, its text with refs, justification, earlier version."""
    label = "UNVERIFIED" if statement.label is None else escape_inline(statement.label)
    refined = " · refined after the check" if statement.original is not None else ""
    lines = [f"Statement {escape_inline(statement.id)} · **{label}**{refined}"]
    text = _escape_lines(statement.text)
    if statement.refs:
        cites = " ".join(code_span(f"[{ref}]") for ref in statement.refs)
        text = [*text[:-1], f"{text[-1]} {cites}"] if text else [cites]
    lines += text
    if statement.justification is not None:
        lines.append(f"Justification: {escape_inline(statement.justification)}")
    if statement.original is not None:
        lines.append(f"Refined from: {escape_inline(statement.original)}")
    return [*lines, ""]


def _footer(answer: Answer) -> list[str]:
    parts = [] if answer.mode == "quote" else [f"Mode: {answer.mode}"]
    if answer.usage is not None:
        usage = answer.usage
        parts.append(f"tokens: {usage.prompt_tokens} prompt · {usage.completion_tokens} completion")
    parts += model_parts(answer.llm)
    return [escape_inline(" · ".join(parts)), ""] if parts else []


def render_markdown(answer: Answer, show_cited: bool = False) -> str:
    """Return `answer` as a Markdown document (see the module docstring for the contract).

    Layout: the question; for a refused answer a `**Refused:**` line (the fixed
    `REFUSAL_TEXT` sentence, never text from the answer) instead of the segments;
    the partial-answer notice; `NO_MODEL_NOTICE` for an answer made without a
    language model; the notices; the escalation and its (escaped) reason; the
    segments in order (prose labelled as generated, with its citations as code
    spans and, with `show_cited`, the passages it cites as block quotes after it;
    quotes as block quotes; data results under `**Computed from table**`); the
    rationale statements; rejected output under "Removed (not verifiable)"; a
    footer line with the mode (unless "quote"), token usage (when known) and the
    model and server that answered (`model_parts`). A
    segment whose quote or data result is missing is reported, never drawn.
    """
    out = [f"**Question:** {escape_inline(answer.question)}", ""]
    if answer.status == "refused":
        reason = answer.refusal_reason or "no reason given"
        out += [f"**Refused:** {REFUSAL_TEXT} ({escape_inline(reason)})", ""]
    if answer.partial:
        out += [PARTIAL_LINE, ""]
    if not answer.llm.language_model:
        out += [f"**Note:** {NO_MODEL_NOTICE}", ""]
    for notice in answer.notices:
        out += [f"**Note:** {escape_inline(notice)}", ""]
    if answer.escalation is not None:
        out += [ESCALATION_LABEL, *(_escape_lines(answer.escalation) or ["(no reason given)"]), ""]
    for segment in answer.segments if answer.status == "answered" else ():
        if isinstance(segment, ProseSegment):
            out.extend(_prose_block(segment))
            if show_cited:
                for quote in answer.cited_passages(segment.citations):
                    out.extend(_quote_block(quote))
        elif isinstance(segment, DataSegment):
            try:
                result = answer.data_result(segment.data_id)
            except KeyError:
                out += [f"**Missing data result** {code_span(segment.data_id)} — not shown.", ""]
                continue
            out.extend(_data_block(result))
        else:
            try:
                quote = answer.quote(segment.quote_id)
            except KeyError:
                out += [f"**Missing quote** {code_span(segment.quote_id)} — not shown.", ""]
                continue
            out.extend(_quote_block(quote))
    if answer.statements:
        out += [STATEMENTS_LABEL, ""]
        for statement in answer.statements:
            out.extend(_statement_block(statement))
    if answer.rejected:
        out += ["**Removed (not verifiable)**", ""]
        out += [
            f"- {escape_inline(item.raw)} — {escape_inline(item.reason)}"
            for item in answer.rejected
        ]
        out.append("")
    out.extend(_footer(answer))
    return "\n".join(out).rstrip("\n") + "\n"
