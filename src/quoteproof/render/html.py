"""Answer -> HTML (a fragment for the web page, or a standalone page for the CLI).

Contract (the guarantee of DESIGN.md section 1, for HTML):

- The output holds exactly one `<figure class="verbatim">` per `QuoteSegment`
  whose quote the answer holds, plus, with `show_cited`, one per passage a shown
  prose segment cites (`answer.cited_passages(segment.citations)`: real `Quote`s
  from `answer.cited`, right after that prose). Nothing else produces a `<figure>`,
  a `<blockquote>` or the class `verbatim`. Each figure holds a `<figcaption>`
  ("Verbatim from source", the quote's label, its pages), the quote's `text` in a
  `<blockquote>` and, when a safe URL is known, `<a class="source-link">` to the
  source at the quote.
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

from quoteproof.ingest.labels import page_part
from quoteproof.model import (
    REFUSAL_TEXT,
    Answer,
    DataResult,
    DataSegment,
    ProseSegment,
    Quote,
    QuoteSegment,
    Statement,
)
from quoteproof.render.dataresult import (
    cell_text,
    describe_aggregate,
    describe_filters,
    describe_rows,
    describe_scalar,
    describe_source,
    preview_header,
)
from quoteproof.render.provenance import NO_MODEL_NOTICE, model_parts

__all__ = [
    "DATA_LABEL",
    "GENERATED_LABEL",
    "PAGE_CSS",
    "STATEMENTS_LABEL",
    "VERBATIM_LABEL",
    "SourceUrl",
    "escape",
    "file_source_url",
    "render_answer_html",
    "render_data_html",
    "render_html_page",
    "render_quote_html",
    "safe_href",
]

SourceUrl = Callable[[Quote], str]
"""Where a quote's "open in source" link points (e.g. the web source viewer)."""

VERBATIM_LABEL = "Verbatim from source"
GENERATED_LABEL = "Generated — not a quote"
DATA_LABEL = "Computed from table"
STATEMENTS_LABEL = "Rationale statements (generated, checked by the model)"
PARTIAL_NOTICE = (
    "Partial answer: sentences without a valid citation were removed, "
    "or the work stopped before it was complete."
)
ESCALATION_HEADING = "Escalated to a person"
ESCALATION_LABEL = "The model's reason (generated — not a quote):"
REJECTED_HEADING = "Removed (not verifiable)"

_LINE_BREAK = re.compile("\r\n|\r")
_WHITESPACE = re.compile(r"\s+")
_SCHEME = re.compile(r"\A([A-Za-z][A-Za-z0-9+.\-]*):")
_SAFE_SCHEMES = frozenset({"http", "https", "file"})


def _picture(ch: str) -> str:
    code = ord(ch)
    if code < 0x20 and ch not in "\t\n":
        return chr(0x2400 + code)  # ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    if 0x80 <= code <= 0x9F:
        return "\ufffd"
    return ch


def _visible(text: str) -> str:
    text = _LINE_BREAK.sub("\n", text)
    if all(" " <= ch < "\x7f" or ch in "\t\n" or ch > "\x9f" for ch in text):
        return text
    return "".join(_picture(ch) for ch in text)


def escape(text: str) -> str:
    """Return `text` as HTML character data (safe in text and in quoted attributes).

    Line endings become `\\n`; other control characters (NUL, ESC, C1) become
    visible stand-ins (`␀`, `␛`, U+FFFD), which HTML parsers keep as they are;
    then `&`, `<`, `>`, `"` and `'` are escaped."""
    return html.escape(_visible(text), quote=True)


def _inline(text: str) -> str:
    """`text` on one line (whitespace runs collapsed), escaped."""
    return escape(_WHITESPACE.sub(" ", text).strip())


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


def _file_name(source_path: str) -> str:
    name = re.split(r"[\\/]", source_path)[-1]
    return name or source_path


def render_quote_html(
    quote: Quote, *, source_url: SourceUrl | None = None, element_id: str | None = None
) -> str:
    """Return the verbatim figure of one resolved `quote` (the only way this module
    draws a `<figure>`): caption, text, link to the source.

    `element_id` must be an id of the caller's own making (never answer text)."""
    caption = [
        f'<span class="verbatim-label">{VERBATIM_LABEL}</span>',
        f' — <span class="quote-label">{_inline(quote.label)}</span>',
    ]
    page = page_part(quote.pages)
    if page is not None:
        caption.append(f' <span class="pages">· {escape(page)}</span>')
    if quote.ocr:
        caption.append(' <span class="ocr">· OCR text: check against the page</span>')
    if quote.differs:
        caption.append(
            f' <span class="differs">· the model\'s words differed: {_inline(quote.differs)}</span>'
        )
    ident = f' id="{escape(element_id)}"' if element_id else ""
    parts = [
        f'<figure class="verbatim"{ident}>',
        f"<figcaption>{''.join(caption)}</figcaption>",
        f'<blockquote class="quote-text">{escape(quote.text)}</blockquote>',
    ]
    href = safe_href((source_url or file_source_url)(quote))
    where = f"{_inline(_file_name(quote.source_path))}, chars {quote.start}–{quote.end}"
    if href is not None:
        parts.append(
            f'<p class="quote-source"><a class="source-link" href="{href}">Open in source</a>'
            f' <span class="where">({where})</span></p>'
        )
    else:
        parts.append(f'<p class="quote-source"><span class="where">({where})</span></p>')
    parts.append("</figure>")
    return "".join(parts)


def _dl_row(term: str, value: str) -> str:
    return f"<dt>{term}</dt><dd>{value}</dd>"


def render_data_html(result: DataResult) -> str:
    """Return a data result (computed from a table, not a quote): its origin and
    every parameter of the query, the value, the row count and the preview table."""
    source = describe_source(result).removeprefix("computed from table ")
    parts = [
        f'<section class="data" aria-label="{DATA_LABEL}">',
        f'<p class="data-label"><strong>{DATA_LABEL}</strong> '
        f'<span class="data-table-name">{_inline(source)}</span> — not a quote</p>',
        '<dl class="data-params">',
        _dl_row("Table", _inline(result.table)),
        _dl_row("Query", _inline(describe_filters(result.filters))),
    ]
    if result.period is not None:
        parts.append(_dl_row("Period", _inline(result.period)))
    if result.columns:
        parts.append(_dl_row("Columns", _inline(", ".join(result.columns))))
    if result.source is not None:
        parts.append(_dl_row("From query", _inline(result.source)))
    aggregate = describe_aggregate(result)
    if result.operation is not None and aggregate is not None:
        parts.append(_dl_row("Operation", _inline(result.operation)))
        parts.append(_dl_row("Column", "*" if result.column is None else _inline(result.column)))
        parts.append(
            _dl_row(
                "Value",
                f'<strong class="data-value">{_inline(describe_scalar(result.value))}</strong>'
                f' <span class="data-formula">({_inline(aggregate)})</span>',
            )
        )
    parts.append("</dl>")
    parts.append(f'<p class="row-count">{_inline(describe_rows(result))}</p>')
    header = preview_header(result)
    if result.rows and header:
        parts.append('<table class="data-rows"><thead><tr>')
        parts += [f'<th scope="col">{_inline(name)}</th>' for name in header]
        parts.append("</tr></thead><tbody>")
        for row in result.rows:
            cells = "".join(f"<td>{_inline(cell_text(cell))}</td>" for cell in row)
            parts.append(f"<tr>{cells}</tr>")
        parts.append("</tbody></table>")
    parts.append("</section>")
    return "".join(parts)


class _Renderer:
    """One rendering of one answer: hands out element ids and resolves chip targets.

    Figures are numbered in drawing order (`qp-q1`, `qp-c2`, …); a first pass over
    the same order finds, for each ref, the first figure drawn for it, so a chip can
    link to a figure before or after it.
    """

    def __init__(self, answer: Answer, source_url: SourceUrl | None, show_cited: bool) -> None:
        self.answer = answer
        self.source_url = source_url
        self.show_cited = show_cited
        self.counter = 0
        self.figure_of_ref: dict[str, str] = {}
        for kind, quote in self._figures():
            self.counter += 1
            self.figure_of_ref.setdefault(quote.ref, f"qp-{kind}{self.counter}")
        self.counter = 0
        self.cited_by_ref = {quote.ref: quote for quote in answer.cited}

    def _figures(self) -> Iterable[tuple[str, Quote]]:
        """The quotes drawn as figures, in drawing order, with their id prefix."""
        answer = self.answer
        for segment in answer.segments if answer.status == "answered" else ():
            if isinstance(segment, ProseSegment):
                if self.show_cited:
                    yield from (("c", q) for q in answer.cited_passages(segment.citations))
            elif isinstance(segment, QuoteSegment):
                try:
                    yield "q", answer.quote(segment.quote_id)
                except KeyError:
                    continue

    def figure(self, quote: Quote, kind: str) -> str:
        self.counter += 1
        element_id = f"qp-{kind}{self.counter}"
        return render_quote_html(quote, source_url=self.source_url, element_id=element_id)

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

    def prose(self, segment: ProseSegment) -> list[str]:
        out: list[str] = []
        cited_figures: list[str] = []
        if self.show_cited:
            for quote in self.answer.cited_passages(segment.citations):
                cited_figures.append(self.figure(quote, "c"))
        text = escape(segment.text.strip())
        chips = self.chips(segment.citations)
        if text or chips:
            body = f"{text} {chips}" if text and chips else text or chips
            out.append(
                f'<section class="generated" aria-label="{GENERATED_LABEL}">'
                f'<p class="generated-label">{GENERATED_LABEL}</p>'
                f'<p class="prose">{body}</p></section>'
            )
        return out + cited_figures

    def statement(self, statement: Statement) -> str:
        if statement.label is None:
            label = '<span class="label label-unverified">UNVERIFIED</span>'
        else:
            kind = "correct" if statement.label.startswith("CORRECT") else "incorrect"
            label = f'<span class="label label-{kind}">{_inline(statement.label)}</span>'
        head = f'<span class="statement-id">{_inline(statement.id) or "(no id)"}</span> {label}'
        if statement.original is not None:
            head += ' <span class="refined-flag">refined after the check</span>'
        text = escape(statement.text.strip())
        chips = self.chips(statement.refs)
        body = f"{text} {chips}" if text and chips else text or chips
        parts = [
            '<li class="statement">',
            f'<p class="statement-head">{head}</p>',
            f'<p class="prose">{body}</p>',
        ]
        if statement.justification is not None:
            parts.append(
                '<p class="justification"><span class="field">Justification:</span> '
                f"{escape(statement.justification.strip())}</p>"
            )
        if statement.original is not None:
            parts.append(
                '<p class="refined-from"><span class="field">Refined from:</span> '
                f"{escape(statement.original.strip())}</p>"
            )
        parts.append("</li>")
        return "".join(parts)

    def missing(self, what: str, item_id: str) -> str:
        return (
            f'<p class="missing" role="note">Missing {what} '
            f"<code>{_inline(item_id)}</code> — not shown.</p>"
        )

    def render(self) -> str:
        answer = self.answer
        out = [
            f'<article class="answer answer-{answer.status}">',
            '<h2 class="question"><span class="question-label">Question:</span> '
            f"{_inline(answer.question)}</h2>",
        ]
        if answer.status == "refused":
            reason = answer.refusal_reason or "no reason given"
            out.append(
                '<div class="refusal" role="status"><strong>Refused:</strong> '
                f'{REFUSAL_TEXT} <span class="reason">({_inline(reason)})</span></div>'
            )
        if answer.partial:
            out.append(f'<p class="partial-notice" role="note">{PARTIAL_NOTICE}</p>')
        if not answer.llm.language_model:
            out.append(f'<p class="no-model-notice" role="note">{NO_MODEL_NOTICE}</p>')
        out += [f'<p class="notice" role="note">{_inline(notice)}</p>' for notice in answer.notices]
        if answer.escalation is not None:
            reason = escape(answer.escalation.strip()) or "(no reason given)"
            out.append(
                f'<section class="escalation" aria-label="{ESCALATION_HEADING}">'
                f'<p class="escalation-label"><strong>{ESCALATION_HEADING}.</strong> '
                f"{ESCALATION_LABEL}</p>"
                f'<p class="prose">{reason}</p></section>'
            )
        for segment in answer.segments if answer.status == "answered" else ():
            if isinstance(segment, ProseSegment):
                out.extend(self.prose(segment))
            elif isinstance(segment, DataSegment):
                try:
                    out.append(render_data_html(answer.data_result(segment.data_id)))
                except KeyError:
                    out.append(self.missing("data result", segment.data_id))
            else:
                try:
                    quote = answer.quote(segment.quote_id)
                except KeyError:
                    out.append(self.missing("quote", segment.quote_id))
                    continue
                out.append(self.figure(quote, "q"))
        if answer.statements:
            out.append(
                f'<section class="statements" aria-label="{STATEMENTS_LABEL}">'
                f'<h3 class="statements-label">{STATEMENTS_LABEL}</h3><ol class="statement-list">'
            )
            out += [self.statement(statement) for statement in answer.statements]
            out.append("</ol></section>")
        if answer.rejected:
            out.append(
                f'<section class="rejected" aria-label="{REJECTED_HEADING}">'
                f"<h3>{REJECTED_HEADING}</h3><ul>"
            )
            out += [
                f'<li><code class="raw">{_inline(item.raw)}</code> — '
                f'<span class="reason">{_inline(item.reason)}</span></li>'
                for item in answer.rejected
            ]
            out.append("</ul></section>")
        meta = [] if answer.mode == "quote" else [f"Mode: {_inline(answer.mode)}"]
        if answer.usage is not None:
            usage = answer.usage
            meta.append(
                f"tokens: {usage.prompt_tokens} prompt · {usage.completion_tokens} completion"
            )
        meta += [_inline(part) for part in model_parts(answer.llm)]
        if meta:
            out.append(f'<p class="answer-meta">{" · ".join(meta)}</p>')
        out.append("</article>")
        return "\n".join(out) + "\n"


def render_answer_html(
    answer: Answer, *, source_url: SourceUrl | None = None, show_cited: bool = False
) -> str:
    """Return `answer` as an HTML fragment (`<article class="answer">…</article>`;
    see the module docstring for the contract).

    Layout: the question; for a refused answer the refusal (the fixed
    `REFUSAL_TEXT` sentence and the escaped reason) instead of the segments; the
    partial-answer notice; `NO_MODEL_NOTICE` for an answer made without a language
    model; the notices; the escalation; the segments in order (prose as
    generated sections with citation chips and, with `show_cited`, the passages
    each cites as verbatim figures after it; quotes as verbatim figures; data
    results as data sections); the rationale statements with their labels;
    rejected output under "Removed (not verifiable)"; the mode (unless "quote"),
    token usage and the model and server that answered (`model_parts`). A segment
    whose quote or data result is missing is reported, never drawn. `source_url`
    gives each figure's link (default: the file's `file://` URI when its path is
    absolute, else no link).
    """
    return _Renderer(answer, source_url, show_cited).render()


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
section.rejected{color:#7f1d1d}
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
