#!/usr/bin/env python3
"""Write `docs/cli.md`, the reference of every `quoteproof` command and option, from
the CLI itself (its help texts), so that the reference cannot drift from the code.

    python docs/cli_reference.py          # rewrite docs/cli.md
    python docs/cli_reference.py --check  # exit 1 when docs/cli.md is not current
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import typer

from quoteproof.cli import app

OUTPUT = Path(__file__).resolve().parent / "cli.md"


def _cell(text: str) -> str:
    """`text` on one line, safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _parameter_row(param: Any) -> str:
    """One table row for a click parameter (typer bundles its own click: duck-typed)."""
    if param.param_type_name == "argument":
        name = f"`{(param.metavar or param.name).upper()}`"
        help_text = getattr(param, "help", None) or ""
    else:
        flags = [*param.opts, *param.secondary_opts]
        name = " / ".join(f"`{flag}`" for flag in flags)
        help_text = param.help or ""
        if param.envvar:
            help_text += f" (environment: `{param.envvar}`)"
    return f"| {name} | {_cell(help_text)} |"


def _command_section(name: str, command: Any) -> list[str]:
    lines = [f"## `{f'quoteproof {name}'.strip()}`", "", _cell(command.help or ""), ""]
    params = [p for p in command.params if p.name != "help"]
    if params:
        lines += ["| argument or option | meaning |", "|---|---|"]
        lines += [_parameter_row(param) for param in params]
        lines.append("")
    return lines


def reference() -> str:
    """The Markdown text of the CLI reference: `quoteproof`'s own options, then one
    section per command, in the order the CLI lists them, each with its help and a
    table of its parameters."""
    group: Any = typer.main.get_command(app)
    lines = [
        "# Command-line reference",
        "",
        "Generated from the CLI's own help by `python docs/cli_reference.py`;",
        "`tests/test_docs.py` fails when it is not current.",
        "",
    ]
    for name, command in [("", group), *_commands(group, "")]:
        lines += _command_section(name, command)
    return "\n".join(lines).rstrip() + "\n"


def _commands(group: Any, prefix: str) -> list[tuple[str, Any]]:
    """`(full name, command)` of every command under `group`, subcommands after
    their group, in the order the CLI lists them."""
    context = typer.Context(group)
    found = []
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        found.append((f"{prefix}{name}", command))
        if hasattr(command, "list_commands"):
            found += _commands(command, f"{prefix}{name} ")
    return found


def main() -> int:
    """Write or check docs/cli.md; return the exit status."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/cli.md differs")
    args = parser.parse_args()
    text = reference()
    if args.check:
        current = OUTPUT.read_text("utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is not current: run python docs/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, "utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
