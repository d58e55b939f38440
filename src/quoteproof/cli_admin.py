"""The operator's `quoteproof` commands: `documents` (list, retire), `audit`
(verify, head, export), `keys` (create, list, revoke) and `stats`, through
`service.admin.Admin` and the local user's view."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from quoteproof.cli_app import (
    audit_app,
    command,
    documents_app,
    err,
    fail,
    json_out,
    keys_app,
    open_view,
    say,
)
from quoteproof.cli_groups import option_group
from quoteproof.cli_options import AuditKeyOption, CollectionsOption, IndexOption
from quoteproof.defaults import DEFAULT_INDEX
from quoteproof.render.visible import visible_line

if TYPE_CHECKING:
    from quoteproof.service.admin import Admin, LogReport


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
    with open_view(index) as view:
        documents = view.documents(collection)
    if as_json:
        json_out({"documents": [asdict(d) for d in documents]}, indent=2)
        return
    for d in documents:
        print(visible_line(f"{d.doc_id}  v{d.version}  {d.collection}  {d.format}  "
                           f"{d.source_path}  {d.title}"))  # fmt: skip
    say(f"{len(documents)} document(s) in {index}", err)


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
    with open_view(index) as view:
        path = os.path.abspath(document)
        found = [d for d in view.documents() if document == d.doc_id or path == d.source_path]
        if not found or not view.retire(found[0].doc_id):
            if view.was_ingested(document) or view.was_ingested(path):
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


@option_group
@dataclass(frozen=True)
class AuditLog:
    """The audit log of `--index`, its signatures checked with the `--audit-key`."""

    index: IndexOption = DEFAULT_INDEX
    audit_key: AuditKeyOption = None

    def admin(self) -> Admin:
        """The index's administration, with this audit key (`Admin.open`)."""
        from quoteproof.service.admin import Admin

        return Admin.open(self.index, audit_key=self.audit_key)

    def verify(self, witness: Path | None) -> LogReport:
        """Verify the log with the audit key and the `witness` file; print every
        problem (`INVALID ...`) and note (`note: ...`)."""
        with self.admin() as admin:
            report = admin.verify_log(witness)
        check = report.check
        for problem in check.problems:
            print(visible_line(f"INVALID {problem}"))
        for line in check.notes:
            print(visible_line(f"note: {line}"))
        if report.missing_key is not None and check.entries:
            print(visible_line(f"note: no audit key at {report.missing_key} (--audit-key)"))
        return report


AUDIT_LOG = AuditLog()


@command("verify", audit_app)
def audit_verify(log: AuditLog = AUDIT_LOG, witness: WitnessOption = None) -> None:
    """Check that no audit entry was edited, added, deleted or cut off; exit 1 if one was.

    Every entry's hash chain and signature (made with the audit key) is checked,
    and with --witness the log against the heads exported to that file.
    """
    if witness is not None and not witness.is_file():
        fail(f"{witness}: no such witness file")
    check = log.verify(witness).check
    where = visible_line(log.index)
    if not check.intact:
        print(f"audit log of {where}: {len(check.problems)} problem(s) in {check.entries} entries")
        raise typer.Exit(1)
    print(f"audit log of {where}: {check.entries} entries, chain intact (head {check.head[:16]}…)")


@command("head", audit_app)
def audit_head(
    log: AuditLog = AUDIT_LOG,
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
    check = log.verify(export).check
    if not check.intact:
        print(f"audit log of {visible_line(log.index)}: not intact, no head exported")
        raise typer.Exit(1)
    print(f"{check.entries} {check.head}")
    if export is not None:
        try:
            with log.admin() as admin:
                admin.export_head(check, export)
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
    from quoteproof.service.admin import Admin

    with Admin.open(index) as admin:
        lines = admin.export_log()
    text = "".join(line + "\n" for line in lines)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        err.print(f"{len(lines)} entries written to {visible_line(str(output))}", markup=False)


@command("create", keys_app)
def keys_create(
    collection: Annotated[
        list[str] | None,
        typer.Option("--collection", help="A collection the key may see (repeat for several)."),
    ] = None,
    name: Annotated[str, typer.Option("--name", help="Who or what the key is for.")] = "api",
    admin_key: Annotated[
        bool,
        typer.Option("--admin", help="A key for every collection and the server's /metrics."),
    ] = False,
    index: IndexOption = DEFAULT_INDEX,
) -> None:
    """Create an API key for COLLECTIONs (or, with --admin, for all) and print it
    (it is shown only this once)."""
    from quoteproof.service.admin import Admin

    with Admin.open(index) as admin:
        token, key = admin.create_key(name, collection or (), admin=admin_key)
    print(token)
    err.print(
        f"key {key.key_id} ({visible_line(key.name)}) for {', '.join(key.collections)}: "
        "store it now, it cannot be shown again",
        markup=False,
    )


@command("list", keys_app)
def keys_list(index: IndexOption = DEFAULT_INDEX) -> None:
    """List the keys (never their secrets)."""
    from quoteproof.service.admin import Admin

    with Admin.open(index) as admin:
        keys = admin.keys()
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
    from quoteproof.service.admin import Admin

    with Admin.open(index) as admin:
        if not admin.revoke_key(key_id):
            fail(f"no key {key_id!r} in {index}")
    print(f"key {visible_line(key_id)} revoked")


@command("stats")
def stats(
    days: Annotated[
        int, typer.Option("--days", min=1, help="The window: the last DAYS days (UTC).")
    ] = 7,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Start of the window instead, ISO 8601 UTC (2026-11-01)."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", help="End of the window (not included), ISO 8601 UTC."),
    ] = None,
    collection: CollectionsOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object.")] = False,
    index: IndexOption = DEFAULT_INDEX,
) -> None:
    """Answers of a time window, from the audit log: the refusal rate per day,
    refusal reasons, faithfulness per mode, tokens and rejected model output (what
    the server's /metrics counts, for users without Prometheus)."""
    from datetime import UTC, datetime, timedelta

    from quoteproof.render.stats import stats_lines
    from quoteproof.service.stats import answer_stats

    start = since or (datetime.now(UTC) - timedelta(days=days)).date().isoformat()
    with open_view(index) as view:
        scope = view.principal.narrow(collection)
        figures = answer_stats(view.index.store, scope, start, until)
    if as_json:
        json_out(figures.to_dict(), indent=2)
        return
    where = "all collections" if scope is None else "collections " + ", ".join(scope)
    for line in stats_lines(figures, where):
        say(line)
