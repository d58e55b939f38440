"""The `quoteproof` commands over an index's documents and answers: ingest, show,
search, ask, calibrate, eval and verify (`cli_app` registers them). Each translates
its options into service calls and renders what they return."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from quoteproof.cli_app import command, err, fail, json_out, note, open_view, out, say
from quoteproof.cli_command_options import EVAL, INGEST, EvalOptions, IngestOptions
from quoteproof.cli_options import (
    ANSWER,
    BACKEND,
    GRADER,
    RETRIEVAL,
    AnswerChoices,
    AnswerFormat,
    AuditKeyOption,
    BackendOptions,
    CollectionsOption,
    EmbedModelOption,
    GraderOptions,
    IndexOption,
    RetrievalOptions,
    TextOrJson,
)
from quoteproof.defaults import DEFAULT_COLLECTION, DEFAULT_INDEX, DEFAULT_SEARCH_TOP_K

if TYPE_CHECKING:
    from quoteproof.service import Asked
    from quoteproof.service.ingest import IngestRun


@command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (walked recursively).")],
    index: IndexOption = DEFAULT_INDEX,
    options: IngestOptions = INGEST,
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
        TextOrJson,
        typer.Option("--format", help="text (a summary on stderr) or json (on stdout)."),
    ] = TextOrJson.text,
) -> None:
    """Add document files to the index (an unsupported file's error lists the formats).

    Unchanged files are skipped, changed ones become a new version. Each file is
    parsed in a child process limited in memory and CPU time by the file's size
    (--parse-memory-mb, --parse-seconds). A file that fails is reported with its
    cause and leaves nothing in the index; the others go on. In folders, files of
    other types, README-type files (README.md, SOURCES.md: name them to ingest them)
    and what is not a regular file (a pipe, a device) are skipped and listed. Then
    chunks without vectors are embedded (only new or changed ones). The summary
    lists the files added or updated, so that a stray file of a folder shows. Exit
    code 1 when any file failed; 130 when interrupted (it says what was done, and the
    index answers no question until an ingest finishes).
    """
    from quoteproof.render import ingest as shown
    from quoteproof.service.ingest import IngestRun

    settings = options.settings(collection)
    run = IngestRun(index, paths, settings, jobs=options.jobs, embed=embed, embed_model=embed_model)
    if embed is None and not run.embeds:
        note("no vectors computed: dense retrieval needs pip install 'quoteproof[dense]'")
    with run:
        try:
            with shown.IngestProgress(err, len(run.files)) as progress:
                run.store_files(progress.file_done)
                elapsed = progress.elapsed
            embedding = _embed(run) if run.embeds else None
            run.finish()
        except KeyboardInterrupt:
            not_done = run.not_done
            say(shown.interrupted_message(run.done, len(not_done), run.stage, run.location), err)
            if format is TextOrJson.json:
                report = shown.ingest_to_dict(
                    run.results, run.location, run.stats(), not_done, False
                )
                json_out(report, indent=2)
            raise typer.Exit(130) from None
        stats = run.stats()
        threshold = run.refusal_threshold() if format is TextOrJson.text else None
    results = run.results
    if format is TextOrJson.json:
        json_out(shown.ingest_to_dict(results, run.location, stats), indent=2)
    else:
        err.print(shown.summary_table(results, elapsed, run.location, stats, embedding, threshold))
        for listed in (shown.ingested_table(results), shown.skipped_table(results)):
            if listed is not None:
                err.print(listed)
    if any(result.status == "failed" for result in results):
        raise typer.Exit(1)


def _embed(run: IngestRun) -> Any:
    """Embed the chunks that lack vectors with a progress bar."""
    from quoteproof.render.ingest import EmbedProgress

    with EmbedProgress(err) as progress:
        return run.embed(progress.start, progress.advance)


@command()
def show(
    ref: Annotated[str, typer.Argument(help="A chunk reference, e.g. k3m9qa.4.")],
    index: IndexOption = DEFAULT_INDEX,
    format: Annotated[
        TextOrJson,
        typer.Option("--format", help="text, json, or jsonl (the same JSON on one line)."),
    ] = TextOrJson.text,
) -> None:
    """Print one chunk with its metadata: document, section, pages, source link."""
    from quoteproof.render.chunk import chunk_to_dict, chunk_view

    with open_view(index) as view:
        chunk = view.chunk(ref)
        if chunk is None:
            fail(f"no chunk with reference '{ref}' in {index}")
        document = view.document(chunk.doc_id)
    if format is TextOrJson.text:
        out.print(chunk_view(chunk, document))
    else:
        indent = 2 if format is TextOrJson.json else None
        json_out(chunk_to_dict(chunk, document), indent=indent)


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
    format: Annotated[
        TextOrJson,
        typer.Option(
            "--format",
            help="text (a table), json (the hits with their text, and the facts) or "
            "jsonl (one line of the hits' refs and scores, as --queries writes).",
        ),
    ] = TextOrJson.text,
    collection: CollectionsOption = None,
    retrieval: RetrievalOptions = RETRIEVAL,
) -> None:
    """Show the passages most relevant to QUERY, or run a batch with --queries.

    With a reranker, at most --rerank-keep hits are shown. When the index has a
    knowledge graph (`kg import`), the triplets QUERY names follow the passages,
    labelled as imported facts ("facts" in the JSON, empty without a graph), never
    as quotes.
    """
    from quoteproof.render.hits import fact_hit_to_dict, facts_table, hit_to_dict, hits_table
    from quoteproof.service import read_queries, well_formed

    if (query is None) == (queries is None):
        fail("give either a QUERY or --queries FILE, not both or neither")
    if query is not None and not query.strip():
        fail('QUERY is empty: search for something, e.g. quoteproof search "hand hygiene"')
    batch = read_queries(queries) if queries is not None else []
    text = well_formed(query or "")  # undecodable bytes: U+FFFD
    with open_view(index, retrieval=retrieval.settings()) as view:
        for query_id, each in batch:
            found = view.search(each, top_k=top_k, collections=collection)
            json_out({"id": query_id, "hits": [hit_to_dict(h) for h in found]})
        if queries is not None:
            return
        hits = view.search(text, top_k=top_k, collections=collection)
        facts = view.search_facts(text, top_k=top_k, collections=collection)
        empty = not hits and not view.document_count()
    if format is TextOrJson.text:
        none = f"No matching passages{': the index holds no documents' if empty else ''}."
        out.print(hits_table(text, hits) if hits else none)
        if facts:
            out.print(facts_table(facts))
    elif format is TextOrJson.json:
        shown = [hit_to_dict(h, with_text=True) for h in hits]
        matched = [fact_hit_to_dict(f) for f in facts]
        json_out({"query": text, "hits": shown, "facts": matched}, indent=2)
    else:
        json_out({"id": None, "hits": [hit_to_dict(h) for h in hits]})


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

    When the best retrieval evidence is below the refusal threshold (set by `ingest`
    from off-topic questions, or fitted to your own by `quoteproof calibrate`), or a
    name, number or population the question asks about is in no retrieved source, the
    answer is a refusal and no model is called.
    """
    from quoteproof.render.live import answer_progress
    from quoteproof.service import check_question, make_backend

    check_question(question)
    live = stream if stream is not None else format is AnswerFormat.text and out.is_terminal
    with open_view(index, retrieval=retrieval.settings(), audit_key=audit_key) as view:
        view.check_signing_key()  # one that cannot be read or made fails before the question
        backend = make_backend(backend_options)
        with answer_progress(out if live else err, backend.name, live) as events:
            asked = view.ask(
                question, backend, choices.options(), collections=collection, events=events
            )
        sealed = view.sealed_answer(asked) if format is AnswerFormat.json else None
    if sealed is not None:
        json_out(sealed, indent=2, allow_nan=False)
    else:
        _print_answer(asked, format, show_cited)


def _print_answer(asked: Asked, format: AnswerFormat, show_cited: bool) -> None:
    """Print the answer of `asked` in `format` (text, Markdown or HTML), loading only
    that format's renderer."""
    answer = asked.answer
    if format is AnswerFormat.markdown:
        from quoteproof.render.markdown import render_markdown

        print(render_markdown(answer, show_cited=show_cited))
    elif format is AnswerFormat.html:
        from quoteproof.render.html import render_html_page

        print(render_html_page(answer, show_cited=show_cited), end="")
    else:
        from quoteproof.render.terminal import render_terminal

        render_terminal(answer, out, show_cited=show_cited)


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
    from quoteproof.render.calibration import calibration_table
    from quoteproof.service import read_labelled

    labelled = read_labelled(questions)
    with open_view(index, retrieval=retrieval.settings()) as view:
        with err.status(f"retrieving for {len(labelled)} questions…", spinner="dots"):
            calibration = view.calibrate(labelled)
        out.print(calibration_table(calibration, view.location))


def _recall_depths(values: list[str] | None) -> tuple[int, ...]:
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
    return tuple(depths)


@command("eval")
def eval_set(
    evalset: Annotated[
        Path, typer.Argument(help="A question set: JSON Lines, see evalsets/README.md.")
    ],
    index: IndexOption = DEFAULT_INDEX,
    choices: AnswerChoices = ANSWER,
    backend_options: BackendOptions = BACKEND,
    report: EvalOptions = EVAL,
    collection: CollectionsOption = None,
    retrieval: RetrievalOptions = RETRIEVAL,
    grader: GraderOptions = GRADER,
) -> None:
    """Ask every question of a set and score the answers.

    Scores: the verbatim rate (every shown quote re-read from the index: must be
    100%), quote precision and recall against the gold quotes, citation accuracy,
    refusals of unanswerable and answerable questions, the answers' faithfulness
    (overall and per mode), retrieval recall@k of the gold sources, latency and
    tokens. With --grader, a second model grades every
    answer to a question with a gold_answer (1-5 and CORRECT/INCORRECT: accuracy,
    the grade distribution, the worst cases; docs/grading.md). Writes the run as
    JSON and a self-contained HTML report. Exit code 1 when a shown quote is not
    verbatim or a question failed.
    """
    if report.seed is not None and report.sample_size is None:
        fail("--seed draws a random sample: give --sample N as well")
    from quoteproof.render.evaluation import (
        EvalProgress,
        drift_lines,
        faithfulness_lines,
        grading_lines,
        summary_table,
    )
    from quoteproof.service import make_backend
    from quoteproof.service.evaluate import EvalPlan, make_grader

    plan = EvalPlan(report.request(evalset, _recall_depths(report.recall_k)))
    grader_spec = grader.spec()
    grading = make_grader(grader_spec) if grader_spec is not None else None
    with open_view(index, retrieval=retrieval.settings()) as view, EvalProgress(err) as progress:
        done = plan.run(
            view,
            make_backend(backend_options),
            choices.options(),
            collections=tuple(collection) if collection else None,
            retriever=retrieval.settings().retriever,
            on_start=progress.start,
            on_item=progress.item_done,
            grader=grading,
        )
    result = done.result
    out.print(summary_table(result.report))
    for line in [*faithfulness_lines(result.report), *grading_lines(result.report)]:
        say(line)
    for line in drift_lines(result.drift) if result.drift is not None else ():
        say(line)
    for line in result.problem_lines():
        say(line, err)
    say(f"run written to {done.json_path}, report to {done.html_path}", err)
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
    from quoteproof.errors import IndexNotFoundError
    from quoteproof.render.verdict import answer_check_lines
    from quoteproof.service import read_saved_answer

    data = read_saved_answer(answer_file)
    try:
        opened = open_view(index, audit_key=audit_key)
    except IndexNotFoundError:
        default = " (the default)" if index == DEFAULT_INDEX else ""
        fail(
            f"no index at {index}{default}: the quotes are checked against the index the "
            "answer came from; pass --index PATH (or set QUOTEPROOF_INDEX)"
        )
    with opened as view:
        check = view.verify_saved(data)
        missing_key = view.missing_verification_key()
    for line in answer_check_lines(check, missing_key):
        say(line)
    if not check.valid:
        raise typer.Exit(1)
