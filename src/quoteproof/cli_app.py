"""The `quoteproof` command's plumbing: the app and its groups, how a command is
registered (`command`: option groups spread, help laid out by `cli_help`, a
`QuoteproofError` shown as one line ending the command with its exit code), the
consoles and their one-line printers, and the local user's view of an index.

The commands are in `cli_query` (ingest, show, search, ask, calibrate, eval,
verify), `cli_serve` (mcp, serve) and `cli_admin` (documents, audit, keys);
`cli` puts them together. Everything printed that comes from a document, a file
name, a user or the index goes through `render.visible` (control characters shown,
never sent; never read as rich markup), and JSON through `render.json.json_text`.
"""

from __future__ import annotations

import functools
import getpass
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console

from quoteproof.cli_groups import with_option_groups
from quoteproof.cli_help import HelpCommand, HelpGroup
from quoteproof.cli_messages import cli_message, exit_code
from quoteproof.errors import QuoteproofError
from quoteproof.render.visible import visible_line

if TYPE_CHECKING:
    from quoteproof.service import Principal, ScopedIndex


def _group(help: str, **settings: Any) -> typer.Typer:
    """A command group whose help reads at 80 columns (`cli_help`) and that shows it
    when called without a command; `settings` as `typer.Typer` takes them."""
    return typer.Typer(
        help=help, no_args_is_help=True, rich_markup_mode=None, cls=HelpGroup, **settings
    )


app = _group(
    "Answers from your documents in which every quotation is verbatim source text.",
    add_completion=False,
    pretty_exceptions_enable=False,
)
documents_app = _group("The documents in the index: list them, retire one.")
audit_app = _group("The audit log: every answer asked, append-only, hash-chained and signed.")
keys_app = _group("API keys for `quoteproof serve`.")
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


def say(line: str, console: Console = out) -> None:
    """Print `line` as it is (`visible_line`: never read as markup)."""
    console.print(visible_line(line), markup=False, soft_wrap=True)


def note(message: str) -> None:
    """Print an informational line on stderr (`note: ...`, `visible_line`)."""
    say(f"note: {message}", err)


def command(name: str | None = None, group: typer.Typer = app) -> Callable[[C], C]:
    """Register a command of `group`: its option groups spread into options
    (`cli_groups`), its help laid out by `cli_help`, and any `QuoteproofError` it
    raises shown as one line (`cli_message`) ending the command with `exit_code`."""

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
            "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    """The options of `quoteproof` itself (before a command)."""


def local_user() -> Principal:
    """The user running the command (named in the audit log; None when the system
    cannot tell, as for a container user without a passwd entry): every
    collection (`--collection` narrows)."""
    from quoteproof.service import Principal

    try:
        name: str | None = getpass.getuser()
    except (KeyError, OSError):
        name = None
    return Principal(name, None)


def open_view(index: str, **options: Any) -> ScopedIndex:
    """The index at `index` as the local user sees it (`ScopedIndex.open`)."""
    from quoteproof.service import ScopedIndex

    return ScopedIndex.open(index, local_user(), **options)


def json_out(data: object, **options: Any) -> None:
    """Print `data` as JSON (`render.json.json_text`)."""
    from quoteproof.render.json import json_text

    print(json_text(data, **options))
