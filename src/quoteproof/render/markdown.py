"""Answer -> Markdown (CommonMark, also safe under GitHub-flavoured extensions).

Contract (the guarantee that no model-written words are shown as a quote, for Markdown):

- The output holds exactly one block quote per `QuoteSegment` whose quote the
  answer holds, plus, with `show_cited`, one per passage a shown prose segment
  cites (`answer.cited_passages(segment.citations)`: real `Quote`s from
  `answer.cited`, right after that prose), and no other block quote. Each one is
  the quote's `text`, preceded by a header line
  `**Verbatim from source** — label (file, chars start–end)`, the label in full
  (`document › section path › p. N`, the quote's own pages).
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
- Quote text inside the block quote is a fenced code block (`_verbatim_block`): a
  source that contains Markdown or HTML shows those characters literally, and the
  Markdown holds the source's own characters (no backslashes), so what a reader
  copies, from the file or from the rendered page, is the source text.
- A quote that crosses table cells (`Quote.tables`) has its tables drawn as GFM
  tables inside its block quote (header rows as the column names, see
  `render.table_quote`), each cell its source text on one line as a code span (so
  no Markdown, link, image or raw HTML in a cell is ever rendered), `|` as `\\|`.

Line endings are `\\n`, `\\r\\n` and `\\r` (CommonMark's). Within escaped text, spaces
and tabs at the start and end of a line are dropped (a rendered paragraph drops
them anyway, and leading ones could start a code block), and control characters and
bidi overrides are written as numeric character references so that the raw file is
safe to `cat`.
Everything here is O(length of the answer).
"""

from __future__ import annotations

import re

from quoteproof.model import Answer
from quoteproof.render import layout, wording
from quoteproof.render.table_quote import TableView, quote_parts
from quoteproof.render.visible import BIDI_CONTROLS

__all__ = [
    "code_span",
    "escape_inline",
    "escape_markdown",
    "render_markdown",
]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WHITESPACE = re.compile(r"\s+")
# Characters with a meaning somewhere in CommonMark or a common extension (GFM tables
# and strikethrough, footnotes, math, attributes, superscript). Backslash-escaping an
# ASCII punctuation character always yields the literal character (CommonMark 2.4).
_BACKSLASHED = frozenset("\\`*_{}[]>#+-!|~=^$")
_ENTITIES = {"&": "&amp;", "<": "&lt;"}
# "1." / "1)" at the start of a line begin an ordered list; ":" a definition.
_LIST_NUMBER = re.compile(r"(\d+)([.)])")


_BIDI = re.compile(f"[{BIDI_CONTROLS}]")


def _is_control(ch: str) -> bool:
    """True for a C0 control but tab and line endings, DEL, a C1 control or a bidi
    override: written as a numeric reference, never raw."""
    code = ord(ch)
    return (code < 0x20 and ch not in "\t\n\r") or 0x7F <= code <= 0x9F or bool(_BIDI.match(ch))


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


def _literal(text: str) -> tuple[str, int]:
    """`text` with control characters and bidi overrides as U+FFFD, and the length of
    its longest run of backticks (a code fence around it must be longer)."""
    content = "".join("\ufffd" if _is_control(ch) else ch for ch in text)
    return content, max((len(run) for run in re.findall(r"`+", content)), default=0)


def code_span(text: str) -> str:
    """Return `text` as a CommonMark code span (literal; line endings become spaces)."""
    content, longest = _literal(_LINE_BREAK.sub(" ", text))
    fence = "`" * (longest + 1)
    if content.startswith("`") or content.endswith("`") or content.startswith(" "):
        content = f" {content} "
    return f"{fence}{content}{fence}"


def _with_refs(lines: list[str], refs: tuple[str, ...]) -> list[str]:
    """`lines` (escaped) with the refs as code spans appended to the last one."""
    if not refs:
        return lines
    cites = " ".join(code_span(f"[{ref}]") for ref in refs)
    return [*lines[:-1], f"{lines[-1]} {cites}"] if lines else [cites]


def _verbatim_block(text: str) -> list[str]:
    """Return the lines of a fenced code block holding `text` as it is: rendered, its
    content is exactly `text` (line endings as `\\n`) plus a final line ending, with
    no backslash or character reference added, so what a reader copies is the
    source's text. Control characters and bidi overrides become U+FFFD (as in
    `code_span`); the fence is longer than any run of backticks in `text`."""
    content, longest = _literal(text)
    fence = "`" * max(3, longest + 1)
    return [fence, *_LINE_BREAK.split(content), fence]


def _cell(text: str) -> str:
    """A table cell's source text on one line as a code span (`code_span`: literal,
    nothing in it read as Markdown or HTML, control characters and bidi overrides as
    U+FFFD), its `|` written `\\|` as a GFM cell needs; an empty cell stays empty."""
    flat = _WHITESPACE.sub(" ", text).strip()
    return code_span(flat).replace("|", "\\|") if flat else ""


def _source_table(view: TableView) -> list[str]:
    """A quoted table as GFM table lines: the header rows' cells (joined by `<br>`)
    as the column names, then the body rows."""
    names = [
        "<br>".join(_cell(row[column]) for row in view.header if row[column].strip())
        for column in range(view.width)
    ]
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * view.width]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in view.body]
    return lines


def _quote_body(block: layout.QuoteBox) -> list[str]:
    """The quote's lines: its text as fenced code blocks (`_verbatim_block`), its
    tables as GFM tables, between blank lines."""
    lines: list[str] = []
    for part in quote_parts(block.quote):
        if lines:
            lines.append("")
        if isinstance(part, str):
            lines += _verbatim_block(part)
        else:
            lines += _source_table(part)
    return lines


def _quote_block(block: layout.QuoteBox) -> list[str]:
    """Header line, then the quote's body (`_quote_body`) inside a block quote, every
    line as `> line` (`>` for blank lines)."""
    header = f"**{wording.VERBATIM_LABEL}** — {escape_inline(block.label)} "
    header += f"({escape_inline(block.where)})"
    header += "".join(f" · {escape_inline(note)}" for _, note in block.notes)
    body = _quote_body(block)
    return [header, *(f"> {line}" if line else ">" for line in body), ""]


def _table_row(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(escape_inline(cell) for cell in cells) + " |"


def _data_block(block: layout.DataBox) -> list[str]:
    """The data result's origin and parameters, then its preview rows as a table."""
    lines = [f"**{wording.DATA_LABEL}** {escape_inline(block.source)} — {wording.NOT_A_QUOTE}"]
    lines += [f"{name}: {escape_inline(value)}" for name, value in block.fields]
    lines += [escape_inline(block.row_count), ""]
    if block.header:
        lines.append(_table_row(block.header))
        lines.append("| " + " | ".join("---" for _ in block.header) + " |")
        lines += [_table_row(row) for row in block.rows]
        lines.append("")
    return lines


def _statement_block(statement: layout.StatementView) -> list[str]:
    """`id · **VERDICT**`, its text with refs, justification, earlier version."""
    refined = f" · {wording.REFINED_FLAG}" if statement.refined else ""
    verdict = escape_inline(statement.verdict)
    lines = [f"{escape_inline(statement.id)} · **{verdict}**{refined}"]
    lines += _with_refs(_escape_lines(statement.text), statement.refs)
    if statement.justification is not None:
        lines.append(f"{wording.JUSTIFICATION_LABEL}: {escape_inline(statement.justification)}")
    if statement.original is not None:
        lines.append(f"{wording.REFINED_FROM_LABEL}: {escape_inline(statement.original)}")
    return [*lines, ""]


def _fact_block(fact: layout.FactView) -> list[str]:
    """`TID-n · *origin — not a quote*`, the triplet, where it is from, its note,
    then its supporting quote as a block quote."""
    lines = [f"{escape_inline(fact.id)} · *{fact.origin} — {wording.NOT_A_QUOTE}*  "]
    lines.append(f"{escape_inline(fact.text)}  ")
    lines.append(f"From: {escape_inline(fact.provenance)}")
    if fact.note is not None:
        lines[-1] += "  "
        lines.append(f"{wording.NOTE_LABEL}: {escape_inline(fact.note)}")
    lines.append("")
    if fact.source is not None:
        lines += [f"{wording.FACT_SOURCE_LABEL}:", "", *_quote_block(fact.source)]
    return lines


def _lines(block: layout.Block) -> list[str]:
    """The Markdown of one layout block, ending with an empty line."""
    if isinstance(block, layout.Question):
        return [f"**{wording.QUESTION_LABEL}:** {escape_inline(block.text)}", ""]
    if isinstance(block, layout.Refusal):
        return [f"**{wording.REFUSED_LABEL}:** {block.text} ({escape_inline(block.reason)})", ""]
    if isinstance(block, layout.Notice):
        return [f"**{block.label}:** {escape_inline(block.text)}", ""]
    if isinstance(block, layout.Escalation):
        heading = f"**{wording.ESCALATION_HEADING}.** {wording.ESCALATION_LABEL}"
        return [heading, *_escape_lines(block.reason), ""]
    if isinstance(block, layout.Prose):
        lines = _with_refs(_escape_lines(block.text), block.citations)
        return [f"*{wording.GENERATED_LABEL}:*", *lines, ""]
    if isinstance(block, layout.QuoteBox):
        return _quote_block(block)
    if isinstance(block, layout.DataBox):
        return _data_block(block)
    if isinstance(block, layout.Missing):
        return [f"**Missing {block.what}** {code_span(block.item_id)} — not shown.", ""]
    if isinstance(block, layout.Statements):
        lines = [f"**{wording.STATEMENTS_LABEL}**", ""]
        for statement in block.items:
            lines += _statement_block(statement)
        return lines
    if isinstance(block, layout.Facts):
        lines = [f"**{block.label}**", ""]
        for fact in block.items:
            lines += _fact_block(fact)
        return lines
    if isinstance(block, layout.FaithfulnessView):
        head = f"**{wording.FAITHFULNESS_LABEL}:** {escape_inline(block.summary)}"
        lines = [f"{head} — *{escape_inline(block.method)}*", ""]
        lines += [
            f"- ✗ {escape_inline(text)} — {escape_inline(why)}" for text, why in block.unsupported
        ]
        return [*lines, ""] if block.unsupported else lines
    if isinstance(block, layout.Removed):
        items = [f"- {escape_inline(i.raw)} — {escape_inline(i.reason)}" for i in block.items]
        return [f"**{wording.REJECTED_HEADING}**", "", *items, ""]
    return [escape_inline(" · ".join(block.lines)), ""]


def render_markdown(answer: Answer, show_cited: bool = False) -> str:
    """Return `answer` as a Markdown document: the blocks of `answer_layout` in
    order (see the module docstring for the contract).

    The question, refusal and notices as `**Label:** text` lines; the escalation and its
    (escaped) reason; prose under `*Generated — not a quote:*` with its citations as
    code spans; quote boxes as block quotes under a `**Verbatim from source**` header;
    data results under `**Computed from table**`; the faithfulness line
    (`**Faithfulness:** …`) and the unsupported sentences as a list (escaped, never a
    block quote); the rationale statements; the cited triplets, each with its supporting
    quote as a block quote; removed output as a list under `**Removed (not
    verifiable)**`; the footer line.
    """
    out: list[str] = []
    for block in layout.answer_layout(answer, show_cited):
        out += _lines(block)
    return "\n".join(out).rstrip("\n") + "\n"
