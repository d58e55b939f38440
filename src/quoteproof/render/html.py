"""Answer -> HTML (a fragment for the web page, or a standalone page for the CLI).

Contract (the guarantee that no model-written words are shown as a quote, for HTML):

- The output holds exactly one `<figure class="verbatim">` per `QuoteSegment`
  whose quote the answer holds, plus, with `show_cited`, one per passage a shown
  prose segment cites (`answer.cited_passages(segment.citations)`: real `Quote`s
  from `answer.cited`, right after that prose). Nothing else produces a `<figure>`,
  a `<blockquote>` or the class `verbatim`. Each figure holds a `<figcaption>`
  ("Verbatim from source", the quote's label `document › section › p. N`, shortened
  from the middle to `HTML_LABEL_CHARS` with the full label in its `title`
  attribute, shown on hover), the quote's `text` in a `<blockquote>` (the breaks that
  wrap a Markdown or plain-text paragraph at a margin shown as spaces:
  `render.wrapped`; a quote that crosses table cells has its tables drawn there as
  `<table class="quote-table">`, header rows as `<th>` column names, every cell its
  escaped source text: see `render.table_quote`) and, when a safe URL is known,
  `<a class="source-link">` to the source at the quote.
- Every string taken from the answer (prose, question, labels, refs, reasons,
  rejected output, rationale statements, justifications and earlier versions, the
  escalation, a data result's table, columns, filter values and cells, the quote
  text itself) goes through `escape`: `html.escape(..., quote=True)` after control
  characters are replaced by visible stand-ins. It is therefore always character
  data, never markup: no element, attribute, entity or comment can come from it.
  Element ids are ours (`qp-q1`, `qp-c1`), never taken from the answer.
- Model prose sits in `<section class="generated">`, labelled "Generated — not a
  quote", its citations as chips `<a class="chip" href=...>[ref]</a>` that link
  to the cited passage (its figure when shown, else the source viewer at it) or,
  when nothing is known about the ref, `<span class="chip">`. A refusal is
  `<div class="refusal" role="status">` with the fixed `REFUSAL_TEXT` and the
  reason; statements show their label per statement
  (`<span class="label label-correct|label-incorrect|label-unverified">`); data
  results sit in `<section class="data">` labelled "Computed from table", every
  parameter above the preview `<table>`.
- URLs: only `http:`, `https:`, `file:` and relative URLs become an `href`; any
  other (a `javascript:` URL from a hostile `source_url`) is dropped.

Everything here is O(length of the answer).
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath, PureWindowsPath

from quoteproof.model import Answer, DataResult, Quote
from quoteproof.render import layout, wording
from quoteproof.render.table_quote import TableView, quote_parts
from quoteproof.render.visible import visible
from quoteproof.text.labels import fit_label

__all__ = [
    "PAGE_CSS",
    "SourceUrl",
    "escape",
    "file_source_url",
    "label_span",
    "render_answer_html",
    "render_data_html",
    "render_html_page",
    "render_quote_html",
    "safe_href",
]

SourceUrl = Callable[[Quote], str]
"""Where a quote's "open in source" link points (e.g. the web source viewer)."""

HTML_LABEL_CHARS = 90
"""The most characters of a quote's label shown in its caption (the rest on hover)."""

_WHITESPACE = re.compile(r"\s+")
_SCHEME = re.compile(r"\A([A-Za-z][A-Za-z0-9+.\-]*):")
_SAFE_SCHEMES = frozenset({"http", "https", "file"})


def escape(text: str) -> str:
    """Return `text` as HTML character data (safe in text and in quoted attributes).

    Line endings become `\\n`; other control characters (NUL, ESC, C1, bidi
    overrides) become visible stand-ins (`␀`, `␛`, `\\x9b`, `\\u202e`: `visible`),
    which HTML parsers keep as they are; then `&`, `<`, `>`, `"` and `'` are escaped."""
    return html.escape(visible(text), quote=True)


def _inline(text: str) -> str:
    """`text` on one line (whitespace runs collapsed), escaped."""
    return escape(_WHITESPACE.sub(" ", text).strip())


_CODE_SPAN = re.compile(r"`([^`]+)`")
"""A span of a notice between backticks: a command it names."""


def _notice_text(text: str) -> str:
    """`text` as `_inline` gives it, with each span between backticks (a command a
    notice names: `quoteproof calibrate QUESTIONS.jsonl`) set as code instead of
    showing its backticks."""
    return _CODE_SPAN.sub(r"<code>\1</code>", _inline(text))


def safe_href(url: str) -> str | None:
    """Return `url` escaped for an `href` when it is relative or `http(s):`/`file:`;
    None for anything else (`javascript:`, `data:`, URLs with whitespace or control
    characters, which browsers would strip before reading the scheme)."""
    if not url or any(ch <= " " or "\x7f" <= ch <= "\x9f" for ch in url):
        return None
    scheme = _SCHEME.match(url)
    if scheme is not None and scheme.group(1).lower() not in _SAFE_SCHEMES:
        return None
    if scheme is None and url.startswith("//"):
        return None  # network-path reference: another host
    return html.escape(url, quote=True)


def file_source_url(quote: Quote) -> str:
    """A `file://` URI of the quote's source file (`#page=N` for a paged source), or
    "" when the source path is not absolute (no link is drawn then)."""
    for flavour in (PurePosixPath, PureWindowsPath):
        path = flavour(quote.source_path)
        if path.is_absolute():
            try:
                uri = path.as_uri()
            except ValueError:
                return ""
            return f"{uri}#page={quote.pages[0]}" if quote.pages else uri
    return ""


def _source_table(view: TableView) -> str:
    """A quoted table: header rows as `<th>` column names, then the body rows."""
    parts = ['<table class="quote-table">']
    if view.header:
        parts.append("<thead>")
        for row in view.header:
            cells = "".join(f'<th scope="col">{escape(cell)}</th>' for cell in row)
            parts.append(f"<tr>{cells}</tr>")
        parts.append("</thead>")
    parts.append("<tbody>")
    for row in view.body:
        parts.append("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _quote_body(block: layout.QuoteBox) -> str:
    """The blockquote's content: the quote's text, its tables drawn as tables."""
    parts = quote_parts(block.quote)
    if len(parts) == 1 and isinstance(parts[0], str):
        return escape(block.unwrapped)
    return "".join(
        f'<div class="quote-part">{escape(part)}</div>'
        if isinstance(part, str)
        else _source_table(part)
        for part in parts
    )


def label_span(label: str, css_class: str) -> str:
    """`<span class="CSS_CLASS" title="LABEL">SHORT</span>`: a label shortened from the
    middle to `HTML_LABEL_CHARS` (`labels.fit_label`), the full label on hover;
    both escaped. `css_class` is ours, never answer text."""
    full = _WHITESPACE.sub(" ", label).strip()
    shown = escape(fit_label(full, HTML_LABEL_CHARS))
    return f'<span class="{css_class}" title="{escape(full)}">{shown}</span>'


def _figure(block: layout.QuoteBox, source_url: SourceUrl | None, element_id: str | None) -> str:
    caption = [
        f'<span class="verbatim-label">{wording.VERBATIM_LABEL}</span>',
        f" — {label_span(block.label, 'quote-label')}",
    ]
    caption += [f' <span class="{kind}">· {_inline(note)}</span>' for kind, note in block.notes]
    ident = f' id="{escape(element_id)}"' if element_id else ""
    parts = [
        f'<figure class="verbatim"{ident}>',
        f"<figcaption>{''.join(caption)}</figcaption>",
        f'<blockquote class="quote-text">{_quote_body(block)}</blockquote>',
        '<p class="quote-source">',
    ]
    href = safe_href((source_url or file_source_url)(block.quote))
    if href is not None:
        parts.append(f'<a class="source-link" href="{href}">Open in source</a> ')
    parts.append(f'<span class="where">({_inline(block.where)})</span></p></figure>')
    return "".join(parts)


def render_quote_html(
    quote: Quote, *, source_url: SourceUrl | None = None, element_id: str | None = None
) -> str:
    """Return the verbatim figure of one resolved `quote` (the only way this module
    draws a `<figure>`): caption, text, link to the source.

    `element_id` must be an id of the caller's own making (never answer text)."""
    return _figure(layout.QuoteBox(quote), source_url, element_id)


def _data_section(block: layout.DataBox) -> str:
    parts = [
        f'<section class="data" aria-label="{wording.DATA_LABEL}">',
        f'<p class="data-label"><strong>{wording.DATA_LABEL}</strong> '
        f'<span class="data-table-name">{_inline(block.source)}</span> — {wording.NOT_A_QUOTE}</p>',
        '<dl class="data-params">',
    ]
    parts += [f"<dt>{name}</dt><dd>{_inline(value)}</dd>" for name, value in block.fields]
    parts.append("</dl>")
    parts.append(f'<p class="row-count">{_inline(block.row_count)}</p>')
    if block.header:
        parts.append('<table class="data-rows"><thead><tr>')
        parts += [f'<th scope="col">{_inline(name)}</th>' for name in block.header]
        parts.append("</tr></thead><tbody>")
        for row in block.rows:
            parts.append("<tr>" + "".join(f"<td>{_inline(cell)}</td>" for cell in row) + "</tr>")
        parts.append("</tbody></table>")
    parts.append("</section>")
    return "".join(parts)


def render_data_html(result: DataResult) -> str:
    """Return a data result (computed from a table, not a quote): its origin and
    every parameter of the query, the value, the row count and the preview table."""
    return _data_section(layout.DataBox(result))


def _with_chips(text: str, chips: str) -> str:
    escaped = escape(text)
    return f"{escaped} {chips}" if escaped and chips else escaped or chips


class _Renderer:
    """One rendering of one answer's layout: hands out figure ids and resolves
    chip targets.

    Figures are numbered in drawing order (`qp-q1`, `qp-c2`, …); each ref's chips
    link to the first figure drawn for it, before or after the chip.
    """

    def __init__(self, answer: Answer, source_url: SourceUrl | None, show_cited: bool) -> None:
        self.source_url = source_url
        self.blocks = layout.answer_layout(answer, show_cited)
        self.figure_ids: dict[int, str] = {}
        self.figure_of_ref: dict[str, str] = {}
        boxes = [(i, b) for i, b in enumerate(self.blocks) if isinstance(b, layout.QuoteBox)]
        for number, (position, block) in enumerate(boxes, start=1):
            element_id = f"qp-{'c' if block.cited else 'q'}{number}"
            self.figure_ids[position] = element_id
            self.figure_of_ref.setdefault(block.quote.ref, element_id)
        self.cited_by_ref = {quote.ref: quote for quote in answer.cited}

    def chip(self, ref: str) -> str:
        text = f"[{_inline(ref)}]"
        target = self.figure_of_ref.get(ref)
        if target is not None:
            return f'<a class="chip" href="#{target}">{text}</a>'
        passage = self.cited_by_ref.get(ref)
        if passage is not None:
            href = safe_href((self.source_url or file_source_url)(passage))
            if href is not None:
                return f'<a class="chip" href="{href}">{text}</a>'
        return f'<span class="chip">{text}</span>'

    def chips(self, refs: Iterable[str]) -> str:
        return " ".join(self.chip(ref) for ref in refs)

    def statement(self, statement: layout.StatementView) -> str:
        label = (
            f'<span class="label label-{statement.verdict_kind}">'
            f"{_inline(statement.verdict)}</span>"
        )
        head = f'<span class="statement-id">{_inline(statement.id)}</span> · {label}'
        if statement.refined:
            head += f' · <span class="refined-flag">{wording.REFINED_FLAG}</span>'
        parts = [
            '<li class="statement">',
            f'<p class="statement-head">{head}</p>',
            f'<p class="prose">{_with_chips(statement.text, self.chips(statement.refs))}</p>',
        ]
        for css, label_text, value in (
            ("justification", wording.JUSTIFICATION_LABEL, statement.justification),
            ("refined-from", wording.REFINED_FROM_LABEL, statement.original),
        ):
            if value is not None:
                field = f'<span class="field">{label_text}:</span>'
                parts.append(f'<p class="{css}">{field} {_inline(value)}</p>')
        parts.append("</li>")
        return "".join(parts)

    def fact(self, fact: layout.FactView) -> str:
        """A cited triplet (generated or imported, never a quote: a list item, no
        figure), then the verbatim figure of the quote that supports it."""
        origin = f'<span class="fact-origin">{fact.origin} — {wording.NOT_A_QUOTE}</span>'
        parts = [
            '<li class="fact">',
            f'<p class="fact-head"><span class="fact-id">{_inline(fact.id)}</span> · {origin}</p>',
            f'<p class="fact-text">{_inline(fact.text)}</p>',
            f'<p class="fact-from"><span class="field">From:</span> {_inline(fact.provenance)}</p>',
        ]
        if fact.note is not None:
            note = f'<span class="field">{wording.NOTE_LABEL}:</span> {_inline(fact.note)}'
            parts.append(f'<p class="fact-note">{note}</p>')
        if fact.source is not None:
            parts.append(f'<p class="fact-support">{wording.FACT_SOURCE_LABEL}:</p>')
            parts.append(_figure(fact.source, self.source_url, None))
        parts.append("</li>")
        return "".join(parts)

    def block(self, position: int, block: layout.Block) -> str:
        """The HTML of one layout block."""
        if isinstance(block, layout.Question):
            label = f'<span class="question-label">{wording.QUESTION_LABEL}:</span>'
            return f'<h2 class="question">{label} {_inline(block.text)}</h2>'
        if isinstance(block, layout.Refusal):
            return (
                f'<div class="refusal" role="status"><strong>{wording.REFUSED_LABEL}:</strong> '
                f'{block.text} <span class="reason">({_inline(block.reason)})</span></div>'
            )
        if isinstance(block, layout.Notice):
            return (
                f'<p class="{_NOTICE_CLASSES[block.kind]}" role="note">'
                f"<strong>{block.label}:</strong> {_notice_text(block.text)}</p>"
            )
        if isinstance(block, layout.Escalation):
            return (
                f'<section class="escalation" aria-label="{wording.ESCALATION_HEADING}">'
                f'<p class="escalation-label"><strong>{wording.ESCALATION_HEADING}.</strong> '
                f"{wording.ESCALATION_LABEL}</p>"
                f'<p class="prose">{escape(block.reason)}</p></section>'
            )
        if isinstance(block, layout.Prose):
            return (
                f'<section class="generated" aria-label="{wording.GENERATED_LABEL}">'
                f'<p class="generated-label">{wording.GENERATED_LABEL}</p>'
                f'<p class="prose">{_with_chips(block.text, self.chips(block.citations))}</p>'
                "</section>"
            )
        if isinstance(block, layout.QuoteBox):
            return _figure(block, self.source_url, self.figure_ids[position])
        if isinstance(block, layout.DataBox):
            return _data_section(block)
        if isinstance(block, layout.Missing):
            return (
                f'<p class="missing" role="note">Missing {block.what} '
                f"<code>{_inline(block.item_id)}</code> — not shown.</p>"
            )
        if isinstance(block, layout.Statements):
            statements = [self.statement(statement) for statement in block.items]
            return _numbered_section("statement", wording.STATEMENTS_LABEL, statements)
        if isinstance(block, layout.Facts):
            return _numbered_section("fact", block.label, [self.fact(f) for f in block.items])
        if isinstance(block, layout.FaithfulnessView):
            return _faithfulness_section(block)
        if isinstance(block, layout.Removed):
            items = "\n".join(
                f'<li><code class="raw">{_inline(item.raw)}</code> — '
                f'<span class="reason">{_inline(item.reason)}</span></li>'
                for item in block.items
            )
            return (
                f'<section class="rejected" aria-label="{wording.REJECTED_HEADING}">'
                f"<h3>{wording.REJECTED_HEADING}</h3><ul>\n{items}\n</ul></section>"
            )
        return f'<p class="answer-meta">{_inline(" · ".join(block.lines))}</p>'

    def render(self, status: str) -> str:
        out = [f'<article class="answer answer-{status}">']
        out += [self.block(position, block) for position, block in enumerate(self.blocks)]
        out.append("</article>")
        return "\n".join(out) + "\n"


def _faithfulness_section(block: layout.FaithfulnessView) -> str:
    """The faithfulness of the prose: a section of its own (class `faithfulness`,
    never a figure), the unsupported sentences escaped in a list."""
    items = "".join(
        f'<li><span class="claim">{_inline(text)}</span> — '
        f'<span class="reason">{_inline(why)}</span></li>'
        for text, why in block.unsupported
    )
    listed = f'<ul class="unsupported">{items}</ul>' if items else ""
    return (
        f'<section class="faithfulness" aria-label="{wording.FAITHFULNESS_LABEL}">'
        f"<p><strong>{wording.FAITHFULNESS_LABEL}:</strong> "
        f'<span class="faithfulness-score">{_inline(block.summary)}</span> — '
        f'<span class="faithfulness-method">{_inline(block.method)}</span></p>{listed}</section>'
    )


def _numbered_section(kind: str, label: str, items: list[str]) -> str:
    """A labelled section (class `{kind}s`) holding the list items `items` in order."""
    lines = "\n".join(items)
    return (
        f'<section class="{kind}s" aria-label="{label}">'
        f'<h3 class="{kind}s-label">{label}</h3>'
        f'<ol class="{kind}-list">\n{lines}\n</ol></section>'
    )


_NOTICE_CLASSES = {"partial": "partial-notice", "no-model": "no-model-notice", "notice": "notice"}


def render_answer_html(
    answer: Answer, *, source_url: SourceUrl | None = None, show_cited: bool = False
) -> str:
    """Return `answer` as an HTML fragment (`<article class="answer">…</article>`;
    see the module docstring for the contract): the blocks of `answer_layout` in
    order.

    The question as a heading; the refusal; the notices; the escalation; prose as
    generated sections with citation chips; quote boxes as verbatim figures; data
    results as data sections; the rationale statements with their labels; removed
    output under "Removed (not verifiable)"; the footer (`answer-meta`).
    `source_url` gives each figure's link (default: the file's `file://` URI when
    its path is absolute, else no link).
    """
    return _Renderer(answer, source_url, show_cited).render(answer.status)


PAGE_CSS = """\
body{font-family:system-ui,sans-serif;max-width:50rem;margin:2rem auto;padding:0 1rem;
color:#1a1a1a;background:#fff;line-height:1.5}
a{color:#0645ad}a:focus-visible{outline:3px solid #b35c00;outline-offset:2px}
.question{font-size:1.25rem}
figure.verbatim{margin:1rem 0;border:2px solid #1d4ed8;border-left-width:6px;
background:#eff6ff;color:#0b1a33;padding:.5rem 1rem;border-radius:4px}
figure.verbatim figcaption{font-size:.9rem;color:#1e3a8a}
.verbatim-label{font-weight:700}
blockquote.quote-text{margin:.5rem 0;white-space:pre-wrap;font-family:Georgia,serif}
section.generated,section.statements,section.escalation{margin:1rem 0;border:1px dashed #6b7280;
background:#fff;padding:.5rem 1rem;border-radius:4px}
.generated-label,.escalation-label,.statements-label{font-size:.85rem;font-style:italic;
color:#4b5563;margin:0}
.prose{white-space:pre-wrap}
.chip{font-family:ui-monospace,monospace;font-size:.85rem;color:#0645ad}
.refusal{border:2px solid #92400e;background:#fffbeb;color:#451a03;padding:.5rem 1rem}
.partial-notice,.missing{color:#92400e;font-weight:600}
.notice,.no-model-notice{color:#92400e}
.label{font-weight:700;padding:0 .3rem;border-radius:3px}
.label-correct{color:#14532d;background:#dcfce7}
.label-incorrect{color:#7f1d1d;background:#fee2e2}
.label-unverified{color:#713f12;background:#fef9c3}
section.data{margin:1rem 0;border:2px solid #7e22ce;background:#faf5ff;color:#2e1065;
padding:.5rem 1rem}
.data-params{display:grid;grid-template-columns:auto 1fr;gap:0 1rem}
.data-params dt{font-weight:600}.data-params dd{margin:0}
table.data-rows{border-collapse:collapse}
table.data-rows th,table.data-rows td{border:1px solid #a78bfa;padding:.2rem .5rem;text-align:left}
table.quote-table{display:block;max-width:100%;overflow-x:auto;border-collapse:collapse;
white-space:normal;overflow-wrap:normal;margin:.25rem 0}
table.quote-table th,table.quote-table td{border:1px solid #93c5fd;padding:.2rem .5rem;
text-align:left;vertical-align:top}
table.quote-table th{background:#dbeafe}
section.rejected{color:#7f1d1d}
section.faithfulness{margin:.5rem 0;font-size:.9rem;color:#374151}
ul.unsupported{color:#7f1d1d;margin:.25rem 0}
.answer-meta{color:#4b5563;font-size:.85rem}
"""


def _style_hash(css: str) -> str:
    digest = hashlib.sha256(css.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def render_html_page(answer: Answer, *, show_cited: bool = False) -> str:
    """Return `answer` as a standalone HTML document (for `ask --format html`).

    No scripts; its Content-Security-Policy allows only its own style sheet (by
    hash) and images from `data:`, so even a page opened from disk runs nothing.
    Quote links point at the source files (`file://`).
    """
    policy = f"default-src 'none'; style-src {_style_hash(PAGE_CSS)}; img-src data:"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>quoteproof: {_inline(answer.question)}</title>\n"
        f"<style>{PAGE_CSS}</style>\n</head>\n<body>\n<main>\n"
        f"{render_answer_html(answer, show_cited=show_cited)}"
        "</main>\n</body>\n</html>\n"
    )
