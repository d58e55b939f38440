"""`quoteproof --help` and every command's help read at 80 columns: no line wider,
none cut short with an ellipsis, arguments named in capitals, option values named
in a word rather than typer's `<str>`/`<bool>` placeholders."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from quoteproof.cli import app


def command_paths() -> list[list[str]]:
    """The words that name each command and group, the CLI itself first."""
    found: list[list[str]] = [[]]

    def walk(group: Any, prefix: list[str]) -> None:
        context = typer.Context(group)
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            found.append([*prefix, name])
            if hasattr(command, "list_commands"):
                walk(command, [*prefix, name])

    walk(typer.main.get_command(app), [])
    return found


@pytest.mark.parametrize("words", command_paths(), ids=lambda words: " ".join(words) or "-")
def test_help_reads_at_80_columns(words: list[str]) -> None:
    result = CliRunner().invoke(app, [*words, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    assert "…" not in result.stdout
    assert [line for line in lines[1:] if line.endswith("...")] == []  # a command's help cut
    assert not re.search(r"<(str|bool|int|float|path|list)\b", result.stdout)
    usage = lines[0]
    assert usage.startswith("Usage:") and "{" not in usage, usage
    help_line = next(line for line in lines if line.lstrip().startswith("--help"))
    assert help_line.split() == ["--help", "Show", "this", "message", "and", "exit."]


def test_arguments_and_choices_are_named_whole() -> None:
    ask = CliRunner().invoke(app, ["ask", "--help"], env={"COLUMNS": "80"}).stdout
    assert ask.splitlines()[0].endswith("[OPTIONS] QUESTION")
    assert "  --mode quote|cite|rationale|agent" in ask
    verify = CliRunner().invoke(app, ["verify", "--help"], env={"COLUMNS": "80"}).stdout
    assert verify.splitlines()[0].endswith("[OPTIONS] ANSWER_FILE")


def test_every_format_choice_is_explained() -> None:
    """`search --format text|json|jsonl` said only "text or json."."""
    for words in (["search"], ["show"]):
        shown = CliRunner().invoke(app, [*words, "--help"], env={"COLUMNS": "80"}).stdout
        said = " ".join(shown.split())
        assert "--format text|json|jsonl" in said
        assert "jsonl" in said.split("--format text|json|jsonl", 1)[1].split("[default")[0]
