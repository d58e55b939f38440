"""The `quoteproof` command: parses arguments, calls the library, renders the result.

Exit codes: 0 ok, 1 a failed check (a file that did not ingest, a quote that does
not verify), 2 a usage or input error (bad option, missing index, unreachable model).
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from quoteproof.errors import QuoteproofError
from quoteproof.index import DEFAULT_ASK_TOP_K, DEFAULT_INDEX, DEFAULT_SEARCH_TOP_K, Index
from quoteproof.ingest.chunking import (
    DEFAULT_OVERLAP_TOKENS,
    DEFAULT_SECTION_TOKENS,
    DEFAULT_WINDOW_TOKENS,
    ChunkSettings,
)
from quoteproof.ingest.files import DEFAULT_MAX_FILE_MB
from quoteproof.ingest.pipeline import DEFAULT_JOBS, IngestSettings
from quoteproof.llm.openai import DEFAULT_TIMEOUT_S
from quoteproof.llm.select import make_backend
from quoteproof.quoting.resolve import DEFAULT_THRESHOLD
from quoteproof.render.chunk import chunk_to_dict, chunk_view
from quoteproof.render.hits import hit_to_dict, hits_table
from quoteproof.render.ingest import IngestProgress, failures_table, summary_table
from quoteproof.render.json import answer_from_dict, render_json
from quoteproof.render.markdown import render_markdown
from quoteproof.render.terminal import render_terminal

app = typer.Typer(
    help="Answers from your documents in which every quotation is verbatim source text.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

IndexOption = Annotated[
    Path, typer.Option("--index", help="Index directory.", envvar="QUOTEPROOF_INDEX")
]


class AnswerFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"


class SearchFormat(StrEnum):
    text = "text"
    json = "json"
    jsonl = "jsonl"


class LLMName(StrEnum):
    extractive = "extractive"
    openai = "openai"


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `message` as one line on stderr and exit with `code`."""
    err.print(f"error: {message}", markup=False, soft_wrap=True)
    raise typer.Exit(code)


def open_index(location: Path, *, create: bool = False) -> Index:
    """Open the index or exit 2 with a one-line reason."""
    try:
        return Index.open(location, create=create)
    except QuoteproofError as exc:
        fail(str(exc))


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (walked recursively).")],
    index: IndexOption = Path(DEFAULT_INDEX),
    max_file_mb: Annotated[
        float,
        typer.Option("--max-file-mb", min=0.001, help="Refuse files larger than this (MB)."),
    ] = DEFAULT_MAX_FILE_MB,
    ocr: Annotated[
        bool,
        typer.Option("--ocr", help="Run Tesseract on PDF pages without a text layer."),
    ] = False,
    section_tokens: Annotated[
        int, typer.Option("--section-tokens", min=1, help="A section up to this size is one chunk.")
    ] = DEFAULT_SECTION_TOKENS,
    window_tokens: Annotated[
        int, typer.Option("--window-tokens", min=1, help="Window size for longer sections.")
    ] = DEFAULT_WINDOW_TOKENS,
    overlap_tokens: Annotated[
        int, typer.Option("--overlap-tokens", min=0, help="Tokens two windows share.")
    ] = DEFAULT_OVERLAP_TOKENS,
    jobs: Annotated[
        int, typer.Option("--jobs", min=1, help="Worker processes that parse files.")
    ] = DEFAULT_JOBS,
) -> None:
    """Add PDF, DOCX, HTML, SPL XML, Markdown and text files to the index.

    Unchanged files are skipped, changed ones become a new version. A file that
    fails is reported with its cause and leaves nothing in the index; the others
    go on. Exit code 1 when any file failed.
    """
    try:
        files = Index.discover(paths)
        settings = IngestSettings(
            max_file_mb=max_file_mb,
            ocr=ocr,
            chunking=ChunkSettings(section_tokens, window_tokens, overlap_tokens),
        )
    except (QuoteproofError, ValueError) as exc:
        fail(str(exc))
    with open_index(index, create=True) as idx:
        with IngestProgress(err, len(files)) as progress:
            results = idx.ingest(files, settings=settings, jobs=jobs, on_file=progress.file_done)
            elapsed = progress.elapsed
        stats = idx.store.stats()
    err.print(summary_table(results, elapsed, str(index), stats))
    failures = failures_table(results)
    if failures is not None:
        err.print(failures)
        raise typer.Exit(1)


@app.command()
def show(
    ref: Annotated[str, typer.Argument(help="A chunk reference, e.g. k3m9qa.4.")],
    index: IndexOption = Path(DEFAULT_INDEX),
    format: Annotated[SearchFormat, typer.Option("--format", help="text or json.")] = (
        SearchFormat.text
    ),
) -> None:
    """Print one chunk with its metadata: document, section, pages, source link."""
    with open_index(index) as idx:
        chunk = idx.chunk(ref)
        if chunk is None:
            fail(f"no chunk with reference '{ref}' in {index}")
        document = idx.store.get_document(chunk.doc_id)
    if format is SearchFormat.text:
        out.print(chunk_view(chunk, document))
    else:
        print(json.dumps(chunk_to_dict(chunk, document), ensure_ascii=False, indent=2))


def _read_queries(path: Path) -> list[tuple[Any, str]]:
    """Read `{"id", "text"}` lines; exit 2 naming the line of any bad one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{path}: cannot read queries: {exc}")
    queries = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                raise ValueError('expected an object with a string "text"')
            queries.append((item.get("id"), item["text"]))
        except ValueError as exc:
            fail(f"{path}:{number}: bad query line: {exc}")
    return queries


@app.command()
def search(
    query: Annotated[str | None, typer.Argument(help="The search text.")] = None,
    index: IndexOption = Path(DEFAULT_INDEX),
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Hits to return.")] = (
        DEFAULT_SEARCH_TOP_K
    ),
    queries: Annotated[
        Path | None, typer.Option("--queries", help='JSONL file of {"id", "text"} lines.')
    ] = None,
    format: Annotated[SearchFormat, typer.Option("--format")] = SearchFormat.text,
) -> None:
    """Show the passages most relevant to QUERY, or run a batch with --queries."""
    if (query is None) == (queries is None):
        fail("give either a QUERY or --queries FILE, not both or neither")
    with open_index(index) as idx:
        if queries is not None:
            for query_id, text in _read_queries(queries):
                batch = [hit_to_dict(h) for h in idx.search(text, top_k=top_k)]
                print(json.dumps({"id": query_id, "hits": batch}, ensure_ascii=False))
            return
        assert query is not None
        hits = idx.search(query, top_k=top_k)
    if format is SearchFormat.text:
        out.print(hits_table(query, hits) if hits else "No matching passages.")
    elif format is SearchFormat.json:
        data = {"query": query, "hits": [hit_to_dict(h, with_text=True) for h in hits]}
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(json.dumps({"id": None, "hits": [hit_to_dict(h) for h in hits]}, ensure_ascii=False))


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    index: IndexOption = Path(DEFAULT_INDEX),
    llm: Annotated[
        LLMName | None,
        typer.Option(
            "--llm",
            envvar="QUOTEPROOF_LLM",
            help="Backend: extractive (no model) or openai (any OpenAI-compatible server). "
            "Default: openai when a model is named, else extractive.",
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", envvar="OPENAI_BASE_URL", help="Server URL.")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", envvar="QUOTEPROOF_MODEL", help="Model name.")
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", envvar="OPENAI_API_KEY", help="API key.", show_default=False),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1.0, help="Seconds per model request.")
    ] = DEFAULT_TIMEOUT_S,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Sources given to the model.")] = (
        DEFAULT_ASK_TOP_K
    ),
    threshold: Annotated[
        float,
        typer.Option("--threshold", min=0.0, max=100.0, help="Fuzzy quote match score 0-100."),
    ] = DEFAULT_THRESHOLD,
    format: Annotated[AnswerFormat, typer.Option("--format")] = AnswerFormat.text,
) -> None:
    """Answer QUESTION from the index with verbatim quotes."""
    with open_index(index) as idx:
        try:
            backend = make_backend(
                llm.value if llm else None,
                model=model,
                base_url=base_url,
                api_key=api_key,
                timeout=timeout,
            )
            with err.status(f"asking {backend.name}…", spinner="dots"):
                answer = idx.ask(question, backend=backend, top_k=top_k, threshold=threshold)
        except QuoteproofError as exc:
            fail(str(exc))
    if format is AnswerFormat.json:
        print(render_json(answer))
    elif format is AnswerFormat.markdown:
        print(render_markdown(answer))
    else:
        render_terminal(answer, out)


@app.command()
def verify(
    answer_file: Annotated[Path, typer.Argument(help="An answer saved with --format json.")],
    index: IndexOption = Path(DEFAULT_INDEX),
) -> None:
    """Re-check every quote of a saved answer against the index (exit 1 if any fails)."""
    try:
        answer = answer_from_dict(json.loads(answer_file.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        fail(f"{answer_file}: not a readable quoteproof answer: {exc}")
    with open_index(index) as idx:
        checks = idx.verify(answer)
    for check in checks:
        if check.valid:
            out.print(f"ok      {check.quote_id} [{check.ref}]", markup=False)
        else:
            out.print(
                f"INVALID {check.quote_id} [{check.ref}]: {'; '.join(check.problems)}", markup=False
            )
    invalid = sum(not c.valid for c in checks)
    out.print(f"{len(checks) - invalid} of {len(checks)} quotes verified", markup=False)
    if invalid:
        raise typer.Exit(1)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
