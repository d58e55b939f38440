"""The `agent` strategy: the model only orchestrates tools; the tools compose the answer.

Over the provider's tool-calling protocol the model calls `search`, `quote`,
`table_query`, `aggregate`, `note`, `escalate` and `finish` (see `agent_tools`).
Quotes come from the resolver, data results from the deterministic table engine,
and the model's own words only from `note` (shown as generated, each sentence only
when it cites a passage or a data result and says what they say, and once) and
`escalate`.
A tool error (unknown tool, bad arguments, unknown ref, table or pointer) goes back
to the model as the tool's result, so it can correct itself, and is listed in the
answer's `rejected`. The loop stops at `finish`, `escalate`, a reply without tool
calls, or after `max_steps` model calls (the answer is then partial, or a refusal
when nothing was composed).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from quoteproof.defaults import DEFAULT_MAX_STEPS as DEFAULT_MAX_STEPS
from quoteproof.errors import TableError
from quoteproof.model import (
    Answer,
    Chunk,
    DataResult,
    DataSegment,
    Hit,
    Message,
    ProseSegment,
    Quote,
    QuoteSegment,
    Rejected,
    Segment,
    ToolCall,
)
from quoteproof.quoting.citations import split_sentences
from quoteproof.quoting.parse import split_citations
from quoteproof.quoting.prompt import format_sources
from quoteproof.quoting.resolve import resolve_quote
from quoteproof.strategies.agent_tools import TOOLS, ToolArgumentError, tool_arguments
from quoteproof.strategies.session import (
    ESCALATED,
    NOTHING_VERIFIABLE,
    STEP_LIMIT,
    AnswerSession,
)
from quoteproof.streaming import DataComputed, ProseDelta, QuoteResolved
from quoteproof.tables.args import (
    parse_aggregate_op,
    parse_columns,
    parse_filters,
    parse_name,
    parse_optional_name,
)
from quoteproof.tables.session import TableSession

SEARCH_RESULTS = 8

AGENT_SYSTEM_PROMPT = """\
You answer questions by calling tools. You never write the answer as plain text: \
the answer is made only of what your tool calls add to it.

- quote(ref, hint?) shows a passage verbatim; prefer quoting to paraphrasing.
- note(text) adds a short sentence of your own, labelled as generated; end it with \
the [REF] markers of the passages or the [r1] pointers of the data results it relies \
on. A sentence without one, or with a number, date or name they do not hold, is removed.
- search(query) finds more passages (you get refs and labels).
- table_query(table, filters, columns) selects rows of a table and returns a \
pointer to the result; aggregate(pointer, op, column) computes over a result. Pass \
pointers, never data.
- escalate(reason) hands the question to a person when the sources and tables \
cannot answer it safely.
- finish() ends the answer. Call it when you are done.

Tables:
{tables}

The passages retrieved for the question follow, each in <source ref="REF"> ... </source>.
"""

Search = Callable[[str], Sequence[Hit]]
"""Returns the hits for a query (the index's retrieval)."""


def _table_lines(tables: TableSession) -> str:
    infos = tables.tables()
    if not infos:
        return "(none)"
    return "\n".join(
        f"- {info.name} ({info.row_count} rows): columns {', '.join(info.columns)}"
        for info in infos
    )


def agent_messages(question: str, sources: Sequence[Chunk], tables: TableSession) -> list[Message]:
    """The conversation's first two messages: the rules with the tables, then the
    retrieved passages and the question."""
    system = AGENT_SYSTEM_PROMPT.format(tables=_table_lines(tables))
    user = f"{format_sources(sources)}\n\nQuestion: {question.strip()}"
    return [Message("system", system), Message("user", user)]


@dataclass
class _Composer:
    """The answer the tools are composing, and what the model may refer to."""

    session: AnswerSession
    search: Search
    tables: TableSession
    known: dict[str, Chunk]
    segments: list[Segment] = field(default_factory=list)
    quotes: list[Quote] = field(default_factory=list)
    data: list[DataResult] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    escalation: str | None = None
    finished: bool = False

    def run(self, call: ToolCall) -> str:
        """Run one tool call; return the result text sent back to the model."""
        try:
            arguments = tool_arguments(call)
            result = getattr(self, f"_tool_{call.name}")(arguments)
        except (ToolArgumentError, TableError) as exc:
            self.rejected.append(Rejected(f"{call.name}({call.arguments})", str(exc)))
            return json.dumps({"error": str(exc)}, ensure_ascii=False)
        return json.dumps(result, ensure_ascii=False)

    def _emit(self, event: ProseDelta | QuoteResolved | DataComputed) -> None:
        if self.session.events is not None:
            self.session.events(event)

    def _tool_search(self, arguments: dict[str, Any]) -> dict[str, Any]:
        hits = list(self.search(arguments["query"]))[:SEARCH_RESULTS]
        for hit in hits:
            self.known.setdefault(hit.chunk.ref, hit.chunk)
        return {"results": [{"ref": h.chunk.ref, "label": h.chunk.label} for h in hits]}

    def _tool_quote(self, arguments: dict[str, Any]) -> dict[str, Any]:
        ref, hint = arguments["ref"], (arguments.get("hint") or "").strip() or None
        if ref not in self.known:
            raise ToolArgumentError(f"quote: unknown ref '{ref}'; use a ref from the sources")
        outcome = resolve_quote(
            ref,
            hint,
            f"q{len(self.quotes) + 1}",
            list(self.known.values()),
            self.session.lookup,
            raw=json.dumps(arguments, ensure_ascii=False),
            threshold=self.session.threshold,
        )
        if isinstance(outcome, Rejected):
            raise ToolArgumentError(f"quote: {outcome.reason}")
        self.quotes.append(outcome)
        self.segments.append(QuoteSegment(outcome.id))
        self._emit(QuoteResolved(outcome))
        return {"quote_id": outcome.id, "label": outcome.label, "match": outcome.match}

    def _add_data(self, result: DataResult) -> dict[str, Any]:
        self.data.append(result)
        self.segments.append(DataSegment(result.id))
        self._emit(DataComputed(result))
        reply: dict[str, Any] = {"pointer": result.id, "row_count": result.row_count}
        if result.operation is not None:
            reply["value"] = result.value
        else:
            reply["columns"] = list(result.columns)
        return reply

    def _tool_table_query(self, arguments: dict[str, Any]) -> dict[str, Any]:
        table = parse_name(arguments["table"], "table")
        filters = parse_filters(arguments.get("filters"))
        columns = parse_columns(arguments.get("columns"))
        return self._add_data(self.tables.query(table, filters, columns))

    def _tool_aggregate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        pointer = parse_name(arguments["pointer"], "pointer")
        op = parse_aggregate_op(arguments["op"])
        column = parse_optional_name(arguments.get("column"), "column")
        return self._add_data(self.tables.aggregate(pointer, op, column))

    def _tool_note(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Add the note's sentences, each with the known refs and data pointers it
        cites (the answer shows only those that cite one and say what it says)."""
        item = split_citations(arguments["text"])
        if item is None or not item.text:
            raise ToolArgumentError("note: the text is empty")
        citable = {*self.known, *(result.id for result in self.data)}
        unknown = [ref for ref in item.citations if ref not in citable]
        for ref in dict.fromkeys(unknown):
            self.rejected.append(Rejected(f"[{ref}]", f"citation '{ref}' names no known source"))
        for sentence in split_sentences(item, citable):
            self.segments.append(ProseSegment(sentence.text, sentence.known))
        self._emit(ProseDelta(arguments["text"]))
        return {"ok": True}

    def _tool_escalate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        self.escalation = arguments["reason"]
        self.finished = True
        return {"ok": True, "escalated": True}

    def _tool_finish(self, arguments: dict[str, Any]) -> dict[str, Any]:
        self.finished = True
        return {"ok": True}


def answer_agent(
    session: AnswerSession,
    search: Search,
    tables: TableSession,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Answer:
    """Let the model compose the answer with tools, for at most `max_steps` calls.

    The retrieved sources are cut to the model's context window. A backend that can
    constrain its output makes every call through a grammar of the tool schemas.
    Raises `BackendError` when the model fails.
    """
    session.fit_context(lambda chunks: agent_messages(session.question, chunks, tables))
    composer = _Composer(session, search, tables, {c.ref: c for c in session.sources})
    messages = agent_messages(session.question, session.sources, tables)
    new_messages = tuple(messages)
    for _ in range(max_steps):
        completion = session.call("agent", tuple(messages), tools=TOOLS, recorded=new_messages)
        messages.append(Message("assistant", completion.text, completion.tool_calls))
        if completion.text.strip():
            composer.rejected.append(
                Rejected(completion.text, "text outside tool calls is not part of the answer")
            )
        if not completion.tool_calls:
            composer.finished = True
            break
        results = [
            Message("tool", composer.run(call), tool_call_id=call.id)
            for call in completion.tool_calls
        ]
        messages.extend(results)
        new_messages = tuple(results)
        if composer.finished:
            break
    return _compose(session, composer, max_steps)


def _compose(session: AnswerSession, composer: _Composer, max_steps: int) -> Answer:
    rejected = list(composer.rejected)
    if composer.escalation is not None:
        return session.refuse(
            ESCALATED, rejected, data=composer.data, escalation=composer.escalation
        )
    if not composer.finished:
        rejected.append(Rejected("", f"the agent did not finish within {max_steps} steps"))
        if not composer.segments:
            return session.refuse(STEP_LIMIT, rejected, data=composer.data)
    elif not composer.segments:
        return session.refuse(NOTHING_VERIFIABLE, rejected, data=composer.data)
    return session.answer(
        composer.segments,
        composer.quotes,
        rejected,
        partial=not composer.finished,
        data=composer.data,
        passages=list(composer.known.values()),
    )
