"""The `quoteproof kg` commands: import a knowledge-graph file of triplets into a
collection, list the current triplets, retire some (through the local user's view,
`service.ScopedIndex`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from quoteproof.cli_app import _group, app, command, err, fail, json_out, note, open_view, say
from quoteproof.cli_options import CollectionsOption, IndexOption, MaxFileOption
from quoteproof.defaults import DEFAULT_COLLECTION, DEFAULT_INDEX, DEFAULT_MAX_FILE_MB
from quoteproof.render.visible import visible_line


def _graph_file(which: str) -> Any:
    """`--file`, a graph file by its name; its help starts with `which` triplets."""
    return typer.Option("--file", help=f"{which} this graph file (its name).", show_default=False)


kg_app = _group("Knowledge-graph triplets: import a graph file, list them, retire some.")
app.add_typer(kg_app, name="kg")


@command("import", kg_app)
def kg_import(
    file: Annotated[
        Path,
        typer.Argument(
            help="A CSV, TSV or JSON Lines file of triplets: columns subject, relation, "
            "object, and optionally document (an id, file or title), page and quote."
        ),
    ],
    index: IndexOption = DEFAULT_INDEX,
    collection: Annotated[
        str, typer.Option("--collection", help="The collection the triplets belong to.")
    ] = DEFAULT_COLLECTION,
    max_file_mb: MaxFileOption = DEFAULT_MAX_FILE_MB,
) -> None:
    """Import a graph file's triplets into a collection, all or nothing.

    Importing a file again replaces the triplets of its earlier import (by file
    name, in that collection): rows gone from it are retired. A bad file (not UTF-8,
    bad CSV, a missing column, an empty field, a document the collection lacks)
    imports nothing and exits 2 naming the line.
    """
    with open_view(index) as view:
        done = view.import_graph(file, collection, max_file_mb)
    if done.ignored_columns:
        note(f"columns not read: {', '.join(done.ignored_columns)}")
    outcome = done.outcome
    say(
        f"imported {done.triplets} triplet(s) from {done.graph_file} into '{done.collection}': "
        f"{outcome.added} added, {outcome.unchanged} unchanged, {outcome.retired} retired"
    )


@command("list", kg_app)
def kg_list(
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionsOption = None,
    graph_file: Annotated[str | None, _graph_file("Only the triplets of")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object.")] = False,
) -> None:
    """List the current triplets: id, collection, file:line, the triplet, its document.

    One line each (the count on stderr); --json prints {"triplets": [...]}.
    """
    with open_view(index) as view:
        triplets = view.triplets(collection, graph_file)
    if as_json:
        json_out({"triplets": [asdict(t) for t in triplets]}, indent=2)
        return
    for t in triplets:
        where = (
            "" if t.doc_id is None else f"  ({t.doc_id}{'' if t.page is None else f' p. {t.page}'})"
        )
        print(
            visible_line(
                f"{t.triplet_id}  {t.collection}  {t.graph_file}:{t.row}  "
                f"{t.subject} | {t.relation} | {t.object}{where}"
            )
        )
    say(f"{len(triplets)} triplet(s) in {index}", err)


@command("retire", kg_app)
def kg_retire(
    triplets: Annotated[
        list[str] | None,
        typer.Argument(help="Triplet ids (from `kg list`).", show_default=False),
    ] = None,
    index: IndexOption = DEFAULT_INDEX,
    graph_file: Annotated[str | None, _graph_file("Retire every triplet of")] = None,
    collection: CollectionsOption = None,
) -> None:
    """Retire triplets: they leave search and answers, and stay readable, so earlier
    answers that cite them still verify. Importing their file again brings them back."""
    if not triplets and graph_file is None:
        fail("name triplet ids, or a graph file with --file")
    with open_view(index) as view:
        count = view.retire_triplets(triplets or (), graph_file, collection)
    if count == 0:
        fail(f"no current triplet matches in {index} (ids and files: quoteproof kg list)")
    say(f"retired {count} triplet(s)")
