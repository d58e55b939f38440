"""The documentation covers the CLI: docs/cli.md is generated from the CLI's help
and current, and names every command and option; the README links to it and to every
other page of docs/, and no link between them points at a missing file or heading."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import typer

from quoteproof.cli import app

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")
"""A Markdown inline link's target."""


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", DOCS / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def every_option(group: Any) -> set[str]:
    """Every option flag of every command under `group`, read from the CLI."""
    context = typer.Context(group)
    flags: set[str] = set()
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if hasattr(command, "list_commands"):
            flags |= every_option(command)
        for param in command.params:
            if param.param_type_name == "option" and param.name != "help":
                flags |= {*param.opts, *param.secondary_opts}
    return flags


def test_the_cli_reference_is_current() -> None:
    text = (DOCS / "cli.md").read_text("utf-8")
    assert text == load_generator().reference(), "run: python docs/cli_reference.py"


def test_the_reference_names_every_command_and_option_with_its_help() -> None:
    text = (DOCS / "cli.md").read_text("utf-8")
    flags = every_option(typer.main.get_command(app))
    missing = {flag for flag in flags if f"`{flag}`" not in text}
    assert missing == set()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows and all(not re.search(r"\| *\|$", row) for row in rows), "an option without help"


def test_the_readme_links_the_reference() -> None:
    assert "docs/cli.md" in (REPO / "README.md").read_text("utf-8")


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of `markdown`: lower case, punctuation
    other than hyphens and underscores dropped, spaces turned into hyphens."""
    anchors = set()
    for line in markdown.splitlines():
        if match := re.match(r"#{1,6} (.+)", line):
            text = re.sub(r"[^\w\- ]", "", match.group(1).lower())
            anchors.add(text.replace(" ", "-"))
    return anchors


def test_the_readme_links_every_docs_page() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    linked = {target.split("#")[0] for target in LINK.findall(readme)}
    pages = {f"docs/{page.name}" for page in DOCS.glob("*.md")}
    assert pages - linked == set()


def test_links_between_the_readme_and_docs_resolve() -> None:
    broken = []
    for page in [REPO / "README.md", *DOCS.glob("*.md")]:
        for target in LINK.findall(page.read_text("utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and anchor not in heading_anchors(linked.read_text("utf-8")):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []
