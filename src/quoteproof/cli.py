"""The `quoteproof` command: parses arguments, calls the library, renders the result.

Exit codes: 0 ok, 1 a failed check (a file that did not ingest, a quote that does
not verify), 2 a usage or input error (bad option, missing index, unreachable model).
The shared options are in `cli_options`, the wording of errors in `cli_messages`.
Each command imports the library when it runs, so that registering the commands
(`--help`, any start-up) loads none of it: option defaults come from
`quoteproof.defaults` (tests/test_cli_imports.py keeps it so).
Everything printed that comes from a document, a file name, a user or the index
goes through `render.visible` (control characters shown, never sent; never read as
rich markup), and JSON through `render.json.json_text`.
"""

from __future__ import annotations

import functools
import getpass
import json
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console

from quoteproof.cli_groups import with_option_groups
from quoteproof.cli_help import HelpCommand, HelpGroup
from quoteproof.cli_messages import cli_message, exit_code
from quoteproof.cli_options import (
    ANSWER,
    BACKEND,
    RETRIEVAL,
    AnswerChoices,
    AnswerFormat,
    AuditKeyOption,
    BackendOptions,
    CollectionsOption,
    EmbedModelOption,
    IndexOption,
    IngestFormat,
    RetrievalOptions,
    SearchFormat,
    ThresholdOption,
)
from quoteproof.defaults import (
    DEFAULT_COLLECTION,
    DEFAULT_INDEX,
    DEFAULT_JOBS,
    DEFAULT_MAX_FILE_MB,
    DEFAULT_OVERLAP_TOKENS,
    DEFAULT_PARSE_MEMORY_MB,
    DEFAULT_PARSE_SECONDS,
    DEFAULT_SEARCH_TOP_K,
    DEFAULT_SECTION_TOKENS,
    DEFAULT_THRESHOLD,
    DEFAULT_WINDOW_TOKENS,
)
from quoteproof.errors import QuoteproofError
from quoteproof.render.visible import visible_line

if TYPE_CHECKING:
    from quoteproof.audit import LogCheck
    from quoteproof.index import Index
    from quoteproof.receipts import AnswerCheck
    from quoteproof.retrieval.embed_index import EmbedReport
    from quoteproof.service import ScopedIndex

app = typer.Typer(
    help="Answers from your documents in which every quotation is verbatim source text.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=HelpGroup,
)
audit_app = typer.Typer(
    help="The audit log: every answer asked, append-only, hash-chained and signed.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=HelpGroup,
)
documents_app = typer.Typer(
    help="The documents in the index: list them, retire one.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=HelpGroup,
)
keys_app = typer.Typer(
    help="API keys for `quoteproof serve`.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=HelpGroup,
)
app.add_typer(documents_app, name="documents")
app.add_typer(audit_app, name="audit")
app.add_typer(keys_app, name="keys")
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

C = TypeVar("C", bound=Callable[..., Any])


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `message` as one line on stderr (`visible_line`) and exit with `code`."""
    err.print(f"error: {visible_line(message)}", markup=False, soft_wrap=True)
    raise typer.Exit(code)


def command(name: str | None = None, group: typer.Typer = app) -> Callable[[C], C]:
    """Register a command of `group`: its option groups spread into options
    (`cli_groups`), and any `QuoteproofError` it raises shown as one line
    (`cli_message`) ending the command with `exit_code`."""

    def register(func: C) -> C:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except QuoteproofError as exc:
                fail(cli_message(exc), exit_code(exc))

        group.command(name, cls=HelpCommand)(with_option_groups(run))
        return func

    return register


def _print_version(value: bool) -> None:
    """`--version`: print the package's version and exit 0."""
    if value:
        from quoteproof import __version__

        print(f"quoteproof {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """The options of `quoteproof` itself (before a command)."""


def local_user() -> str | None:
    """The name of the user running the command (for the audit log), or None when
    the system cannot tell (a container user without a passwd entry)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None


def local_view(idx: Index) -> ScopedIndex:
    """`idx` as the local user sees it: every collection (`--collection` narrows)."""
    from quoteproof.service import Principal, ScopedIndex

    return ScopedIndex(idx, Principal(local_user(), None))


@command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (walked recursively).")],
    index: IndexOption = DEFAULT_INDEX,
    max_file_mb: Annotated[
        float,
        typer.Option("--max-file-mb", min=0.001, help="Refuse files larger than this (MB)."),
    ] = DEFAULT_MAX_FILE_MB,
    parse_memory_mb: Annotated[
        float,
        typer.Option(
            "--parse-memory-mb",
            min=1,
            help="Memory (MB) one file may use to parse, plus 64 per MB of the file.",
        ),
    ] = DEFAULT_PARSE_MEMORY_MB,
    parse_seconds: Annotated[
        float,
        typer.Option(
            "--parse-seconds",
            min=1,
            help="CPU seconds one file may use to parse, plus 10 per MB of the file.",
        ),
    ] = DEFAULT_PARSE_SECONDS,
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
    embed: Annotated[
        bool | None,
        typer.Option(
            "--embed/--no-embed",
            help="Compute vectors for dense retrieval. Default: when the dense extra is installed.",
            show_default=False,
        ),
    ] = None,
    embed_model: EmbedModelOption = None,
    collection: Annotated[
        str, typer.Option("--collection", help="The collection the files belong to.")
    ] = DEFAULT_COLLECTION,
    format: Annotated[
        IngestFormat,
        typer.Option("--format", help="text (a summary on stderr) or json (on stdout)."),
    ] = IngestFormat.text,
) -> None:
    """Add PDF, DOCX, HTML, SPL XML, Markdown, text and CSV/JSON table files to the index.

    Unchanged files are skipped, changed ones become a new version. Each file is
    parsed in a child process limited in memory and CPU time by the file's size
    (--parse-memory-mb, --parse-seconds). A file that fails is reported with its
    cause and leaves nothing in the index; the others go on. In folders, files of
    other types, README-type files (README.md, SOURCES.md: name them to ingest them)
    and what is not a regular file (a pipe, a device) are skipped and listed. Then
    chunks without vectors are embedded (only new or changed ones). Exit code 1
    when any file failed; 130 when interrupted (it says what was done, and the
    index answers no question until an ingest finishes).
    """
    from quoteproof.index import Index, changed_any
    from quoteproof.ingest.chunking import ChunkSettings
    from quoteproof.ingest.files import source_name
    from quoteproof.ingest.parse_limits import ParseLimits
    from quoteproof.ingest.pipeline import IngestResult, IngestSettings, skipped_results
    from quoteproof.render.ingest import (
        IngestProgress,
        failures_table,
        ingest_to_dict,
        interrupted_message,
        skipped_table,
        summary_table,
    )
    from quoteproof.render.json import json_text
    from quoteproof.retrieval.embedder import dense_available
    from quoteproof.store.base import check_collection_name

    discovery = Index.discover_files(paths)
    files, skipped = discovery.files, skipped_results(discovery)
    settings = IngestSettings(
        max_file_mb=max_file_mb,
        ocr=ocr,
        chunking=ChunkSettings(section_tokens, window_tokens, overlap_tokens),
        limits=ParseLimits(parse_memory_mb, parse_seconds),
    )
    check_collection_name(collection)
    if embed is None:
        embed = dense_available()
        if not embed:
            note("no vectors computed: dense retrieval needs pip install 'quoteproof[dense]'")
    done: list[IngestResult] = []
    stage = "files"
    with Index.open(index, create=True) as idx:
        try:
            with IngestProgress(err, len(files)) as progress:

                def file_done(result: IngestResult) -> None:
                    done.append(result)
                    progress.file_done(result)

                idx.ingest_discovered(
                    files,
                    settings=settings,
                    jobs=jobs,
                    on_file=file_done,
                    collection=collection,
                    after=False,
                )
                elapsed = progress.elapsed
            # Vectors first (with their progress bar), so that the refusal threshold
            # is estimated on the evidence asks will use.
            stage = "vectors"
            embedding = embed_index(idx, embed_model) if embed else None
            stage = "threshold"
            idx.after_ingest(changed_any(done), embed=False)
        except KeyboardInterrupt:
            not_done = [source_name(path) for path in files[len(done) :]]
            message = interrupted_message(done, len(not_done), stage, idx.store.location)
            err.print(message, markup=False, soft_wrap=True)
            if format is IngestFormat.json:
                report = ingest_to_dict(
                    done + skipped, idx.store.location, idx.store.stats(), not_done, False
                )
                print(json_text(report, indent=2))
            raise typer.Exit(130) from None
        stats = idx.store.stats()
    results = done + skipped
    if format is IngestFormat.json:
        print(json_text(ingest_to_dict(results, idx.store.location, stats), indent=2))
    else:
        err.print(summary_table(results, elapsed, idx.store.location, stats, embedding))
        for table in (skipped_table(results), failures_table(results)):
            if table is not None:
                err.print(table)
    if any(result.status == "failed" for result in results):
        raise typer.Exit(1)


def embed_index(idx: Index, model: str | None) -> EmbedReport:
    """Embed the chunks that lack vectors with a progress bar."""
    from quoteproof.render.ingest import EmbedProgress

    with EmbedProgress(err) as progress:
        return idx.embed(model, on_start=progress.start, on_progress=progress.advance)


@command()
def show(
    ref: Annotated[str, typer.Argument(help="A chunk reference, e.g. k3m9qa.4.")],
    index: IndexOption = DEFAULT_INDEX,
    format: Annotated[SearchFormat, typer.Option("--format", help="text or json.")] = (
        SearchFormat.text
    ),
) -> None:
    """Print one chunk with its metadata: document, section, pages, source link."""
    from quoteproof.index import Index
    from quoteproof.render.chunk import chunk_to_dict, chunk_view
    from quoteproof.render.json import json_text

    with Index.open(index) as idx:
        chunk = idx.chunk(ref)
        if chunk is None:
            fail(f"no chunk with reference '{ref}' in {index}")
        document = idx.store.get_document(chunk.doc_id)
    if format is SearchFormat.text:
        out.print(chunk_view(chunk, document))
    else:
        print(json_text(chunk_to_dict(chunk, document), indent=2))


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
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            fail(f"{path}:{number}: bad query line: {exc}")
    return queries


@command()
def search(
    query: Annotated[str | None, typer.Argument(help="The search text.")] = None,
    index: IndexOption = DEFAULT_INDEX,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Hits to return.")] = (
        DEFAULT_SEARCH_TOP_K
    ),
    queries: Annotated[
        Path | None, typer.Option("--queries", help='JSONL file of {"id", "text"} lines.')
    ] = None,
    format: Annotated[SearchFormat, typer.Option("--format", help="text or json.")] = (
        SearchFormat.text
    ),
    collection: CollectionsOption = None,
    retrieval: RetrievalOptions = RETRIEVAL,
) -> None:
    """Show the passages most relevant to QUERY, or run a batch with --queries.

    With a reranker, at most --rerank-keep hits are shown.
    """
    from quoteproof.index import Index
    from quoteproof.render.hits import hit_to_dict, hits_table
    from quoteproof.render.json import json_text
    from quoteproof.terms import well_formed

    if (query is None) == (queries is None):
        fail("give either a QUERY or --queries FILE, not both or neither")
    if query is not None and not query.strip():
        fail('QUERY is empty: search for something, e.g. quoteproof search "hand hygiene"')
    query = well_formed(query) if query is not None else None  # undecodable bytes: U+FFFD
    with Index.open(index, retrieval=retrieval.settings()) as idx:
        if queries is not None:
            for query_id, text in _read_queries(queries):
                found = local_view(idx).search(text, top_k=top_k, collections=collection)
                batch = [hit_to_dict(h) for h in found]
                print(json_text({"id": query_id, "hits": batch}))
            return
        assert query is not None
        hits = local_view(idx).search(query, top_k=top_k, collections=collection)
    if format is SearchFormat.text:
        out.print(hits_table(query, hits) if hits else "No matching passages.")
    elif format is SearchFormat.json:
        data = {"query": query, "hits": [hit_to_dict(h, with_text=True) for h in hits]}
        print(json_text(data, indent=2))
    else:
        print(json_text({"id": None, "hits": [hit_to_dict(h) for h in hits]}))


@command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    index: IndexOption = DEFAULT_INDEX,
    choices: AnswerChoices = ANSWER,
    backend_options: BackendOptions = BACKEND,
    format: Annotated[
        AnswerFormat, typer.Option("--format", help="text, json, markdown or html.")
    ] = AnswerFormat.text,
    stream: Annotated[
        bool | None,
        typer.Option(
            "--stream/--no-stream",
            help="Show the answer as it is written (default: on a terminal, text format).",
            show_default=False,
        ),
    ] = None,
    show_cited: Annotated[
        bool,
        typer.Option("--show-cited", help="Show the passages each cited sentence cites."),
    ] = False,
    collection: CollectionsOption = None,
    retrieval: RetrievalOptions = RETRIEVAL,
    audit_key: AuditKeyOption = None,
) -> None:
    """Answer QUESTION from the index with verbatim quotes, recorded in the audit log.

    When the index is calibrated (`quoteproof calibrate`) and the best retrieval
    evidence is below its threshold, the answer is a refusal and no model is called.
    """
    from quoteproof.index import Index
    from quoteproof.render.html import render_html_page
    from quoteproof.render.json import json_text
    from quoteproof.render.live import answer_progress
    from quoteproof.render.markdown import render_markdown
    from quoteproof.render.terminal import render_terminal
    from quoteproof.service import make_backend

    if not question.strip():
        fail('QUESTION is empty: ask a question, e.g. quoteproof ask "What causes it?"')
    live = stream if stream is not None else format is AnswerFormat.text and out.is_terminal
    with Index.open(index, retrieval=retrieval.settings(), audit_key=audit_key) as idx:
        idx.signing_key()  # a key that cannot be read or made fails before the question
        backend = make_backend(backend_options)
        view = local_view(idx)
        with answer_progress(out if live else err, backend.name, live) as events:
            asked = view.ask(
                question, backend, choices.options(), collections=collection, events=events
            )
        sealed = view.sealed_answer(asked) if format is AnswerFormat.json else None
    answer = asked.answer
    if sealed is not None:
        print(json_text(sealed, indent=2, allow_nan=False))
    elif format is AnswerFormat.markdown:
        print(render_markdown(answer, show_cited=show_cited))
    elif format is AnswerFormat.html:
        print(render_html_page(answer, show_cited=show_cited), end="")
    else:
        render_terminal(answer, out, show_cited=show_cited)


def _read_labelled(path: Path) -> list[tuple[str, bool]]:
    """Read `{"question", "answerable"}` lines; exit 2 naming the line of any bad one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{path}: cannot read questions: {exc}")
    labelled = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict) or not isinstance(item.get("question"), str):
                raise ValueError('expected an object with a string "question"')
            if not isinstance(item.get("answerable"), bool):
                raise ValueError('expected "answerable": true or false')
            labelled.append((item["question"], item["answerable"]))
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            fail(f"{path}:{number}: bad question line: {exc}")
    return labelled


@command()
def calibrate(
    questions: Annotated[
        Path,
        typer.Argument(help='JSONL of {"question": str, "answerable": bool} lines.'),
    ],
    index: IndexOption = DEFAULT_INDEX,
    retrieval: RetrievalOptions = RETRIEVAL,
) -> None:
    """Derive the refusal threshold from labelled questions and store it in the index.

    `ask` then refuses, without calling a model, when the best retrieval evidence
    for a question is below it. Use the retrieval options `ask` will use: the
    threshold applies only to the same kind of evidence.
    """
    from quoteproof.index import Index
    from quoteproof.render.calibration import calibration_table

    labelled = _read_labelled(questions)
    with Index.open(index, retrieval=retrieval.settings()) as idx:
        with err.status(f"retrieving for {len(labelled)} questions…", spinner="dots"):
            calibration = idx.calibrate(labelled)
        out.print(calibration_table(calibration, idx.store.location))


def _recall_depths(values: list[str] | None) -> list[int]:
    """Parse `--recall-k` values (each a number or a comma-separated list); exit 2 on
    a bad one."""
    depths = []
    for value in values or ():
        for part in value.split(","):
            try:
                k = int(part.strip())
            except ValueError:
                fail(f"--recall-k: {part.strip()!r} is not a whole number")
            if k < 1:
                fail(f"--recall-k: {k} is not at least 1")
            depths.append(k)
    return depths


@command("eval")
def eval_set(
    evalset: Annotated[
        Path, typer.Argument(help="A question set: JSON Lines, see evalsets/README.md.")
    ],
    index: IndexOption = DEFAULT_INDEX,
    choices: AnswerChoices = ANSWER,
    backend_options: BackendOptions = BACKEND,
    recall_k: Annotated[
        list[str] | None,
        typer.Option(
            "--recall-k",
            help="Also report retrieval recall at these k (repeat, or 1,10,20); always at --top-k.",
            show_default=False,
        ),
    ] = None,
    sample_size: Annotated[
        int | None,
        typer.Option(
            "--sample",
            min=1,
            help="Ask only N questions: the first N, or N drawn with --seed.",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed", help="Draw the --sample at random with this seed.", show_default=False
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Where to write the run (default: eval-<set name>.json)."
        ),
    ] = None,
    html_report: Annotated[
        Path | None,
        typer.Option("--html", help="Where to write the HTML report (default: beside the JSON)."),
    ] = None,
    compare: Annotated[
        Path | None,
        typer.Option("--compare", help="An earlier run (its JSON): show what changed since."),
    ] = None,
    collection: CollectionsOption = None,
    retrieval: RetrievalOptions = RETRIEVAL,
) -> None:
    """Ask every question of a set and score the answers.

    Scores: the verbatim rate (every shown quote re-read from the index: must be
    100%), quote precision and recall against the gold quotes, citation accuracy,
    refusals of unanswerable and answerable questions, retrieval recall@k of the
    gold sources, latency and tokens. Writes the run as JSON and a self-contained
    HTML report. Exit code 1 when a shown quote is not verbatim or a question failed.
    """
    if seed is not None and sample_size is None:
        fail("--seed draws a random sample: give --sample N as well")
    from quoteproof.evaluation.assemble import assemble_report, report_paths, write_report
    from quoteproof.evaluation.compare import drift_lines
    from quoteproof.evaluation.evalset import read_evalset
    from quoteproof.evaluation.evalset import sample as sample_items
    from quoteproof.evaluation.report import load_report
    from quoteproof.evaluation.runner import AskOptions, run_eval
    from quoteproof.evaluation.terminal import EvalProgress
    from quoteproof.evaluation.terminal import summary_table as eval_summary_table
    from quoteproof.index import Index
    from quoteproof.service import make_backend

    depths = _recall_depths(recall_k)
    items = read_evalset(evalset)
    earlier = (str(compare), load_report(compare)) if compare is not None else None
    json_path, html_path = report_paths(evalset, output, html_report)
    with Index.open(index, retrieval=retrieval.settings()) as idx:
        options = AskOptions(
            backend=make_backend(backend_options),
            collections=tuple(collection) if collection else None,
            **asdict(choices.options()),
        )
        with EvalProgress(err) as progress:
            run = run_eval(
                idx,
                sample_items(items, sample_size, seed),
                options,
                recall_ks=depths,
                on_start=progress.start,
                on_item=progress.item_done,
            )
    result = assemble_report(
        run,
        set_path=evalset,
        set_items=len(items),
        index=idx.store.location,
        sample_size=sample_size,
        seed=seed,
        retriever=retrieval.retriever_name,
        earlier=earlier,
    )
    write_report(result.report, json_path, html_path)
    out.print(eval_summary_table(result.report))
    for line in drift_lines(result.drift) if result.drift is not None else ():
        out.print(visible_line(line), markup=False, soft_wrap=True)
    for line in result.problem_lines():
        err.print(visible_line(line), markup=False, soft_wrap=True)
    written = f"run written to {json_path}, report to {html_path}"
    err.print(visible_line(written), markup=False, soft_wrap=True)
    if result.failed:
        raise typer.Exit(1)


@command()
def verify(
    answer_file: Annotated[Path, typer.Argument(help="An answer saved with --format json.")],
    index: IndexOption = DEFAULT_INDEX,
    audit_key: AuditKeyOption = None,
) -> None:
    """Re-check a saved answer against the index (exit 1 if anything differs).

    Every quote's text, document, offsets, source path, label, section and pages are
    compared with the index's; passages that prose cites (cite and rationale modes)
    are checked too and marked "(cited passage)". The answer as a whole is checked
    against its seal (signed with the audit key) and its audit log entry.
    """
    from quoteproof.codec import answer_from_dict
    from quoteproof.codec.strict_json import loads_strict
    from quoteproof.errors import IndexNotFoundError
    from quoteproof.index import Index
    from quoteproof.seal import split_seal

    try:
        data = loads_strict(answer_file.read_text(encoding="utf-8"))
        answer_from_dict(split_seal(data)[0])  # a file that is no answer fails first
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        fail(f"{answer_file}: not a readable quoteproof answer: {exc}")
    try:
        opened = Index.open(index, audit_key=audit_key)
    except IndexNotFoundError:
        default = " (the default)" if index == DEFAULT_INDEX else ""
        fail(
            f"no index at {index}{default}: the quotes are checked against the index the "
            "answer came from; pass --index PATH (or set QUOTEPROOF_INDEX)"
        )
    with opened as idx:
        check = local_view(idx).verify_saved(data)
        missing_key = None if idx.verification_key() is not None else idx.audit_key_path
    _print_answer_check(check, missing_key)
    if not check.valid:
        raise typer.Exit(1)


def _print_answer_check(check: AnswerCheck, missing_key: Path | None) -> None:
    """Print `verify`'s verdict: a line per quote and its notes, the seal's lines
    (`missing_key`: where the audit key was looked for, when there was none), and
    the count."""

    def say(line: str) -> None:
        out.print(visible_line(line), markup=False, soft_wrap=True)

    for quote in check.quotes:
        name = f"{quote.quote_id} [{quote.ref}]" + (" (cited passage)" if quote.cited else "")
        say(f"ok      {name}" if quote.valid else f"INVALID {name}: {'; '.join(quote.problems)}")
        for note in quote.notes:
            say(f"note: {quote.quote_id} is from {note}")
    seal = check.seal
    for problem in seal.problems:
        say(f"INVALID answer: {problem}")
    if seal.sealed and not seal.problems:
        say("ok      answer: sealed, unchanged since it was made")
    for note in seal.notes:
        say(f"note: {note}")
    if seal.sealed and missing_key is not None:
        say(f"note: no audit key at {missing_key} (--audit-key)")
    invalid = sum(not quote.valid for quote in check.quotes)
    verdict = "changed since it was made" if seal.problems else "unchanged"
    whole = f"the answer is sealed and {verdict}" if seal.sealed else "the answer is unsealed"
    say(f"{len(check.quotes) - invalid} of {len(check.quotes)} quotes verified; {whole}")


@command("list", documents_app)
def documents_list(
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionsOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON object, as GET /v1/documents.")
    ] = False,
) -> None:
    """List the current documents: id, version, collection, format, file and title.

    One line each, by file (the count on stderr); --json prints the API's object.
    """
    from quoteproof.index import Index
    from quoteproof.render.json import json_text

    with Index.open(index) as idx:
        documents = local_view(idx).documents(collection)
    if as_json:
        print(json_text({"documents": [asdict(d) for d in documents]}, indent=2))
        return
    for d in documents:
        line = f"{d.doc_id}  v{d.version}  {d.collection}  {d.format}  {d.source_path}  {d.title}"
        print(visible_line(line))
    err.print(
        f"{len(documents)} document(s) in {visible_line(index)}", markup=False, soft_wrap=True
    )


@command("retire", documents_app)
def documents_retire(
    document: Annotated[
        str,
        typer.Argument(help="A document id (from `documents list`) or the file it was read from."),
    ],
    index: IndexOption = DEFAULT_INDEX,
) -> None:
    """Retire a document: it leaves search, answers and the document list.

    As the HTTP API's DELETE /v1/documents/ID: its stored versions stay readable,
    so earlier answers still verify; ingesting the file again makes it current again.
    """
    from quoteproof.index import Index

    with Index.open(index) as idx:
        view = local_view(idx)
        path = os.path.abspath(document)
        found = [d for d in view.documents() if document == d.doc_id or path == d.source_path]
        if not found or not view.retire(found[0].doc_id):
            if idx.store.get_document(document) or idx.store.latest_version(path):
                fail(
                    f"{document!r} is already retired in {index} "
                    "(ingest its file again to make it current)"
                )
            fail(f"no document {document!r} in {index} (ids and files: quoteproof documents list)")
    retired = found[0]
    print(visible_line(f"retired {retired.doc_id} v{retired.version} ({retired.source_path})"))


WitnessOption = Annotated[
    Path | None,
    typer.Option(
        "--witness",
        help="A file of heads exported with `audit head --export`: each entry they "
        "name must still be there, unchanged.",
        show_default=False,
    ),
]


def _verify_audit(index: str, audit_key: Path | None, witness: Path | None) -> LogCheck:
    """Verify the log of `index` with its audit key and the witness file; print every
    problem (`INVALID ...`) and note (`note: ...`)."""
    from quoteproof.audit import read_witness, verify_log
    from quoteproof.audit_key import read_audit_key
    from quoteproof.index import Index
    from quoteproof.signing_record import first_signed

    checkpoints = read_witness(witness) if witness is not None else []
    with Index.open(index, audit_key=audit_key) as idx:
        key = read_audit_key(idx.audit_key_path)
        signed_from = first_signed(idx.audit_key_path, idx.store.location)
        check = verify_log(idx.store, key, checkpoints, signed_from)
    for problem in check.problems:
        print(visible_line(f"INVALID {problem}"))
    for line in check.notes:
        print(visible_line(f"note: {line}"))
    if key is None and check.entries:
        print(visible_line(f"note: no audit key at {idx.audit_key_path} (--audit-key)"))
    return check


@command("verify", audit_app)
def audit_verify(
    index: IndexOption = DEFAULT_INDEX,
    audit_key: AuditKeyOption = None,
    witness: WitnessOption = None,
) -> None:
    """Check that no audit entry was edited, added, deleted or cut off; exit 1 if one was.

    Every entry's hash chain and signature (made with the audit key) is checked,
    and with --witness the log against the heads exported to that file.
    """
    if witness is not None and not witness.is_file():
        fail(f"{witness}: no such witness file")
    check = _verify_audit(index, audit_key, witness)
    where = visible_line(index)
    if not check.intact:
        print(f"audit log of {where}: {len(check.problems)} problem(s) in {check.entries} entries")
        raise typer.Exit(1)
    print(f"audit log of {where}: {check.entries} entries, chain intact (head {check.head[:16]}…)")


@command("head", audit_app)
def audit_head(
    index: IndexOption = DEFAULT_INDEX,
    audit_key: AuditKeyOption = None,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="Append the head to this witness file, kept where the index's writers "
            "cannot change it.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Print the audit log's head: its number of entries and the last entry's hash.

    The log is verified first (as `audit verify`, against the heads already in the
    --export file): the head of a log that does not verify is never exported (exit 1).
    """
    from quoteproof.audit import append_witness

    check = _verify_audit(index, audit_key, export)
    if not check.intact:
        print(f"audit log of {visible_line(index)}: not intact, no head exported")
        raise typer.Exit(1)
    print(f"{check.entries} {check.head}")
    if export is not None:
        try:
            append_witness(export, check.checkpoint(), index)
        except OSError as exc:
            fail(f"{export}: cannot append the head: {exc}")
        err.print(f"head of {check.entries} entries appended to {visible_line(str(export))}")


@command("export", audit_app)
def audit_export(
    index: IndexOption = DEFAULT_INDEX,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Write every audit entry as one JSON line (chain fields and the answer)."""
    from quoteproof.audit import export_lines
    from quoteproof.index import Index

    with Index.open(index) as idx:
        lines = list(export_lines(idx.store))
    text = "".join(line + "\n" for line in lines)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        err.print(f"{len(lines)} entries written to {visible_line(str(output))}", markup=False)


@command("create", keys_app)
def keys_create(
    collection: Annotated[
        list[str],
        typer.Option("--collection", help="A collection the key may see (repeat for several)."),
    ],
    name: Annotated[str, typer.Option("--name", help="Who or what the key is for.")] = "api",
    index: IndexOption = DEFAULT_INDEX,
) -> None:
    """Create an API key for COLLECTIONs and print it (it is shown only this once)."""
    from quoteproof.index import Index
    from quoteproof.keys import create_key

    with Index.open(index) as idx:
        token, key = create_key(idx.store, name, collection)
    print(token)
    err.print(
        f"key {key.key_id} ({visible_line(key.name)}) for {', '.join(key.collections)}: "
        "store it now, it cannot be shown again",
        markup=False,
    )


@command("list", keys_app)
def keys_list(index: IndexOption = DEFAULT_INDEX) -> None:
    """List the keys (never their secrets)."""
    from quoteproof.index import Index

    with Index.open(index) as idx:
        keys = idx.store.list_api_keys()
    for key in keys:
        state = "revoked" if key.revoked else "active"
        collections = ",".join(key.collections)
        print(visible_line(f"{key.key_id}  {state:<7}  {key.created}  {key.name}  {collections}"))


@command("revoke", keys_app)
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key id (from `keys list`).")],
    index: IndexOption = DEFAULT_INDEX,
) -> None:
    """Revoke a key: it stops working at once."""
    from quoteproof.index import Index

    with Index.open(index) as idx:
        if not idx.store.revoke_api_key(key_id):
            fail(f"no key {key_id!r} in {index}")
    print(f"key {visible_line(key_id)} revoked")


@command("mcp")
def mcp_server(
    index: IndexOption = DEFAULT_INDEX,
    backend_options: BackendOptions = BACKEND,
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    collection: CollectionsOption = None,
    audit_key: AuditKeyOption = None,
) -> None:
    """Serve the index to desktop assistants over MCP (stdio): search, quote, ask.

    The quote tool returns the source's own words with a receipt, never the
    assistant's; answers asked through the ask tool are recorded in the audit log
    (user "mcp"). With --collection every tool sees only those collections.
    """
    from quoteproof.service import make_backend
    from quoteproof.store.base import check_collection_name

    try:
        from quoteproof.server.mcp import McpServer
    except ImportError as exc:
        if not (exc.name or "").startswith("mcp"):
            raise
        fail("quoteproof mcp needs the MCP SDK: pip install 'mcp>=2'")
    collections = tuple(dict.fromkeys(map(check_collection_name, collection or ())))
    backend = make_backend(backend_options)
    server = McpServer.open(
        index,
        backend,
        collections=collections or None,
        threshold=threshold,
        audit_key=audit_key,
    )
    with server:
        server.run()


@command()
def serve(
    index: IndexOption = DEFAULT_INDEX,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port.")] = 8000,
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth",
            help="Serve without API keys, every collection to everyone (loopback hosts only).",
        ),
    ] = False,
    backend_options: BackendOptions = BACKEND,
    max_upload_mb: Annotated[
        float, typer.Option("--max-upload-mb", min=0.001, help="Most one upload may carry.")
    ] = 50.0,
    max_body_mb: Annotated[
        float,
        typer.Option(
            "--max-body-mb",
            min=0.001,
            help="Most any other request may carry (a question, an answer to verify).",
        ),
    ] = 2.0,
    upload_dir: Annotated[
        Path | None,
        typer.Option(
            "--upload-dir",
            help="Where uploaded files are kept (default: 'uploads' beside the index "
            "directory; a temporary folder for PostgreSQL).",
        ),
    ] = None,
    embed: Annotated[
        bool | None,
        typer.Option(
            "--embed/--no-embed",
            help="Compute vectors of uploads for dense retrieval. Default: when the dense "
            "extra is installed.",
            show_default=False,
        ),
    ] = None,
    audit_key: AuditKeyOption = None,
) -> None:
    """Serve the HTTP API (/v1/, OpenAPI at /docs) and the web page.

    Every request needs an API key (`quoteproof keys create`) and sees only that
    key's collections; --no-auth is allowed on a loopback address only.
    """
    from quoteproof.index import Index
    from quoteproof.server import is_loopback_host

    if no_auth and not is_loopback_host(host):
        fail(
            f"--no-auth serves every document to anyone who can reach {host}; it is allowed "
            "only on a loopback address (127.0.0.1, ::1, localhost)"
        )
    try:
        import uvicorn

        from quoteproof.server.app import create_app
        from quoteproof.server.security import LOOPBACK_NAMES
        from quoteproof.server.state import INGEST_HOLD_ENV, ServerConfig
    except ImportError as exc:
        fail(
            f"quoteproof serve needs the server extra ({exc.name} is missing): "
            "pip install 'quoteproof[server]'"
        )
    with Index.open(index, create=True, audit_key=audit_key) as idx:
        has_keys = bool(idx.store.list_api_keys())
        idx.signing_key()  # a key that cannot be read or made fails now, not per answer
    config = ServerConfig(
        index=index,
        auth=not no_auth,
        **backend_options.spec_fields(),
        max_upload_mb=max_upload_mb,
        max_body_mb=max_body_mb,
        upload_dir=upload_dir,
        embed=embed,
        allowed_hosts=(*LOOPBACK_NAMES, host) if no_auth else None,
        audit_key=audit_key,
        ingest_hold=Path(hold) if (hold := os.environ.get(INGEST_HOLD_ENV)) else None,
    )
    server_app = create_app(config)
    server_app.state.quoteproof.backend()  # a bad --llm/--model fails now, not per request
    if no_auth:
        note("no authentication: every request sees every collection")
    elif not has_keys:
        note(
            f"the index {index} has no API keys yet, so every request will be refused; "
            f"create one with: quoteproof keys create --collection NAME --index {index}"
        )
    uvicorn.run(server_app, host=host, port=port, log_level="info")


def note(message: str) -> None:
    """Print an informational line on stderr (`note: ...`, `visible_line`)."""
    err.print(f"note: {visible_line(message)}", markup=False, soft_wrap=True)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """Show quoteproof's retrieval notices as `note:` lines; others as Python does."""
    from quoteproof.retrieval.retriever import RetrievalNotice

    if issubclass(category, RetrievalNotice):
        note(str(message))
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


def main() -> None:
    """Console-script entry point."""
    warnings.showwarning = _show_warning
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
