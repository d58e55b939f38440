"""The `quoteproof` command: parses arguments, calls the service, renders the result.

Exit codes: 0 ok, 1 a failed check (a file that did not ingest, a quote that does
not verify), 2 a usage or input error (bad option, missing index, unreachable model).
The app and how commands are registered are in `cli_app`; the commands in
`cli_query`, `cli_serve` and `cli_admin` (imported here in the order `--help` lists
them); the shared options in `cli_options` and `cli_command_options`, the wording
of errors in `cli_messages`, the help's layout in `cli_help`. Each command imports
the service when it runs, so that registering the commands (`--help`, any
start-up) loads none of the library: option defaults come from
`quoteproof.defaults` (tests/test_cli_imports.py keeps it so).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from quoteproof import cli_admin, cli_kg, cli_query, cli_serve  # noqa: F401 (they register commands)
from quoteproof.cli_app import app, err, note

__all__ = ["app", "main"]


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """Show quoteproof's retrieval notices as `note:` lines; others as Python does."""
    from quoteproof.service import RetrievalNotice

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
