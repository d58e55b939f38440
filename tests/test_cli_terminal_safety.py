"""Nothing from a file name or a document reaches the terminal raw: control characters
(ESC sequences, C1 controls, line breaks in names, bidi overrides) are shown escaped
by every command, rich markup in names is shown literally, and no name can forge a
line of output. Run through the real `quoteproof` command."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from test_cli import run as run_cli

RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What must never reach stdout or stderr (line feeds end lines, nothing else may)."""

FAILING_NAMES = [
    "\x1b[31mfail.md",
    "evil\u202etxt.md",
    "[bold red]x.md",
    "bad\nfailed: nothing, all good.txt",
    "c1\x9b31m.txt",
]
"""Empty files (they fail to ingest, so their names are printed), with hostile names."""

GOOD = {
    "\x1b[31mred.md": (
        "# Red \x1b[2J title [bold]b[/bold]\n\n"
        "Shingles rash \x1b]0;pwned\x07 begins with \u202eevil\u202c pain.\n"
    ),
    "ok\u202egpj.md": "# Bidi\n\nAspirin thins blood.\n",
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The command, with a terminal wide enough that tables show names whole."""
    return run_cli(*args, env={**os.environ, "COLUMNS": "250"})


def assert_safe(result: subprocess.CompletedProcess[str]) -> str:
    """Stdout and stderr together, checked to hold no raw control character."""
    output = result.stdout + result.stderr
    assert not RAW.findall(output), RAW.findall(output)
    assert "Traceback" not in output
    return output


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A folder of files with hostile names and text, its index, and the ingest output."""
    root = tmp_path_factory.mktemp("hostile")
    folder = root / "docs"
    folder.mkdir()
    for name in FAILING_NAMES:
        (folder / name).write_bytes(b"")
    for name, text in GOOD.items():
        (folder / name).write_text(text, encoding="utf-8")
    index = root / "index"
    result = run("ingest", str(folder), "--index", str(index), "--no-embed", "--jobs", "1")
    assert result.returncode == 1, result.stderr
    return folder, index, assert_safe(result)


def test_ingest_shows_hostile_names_escaped_and_forges_no_line(
    hostile: tuple[Path, Path, str],
) -> None:
    folder, _, output = hostile
    lines = output.splitlines()
    assert len([line for line in lines if line.startswith("failed: ")]) == len(FAILING_NAMES)
    assert not [line for line in lines if re.match(r"\W*failed: nothing", line)]
    assert f"failed: {folder}/␛[31mfail.md: " in output
    assert f"failed: {folder}/bad␊failed: nothing, all good.txt: " in output
    assert f"failed: {folder}/evil\\u202etxt.md: " in output
    assert f"failed: {folder}/c1\\x9b31m.txt: " in output
    assert f"failed: {folder}/[bold red]x.md: " in output  # not read as markup
    flat = " ".join(output.split())
    assert f"{len(FAILING_NAMES)} failed (above)" in flat


def test_search_show_and_ask_show_source_text_escaped(hostile: tuple[Path, Path, str]) -> None:
    _, index, _ = hostile
    searched = run("search", "shingles rash", "--index", str(index))
    shown = assert_safe(searched)
    assert "␛[2J title [bold]b[/bold]" in shown and "\\u202eevil\\u202c" in shown
    as_json = run("search", "rash", "--index", str(index), "--format", "json")
    assert_safe(as_json)
    data = json.loads(as_json.stdout)
    (hit,) = data["hits"]
    assert hit["source_path"].endswith("/\x1b[31mred.md")  # the data itself is unchanged
    assert "\x1b]0;pwned\x07" in hit["text"] and "\u202eevil" in hit["text"]
    chunk = assert_safe(run("show", hit["ref"], "--index", str(index)))
    assert "Red ␛[2J title [bold]b[/bold]" in chunk and "␛]0;pwned␇" in chunk
    answered = assert_safe(run("ask", "What does shingles rash begin with?", "--index", str(index)))
    assert "␛]0;pwned␇ begins with \\u202eevil\\u202c pain" in answered


def test_errors_and_notes_show_names_escaped(tmp_path: Path) -> None:
    missing = tmp_path / "no\x1b[31m\nerror: forged"
    result = run("ingest", str(missing), "--index", str(tmp_path / "index"))
    output = assert_safe(result)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "no␛[31m␊error: forged" in output


def test_key_names_are_shown_escaped(hostile: tuple[Path, Path, str]) -> None:
    _, index, _ = hostile
    name = "ops\x1b[2J\u202e[red]"
    created = run(
        "keys", "create", "--collection", "default", "--name", name, "--index", str(index)
    )
    assert created.returncode == 0 and "ops␛[2J\\u202e[red]" in assert_safe(created)
    listed = run("keys", "list", "--index", str(index))
    assert "ops␛[2J\\u202e[red]" in assert_safe(listed)
