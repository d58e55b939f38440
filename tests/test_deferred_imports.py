"""The imports inside functions: each module that defers one is listed, with its
reason, in the table under "Imports inside functions" in docs/how-it-works.md, and
the table names no other. The CLI's modules, `cli*.py` (each command imports what
it uses), and the faces in `server/` are outside the table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import quoteproof

PACKAGE = Path(quoteproof.__file__).parent
PAGE = Path(__file__).parents[1] / "docs" / "how-it-works.md"
OUTSIDE = ("cli", "server/")
"""Paths (relative to the package) the table does not cover."""

_SECTION = re.compile(r"^### Imports inside functions\n(.*?)(?=^#)", re.M | re.S)
_ROW = re.compile(r"^\| `([^`]+)` \| (.+?) \| .+ \|$", re.M)


def listed(page: str) -> dict[str, set[str]]:
    """The table of `page`: each module's path and the modules it imports inside a
    function."""
    section = _SECTION.search(page)
    assert section, "no section 'Imports inside functions'"
    return {
        path: set(re.findall(r"`([^`]+)`", modules))
        for path, modules in _ROW.findall(section.group(1))
    }


def deferred(source: str) -> set[str]:
    """The modules that `source` imports inside a function (a nested one included)."""
    found: set[str] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if in_function and isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif in_function and isinstance(child, ast.ImportFrom) and child.module:
                found.add(child.module)
            visit(child, inside)

    visit(ast.parse(source), False)
    return found


def package_deferred() -> dict[str, set[str]]:
    """Each module of the package outside `OUTSIDE` that imports inside a function,
    by its path relative to the package, with the modules it imports there."""
    table = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.startswith(OUTSIDE):
            continue
        modules = deferred(path.read_text("utf-8"))
        if modules:
            table[name] = modules
    return table


def test_every_import_inside_a_function_is_listed_with_its_reason() -> None:
    assert package_deferred() == listed(PAGE.read_text("utf-8"))


def test_an_unlisted_deferred_import_is_seen() -> None:
    source = "import json\n\ndef f():\n    from quoteproof.index import Index\n    import torch\n"
    assert deferred(source) == {"quoteproof.index", "torch"}
    page = PAGE.read_text("utf-8").replace("| `store_lookup.py` | `quoteproof.locations` |", "")
    assert "store_lookup.py" not in listed(page)
    assert package_deferred() != listed(page)
