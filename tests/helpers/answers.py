"""Building `Quote` and `Answer` values directly, and hostile ones for hypothesis."""

from __future__ import annotations

import re
from dataclasses import fields, replace
from typing import Any, get_args

from hypothesis import strategies as st

from quoteproof.model import (
    AggregateOp,
    Answer,
    ClaimedQuote,
    DataResult,
    DataSegment,
    Filter,
    FilterOp,
    LLMInfo,
    Message,
    ModelCall,
    ProseSegment,
    Quote,
    QuoteSegment,
    RecordedAnswer,
    Rejected,
    Role,
    Segment,
    Statement,
    StatementLabel,
    ToolCall,
    Usage,
    sha256_text,
)

LABELS: tuple[StatementLabel, ...] = get_args(StatementLabel)
FILTER_OPS: tuple[FilterOp, ...] = get_args(FilterOp)
AGGREGATE_OPS: tuple[AggregateOp, ...] = get_args(AggregateOp)
ROLES: tuple[Role, ...] = get_args(Role)


def make_quote(source: str, start: int, end: int, quote_id: str = "q1", **extra: Any) -> Quote:
    """A quote of `source[start:end]` with a correct receipt; `extra` overrides fields."""
    fields: dict[str, Any] = {
        "id": quote_id,
        "ref": "doc-1",
        "label": "Doc › Section › ¶1",
        "doc_id": "doc",
        "doc_version": 1,
        "source_path": "corpus/doc.txt",
        "start": start,
        "end": end,
        "text": source[start:end],
        "claimed_text": None,
        "match": "ref",
        "score": 100.0,
        "doc_sha256": sha256_text(source),
        "text_sha256": sha256_text(source[start:end]),
        "section": ("Section",),
        "pages": None,
        "differs": None,
    }
    fields.update(extra)
    return Quote(**fields)


def make_data_result(data_id: str = "r1", **extra: Any) -> DataResult:
    """A data result (mean age of the rows of people.csv where country = US)."""
    fields: dict[str, Any] = {
        "id": data_id,
        "table": "people.csv",
        "doc_id": "people",
        "doc_version": 2,
        "doc_sha256": sha256_text("people"),
        "source_path": "data/people.csv",
        "filters": (Filter("country", "=", "US"),),
        "columns": ("name", "age"),
        "row_count": 3,
        "rows": (("Ann", "40"), ("Bob", None)),
        "operation": "mean",
        "column": "age",
        "value": 41.5,
        "source": None,
        "period": None,
    }
    fields.update(extra)
    return DataResult(**fields)


def make_answer(segments: tuple[Segment, ...], quotes: tuple[Quote, ...], **extra: Any) -> Answer:
    """An answered `Answer` with these segments and quotes; `extra` overrides fields."""
    fields: dict[str, Any] = {
        "question": "How does it begin?",
        "status": "answered",
        "segments": segments,
        "quotes": quotes,
        "rejected": (),
        "llm": LLMInfo("test", None, ""),
    }
    fields.update(extra)
    return Answer(**fields)


def as_recorded(answer: Answer) -> RecordedAnswer:
    """What reading `answer`'s JSON back gives: its quotes and cited passages as claims."""

    def claims(quotes: tuple[Quote, ...]) -> tuple[ClaimedQuote, ...]:
        return tuple(
            ClaimedQuote(**{f.name: getattr(q, f.name) for f in fields(q)}) for q in quotes
        )

    return RecordedAnswer(
        replace(answer, quotes=(), cited=()), claims(answer.quotes), claims(answer.cited)
    )


def shown_segments(answer: Answer) -> tuple[Segment, ...]:
    """The segments a renderer draws: none for a refusal (it prints the fixed sentence)."""
    return answer.segments if answer.status == "answered" else ()


def shown_cited(answer: Answer) -> tuple[Quote, ...]:
    """The cited passages a renderer draws with `show_cited`, in order: those of each
    shown prose segment, right after it."""
    return tuple(
        quote
        for segment in shown_segments(answer)
        if isinstance(segment, ProseSegment)
        for quote in answer.cited_passages(segment.citations)
    )


def hostile_answers(attack_text: st.SearchStrategy[str]) -> st.SearchStrategy[Answer]:
    """Answers whose every string is `attack_text`: quote text and labels, prose,
    reasons, cited passages, rationale statements, data results (tables, columns,
    filter values, cells), the escalation, model calls, notices; with any mode and
    usage."""

    def quotes(draw: st.DrawFn, prefix: str, refs: list[str]) -> list[Quote]:
        found = []
        for i in range(draw(st.integers(0, 3))):
            source = draw(attack_text)
            start = draw(st.integers(0, len(source)))
            end = draw(st.integers(start, len(source)))
            ref = draw(st.sampled_from(refs)) if refs else draw(attack_text)
            found.append(
                make_quote(
                    source,
                    start,
                    end,
                    f"{prefix}{i}",
                    ref=ref,
                    label=draw(attack_text),
                    differs=draw(st.none() | attack_text),
                )
            )
        return found

    scalars = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | attack_text
    )

    def data_results(draw: st.DrawFn) -> list[DataResult]:
        return [
            make_data_result(
                f"r{i}",
                table=draw(attack_text),
                doc_id=draw(attack_text),
                source_path=draw(attack_text),
                filters=tuple(
                    draw(
                        st.lists(
                            st.builds(Filter, attack_text, st.sampled_from(FILTER_OPS), scalars),
                            max_size=3,
                        )
                    )
                ),
                columns=tuple(draw(st.lists(attack_text, max_size=3))),
                row_count=draw(st.integers(0, 10**6)),
                rows=tuple(
                    draw(
                        st.lists(
                            st.lists(st.none() | attack_text, max_size=3).map(tuple), max_size=3
                        )
                    )
                ),
                operation=draw(st.none() | st.sampled_from(AGGREGATE_OPS)),
                column=draw(st.none() | attack_text),
                value=draw(scalars),
                source=draw(st.none() | attack_text),
                period=draw(st.none() | attack_text),
            )
            for i in range(draw(st.integers(0, 2)))
        ]

    tool_calls = st.lists(st.builds(ToolCall, attack_text, attack_text, attack_text), max_size=2)
    message = st.builds(
        Message,
        st.sampled_from(ROLES),
        attack_text,
        tool_calls.map(tuple),
        st.none() | attack_text,
    )
    usage = st.none() | st.builds(Usage, st.integers(0, 10**6), st.integers(0, 10**6))
    call = st.builds(
        ModelCall,
        attack_text,
        st.lists(message, max_size=2).map(tuple),
        attack_text,
        tool_calls.map(tuple),
        st.lists(attack_text, max_size=2).map(tuple),
        usage,
    )
    statement = st.builds(
        Statement,
        attack_text,
        attack_text,
        st.lists(attack_text, max_size=2).map(tuple),
        st.none() | st.sampled_from(LABELS),
        st.none() | attack_text,
        st.none() | attack_text,
    )

    @st.composite
    def build(draw: st.DrawFn) -> Answer:
        quote_list = quotes(draw, "q", [])
        cited_refs = draw(st.lists(attack_text, max_size=3))
        cited = quotes(draw, "c", cited_refs)
        data = data_results(draw)
        # Prose cites the cited passages' refs as well as any other text.
        citation = st.sampled_from(cited_refs) | attack_text if cited_refs else attack_text
        prose = st.builds(ProseSegment, attack_text, st.lists(citation, max_size=2).map(tuple))
        segment: st.SearchStrategy[Segment] = prose
        if quote_list:
            segment |= st.sampled_from([q.id for q in quote_list]).map(QuoteSegment)
        if data:
            segment |= st.sampled_from([d.id for d in data]).map(DataSegment)
        return make_answer(
            tuple(draw(st.lists(segment, max_size=5))),
            tuple(quote_list),
            status=draw(st.sampled_from(["answered", "refused"])),
            refusal_reason=draw(st.none() | attack_text),
            rejected=tuple(
                draw(st.lists(st.builds(Rejected, attack_text, attack_text), max_size=2))
            ),
            mode=draw(st.sampled_from(["quote", "cite", "rationale", "agent"])),
            partial=draw(st.booleans()),
            cited=tuple(cited),
            statements=tuple(draw(st.lists(statement, max_size=2))),
            data=tuple(data),
            escalation=draw(st.none() | attack_text),
            calls=tuple(draw(st.lists(call, max_size=2))),
            usage=draw(usage),
            notices=tuple(draw(st.lists(attack_text, max_size=2))),
        )

    return build()


def assert_text_formats_box(answer: Answer, boxes: int, *, show_cited: bool) -> None:
    """Markdown holds exactly `boxes` block quotes and no live HTML; the terminal
    exactly `boxes` panels (`show_cited`: cited passages shown too)."""
    from markdown_it import MarkdownIt

    from quoteproof.render.markdown import render_markdown
    from quoteproof.render.terminal import render_text

    html = MarkdownIt("commonmark").render(render_markdown(answer, show_cited=show_cited))
    assert html.count("<blockquote>") == boxes
    assert not re.search(r"<(script|img|div|quote|source)\b", html, re.IGNORECASE)
    lines = render_text(answer, width=90, show_cited=show_cited).splitlines()
    assert sum(line.startswith("╭") for line in lines) == boxes
