"""`quoteproof mcp`: the index as a Model Context Protocol server over stdio.

Three tools let a desktop assistant quote documents instead of paraphrasing them:
`search` finds passages (and the knowledge-graph triplets the query names, as
facts, never quotes), `quote` turns a ref (and, optionally, the words the
assistant means to quote) into the source's own words with a receipt, and `ask`
answers a question as `quoteproof ask` does and records it in the audit log.
Quotes come only from the resolver (every quoted word is source text read back
from the index, never the assistant's): words that match no source passage are a
tool error, never a quote. With `collections`, every tool sees only documents of
those collections.

The index is opened, used and closed on one worker thread (a SQLite connection
belongs to the thread that opened it); tool calls wait for it in turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict

from quoteproof import __version__
from quoteproof.defaults import DEFAULT_THRESHOLD
from quoteproof.errors import QuoteproofError
from quoteproof.model import AnswerMode, ContextForm, Quote
from quoteproof.render.hits import FactHit, fact_hit_to_dict
from quoteproof.server.mcp_stdio import serve_stdio
from quoteproof.service import (
    MAX_QUESTION_CHARS,
    AnswerOptions,
    Backend,
    ClosedOnExit,
    Principal,
    ScopedIndex,
    check_question,
    context_help,
    mode_help,
)

__all__ = [
    "MAX_SEARCH_TOP_K",
    "MCP_USER",
    "FactHit",
    "McpServer",
    "QuoteResult",
    "SearchHit",
    "SearchResult",
    "Tools",
]

MCP_USER = "mcp"
"""The user the audit log records for answers asked through MCP."""
MAX_SEARCH_TOP_K = 50
MAX_REF_CHARS = 100
"""Longer than any ref (`k3m9qa.4`): a longer one is refused before any lookup."""
MAX_DOCUMENT_CHARS = 4096
"""Longer than any document id or file path (Linux's PATH_MAX)."""

_T = TypeVar("_T")

INSTRUCTIONS = """\
quoteproof serves a collection of documents. Quotations from it must be the \
documents' own words: find passages with `search`, then get the exact words with \
`quote` and present its `text` verbatim, as a quotation, citing its `label`. Never \
present your own paraphrase or recollection as a quotation. `ask` answers a \
question in one call, with verbatim quotes and their receipts."""

SEARCH_DESCRIPTION = """\
Find passages in the indexed documents, best first (`hits`). Each hit has `ref` \
(pass it to `quote`), `label` (document › section › page: cite this), \
`source_path`, `score` (higher is better) and `text`, the passage as stored. To \
quote a passage to the user, call `quote`: it returns the exact words with a \
receipt. When the documents have a knowledge graph, `facts` lists the triplets the \
query names (`subject`, `relation`, `object`; `origin` "imported": from graph file \
`graph_file`, line `row`): facts, never quotations. A fact's `claimed_quote` is \
what its graph file claims as support, unchecked: never present it as a \
quotation; to quote the document, search for those words and call `quote`."""

QUOTE_DESCRIPTION = """\
Get the exact words of a source passage, with a receipt. Give `ref` alone for the \
whole passage, or `ref` and `words` (what you want to quote, even approximately) \
for the span of the source that matches them, looked for in that passage and the \
passages next to it. The result's `text` is the source's own wording and may \
differ from `words`: present `text` to the user verbatim, as a quotation (never \
reworded, shortened or merged with other text), and cite it with `label`. `match` \
says how it was found (ref, exact, normalized or fuzzy); `differs`, when set, names \
a number, unit or negation in which `words` differ from the source. When no \
passage matches the words the call fails: then do not present those words as a \
quotation."""

ASK_DESCRIPTION = """\
Answer a question from the documents with quoteproof's pipeline (retrieval, then \
quotes resolved against the sources). Returns the answer as quoteproof JSON \
(schema quoteproof.answer/1): `status` is "answered" or "refused" (the sources \
hold no answer; `refusal_reason` says why); `segments` in order are prose (written \
by the answering model, never a quotation) or quotes (`quote_id` names an entry of \
`quotes`). Each `quotes[].text` is verbatim source text with its receipt: present \
it verbatim and cite its `label`. `mode` picks how the answer is composed (only \
quote works without a language model; the others need the server started with one). \
`context` picks what the answering model is given; with knowledge-graph triplets, \
`facts` lists each triplet a sentence cites (`TID-n`): a fact, generated or \
imported, never a quotation; its `quote_id`, when set, names the verbatim quote \
that supports it. Every answer is recorded in the index's audit log."""

QuotePages = list[int] | None


class SearchHit(TypedDict):
    """One `search` result."""

    ref: str
    label: str
    source_path: str
    score: float
    text: str


class SearchResult(TypedDict):
    """The `search` tool's reply: passages best first, then the triplets the query
    names (empty without a knowledge graph)."""

    hits: list[SearchHit]
    facts: list[FactHit]


class QuoteResult(TypedDict):
    """A verbatim quote with its receipt (`text` is `document.text[start:end]`)."""

    text: str
    ref: str
    label: str
    doc_id: str
    doc_version: int
    source_path: str
    start: int
    end: int
    doc_sha256: str
    text_sha256: str
    pages: QuotePages
    match: str
    score: float
    claimed_text: str | None
    differs: str | None


def quote_result(quote: Quote) -> QuoteResult:
    """The `quote` tool's reply for a resolved quote: its fields that `QuoteResult`
    names, in that order (`pages` as a list)."""
    values = {name: getattr(quote, name) for name in QuoteResult.__annotations__}
    values["pages"] = None if quote.pages is None else list(quote.pages)
    return cast(QuoteResult, values)


def _require_words(text: str, name: str) -> None:
    """Raise `ToolError` when `text` (the argument `name`) holds no words."""
    if not text.strip():
        raise ToolError(f"the {name} is empty: say what to look for, in words")


class Tools:
    """The tools' bodies over an open index; synchronous, for one thread at a time.

    Each method raises `ToolError` with a message for the assistant when it cannot
    do what was asked.
    """

    def __init__(self, view: ScopedIndex, backend: Backend, threshold: float) -> None:
        self.view = view
        self.backend = backend
        self.threshold = threshold

    def _scope(self) -> str:
        collections = self.view.principal.collections
        return "the index" if collections is None else "collection " + ", ".join(collections)

    def search(self, query: str, top_k: int) -> SearchResult:
        """The `top_k` passages most relevant to `query`, best first, and the `top_k`
        knowledge-graph triplets it names (facts, never quotes)."""
        _require_words(query, "query")
        try:
            hits = self.view.search(query, top_k=top_k)
            facts = self.view.search_facts(query, top_k=top_k)
        except QuoteproofError as exc:
            raise ToolError(str(exc)) from exc
        passages = [
            SearchHit(
                ref=hit.chunk.ref,
                label=hit.chunk.label,
                source_path=hit.chunk.source_path,
                score=round(hit.score, 6),
                text=hit.chunk.text,
            )
            for hit in hits
        ]
        return SearchResult(hits=passages, facts=[fact_hit_to_dict(fact) for fact in facts])

    def quote(self, ref: str, words: str | None) -> QuoteResult:
        """The whole passage `ref`, or the span of it (or of its neighbours) that
        `words` match, resolved as the answer pipeline resolves a model's quote."""
        outcome = self.view.quote(ref, words, self.threshold)
        if outcome is None:
            # The same message whether the ref is unknown or outside the collections.
            raise ToolError(
                f"no passage with ref '{ref}' in {self._scope()}; use a ref from search"
            )
        if not isinstance(outcome, Quote):
            raise ToolError(
                f"{outcome.reason}; nothing was quoted. Quote the words as the passage "
                "has them (its text is in the search results), or give the ref alone "
                "for the whole passage"
            )
        return quote_result(outcome)

    def ask(
        self,
        question: str,
        mode: AnswerMode,
        context: ContextForm = "paragraphs",
        document: str | None = None,
    ) -> dict[str, Any]:
        """The answer to `question` as answer JSON, recorded in the audit log: in
        `mode`, the model given `context` (for `whole`, only `document` when given)."""
        options = AnswerOptions(
            mode=mode, threshold=self.threshold, context=context, document=document
        )
        try:
            check_question(question)
            asked = self.view.ask(question, self.backend, options)
        except QuoteproofError as exc:
            raise ToolError(str(exc)) from exc
        return self.view.sealed_answer(asked)


class McpServer(ClosedOnExit):
    """The MCP server of one index: `open` it, `run` it, close it (a context manager).

    The index lives on one worker thread from `open` to `close`.
    """

    def __init__(self, worker: ThreadPoolExecutor, tools: Tools) -> None:
        self._worker = worker
        self.tools = tools
        self.server = self._build()

    @classmethod
    def open(
        cls,
        location: str,
        backend: Backend,
        *,
        collections: tuple[str, ...] | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        audit_key: Path | None = None,
    ) -> McpServer:
        """Open the index at `location` on a new worker thread; its answers are
        signed with the key in `audit_key` (None: as `Index.open`).

        Raises `IndexNotFoundError` or `StoreError` (as `Index.open`) before anything
        is served.
        """
        worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quoteproof-mcp")
        who = Principal(MCP_USER, collections)
        try:
            view = worker.submit(ScopedIndex.open, location, who, audit_key=audit_key).result()
        except BaseException:
            worker.shutdown()
            raise
        return cls(worker, Tools(view, backend, threshold))

    def close(self) -> None:
        """Close the index (on its thread) and stop the thread."""
        try:
            self._worker.submit(self.tools.view.close).result()
        finally:
            self._worker.shutdown()

    def run(self) -> None:
        """Serve MCP over stdin/stdout until the client closes the connection (a line
        that cannot be read is answered with a JSON-RPC error: `mcp_stdio`)."""
        anyio.run(serve_stdio, self.server)

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.wrap_future(self._worker.submit(fn, *args))

    def _build(self) -> MCPServer[Any]:
        server: MCPServer[Any] = MCPServer(
            "quoteproof", instructions=INSTRUCTIONS, version=__version__
        )
        tools = self.tools
        read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

        async def search(
            query: Annotated[
                str,
                Field(max_length=MAX_QUESTION_CHARS, description="What to look for, in words."),
            ],
            top_k: Annotated[
                int,
                Field(
                    ge=1,
                    le=MAX_SEARCH_TOP_K,
                    description="How many passages (and at most how many facts) to return.",
                ),
            ] = 5,
        ) -> SearchResult:
            return await self._call(tools.search, query, top_k)

        async def quote(
            ref: Annotated[
                str,
                Field(
                    max_length=MAX_REF_CHARS,
                    description="A passage ref from search, e.g. k3m9qa.4.",
                ),
            ],
            words: Annotated[
                str | None,
                Field(
                    max_length=MAX_QUESTION_CHARS,
                    description="The words to quote from that passage (approximate is fine); "
                    "omit for the whole passage.",
                ),
            ] = None,
        ) -> QuoteResult:
            return await self._call(tools.quote, ref, words)

        async def ask(
            question: Annotated[
                str,
                Field(max_length=MAX_QUESTION_CHARS, description="The question, in words."),
            ],
            mode: Annotated[
                AnswerMode,
                Field(description=f"How the answer is composed: {mode_help()}"),
            ] = "quote",
            context: Annotated[
                ContextForm,
                Field(description=f"What the answering model is given: {context_help()}"),
            ] = "paragraphs",
            document: Annotated[
                str | None,
                Field(
                    max_length=MAX_DOCUMENT_CHARS,
                    description="With context whole: only this document (its id or file "
                    "path) instead of every document.",
                ),
            ] = None,
        ) -> dict[str, Any]:
            return await self._call(tools.ask, question, mode, context, document)

        write_audit = ToolAnnotations(read_only_hint=False, open_world_hint=False)
        for fn, title, description, hints in (
            (search, "Search the documents", SEARCH_DESCRIPTION, read_only),
            (quote, "Quote a passage verbatim", QUOTE_DESCRIPTION, read_only),
            (ask, "Answer with verbatim quotes", ASK_DESCRIPTION, write_audit),
        ):
            server.add_tool(fn, title=title, description=description, annotations=hints)
        return server
