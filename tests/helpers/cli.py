"""The `quoteproof` command run in the test's own process (its models stay loaded),
with what it printed and its exit code as a subprocess would give them."""

from __future__ import annotations

from click.testing import Result
from typer.testing import CliRunner

from quoteproof.cli import app


class Ran:
    """What a command printed and its exit code (as `subprocess.run` gives them)."""

    def __init__(self, result: Result) -> None:
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception
        )
        self.returncode, self.stdout, self.stderr = result.exit_code, result.stdout, result.stderr


def cli(*args: str) -> Ran:
    """Run `quoteproof ARGS` in this process."""
    return Ran(CliRunner().invoke(app, list(args)))
