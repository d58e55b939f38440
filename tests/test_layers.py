"""The package map of docs/how-it-works.md: each layer imports only its own layer and
the layers below it."""

from __future__ import annotations

import ast
from pathlib import Path

import quoteproof

PACKAGE = Path(quoteproof.__file__).parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("model", "defaults", "errors", "terms", "pdfium_lock", "sentences", "limited_call"),
    ("store", "codec"),
    ("ingest", "locations", "store_lookup", "tables"),
    ("retrieval",),
    ("quoting", "llm"),
    ("strategies", "streaming", "receipts", "seal"),
    ("index", "audit", "audit_key", "keys", "signing_record"),
    ("service", "evaluation", "render"),
    (
        "cli",
        "cli_admin",
        "cli_app",
        "cli_command_options",
        "cli_groups",
        "cli_help",
        "cli_options",
        "cli_messages",
        "cli_query",
        "cli_serve",
        "server",
        "__main__",
        "__init__",
    ),
)
"""Bottom to top, as in the package map of docs/how-it-works.md."""

LAYER_OF = {unit: depth for depth, units in enumerate(LAYERS) for unit in units}


def unit_of(path: Path) -> str:
    """The top-level module or subpackage of the package that `path` belongs to."""
    return path.relative_to(PACKAGE).with_suffix("").parts[0]


def imported_units(path: Path) -> set[str]:
    """The package's top-level units that `path` imports, anywhere in the file
    (`from quoteproof import __version__` names the package's metadata, not a unit)."""
    units = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "quoteproof":
                names = [] if [a.name for a in node.names] == ["__version__"] else ["__init__"]
            else:
                names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "quoteproof" and len(parts) > 1:
                units.add(parts[1])
            elif name == "__init__":
                units.add(name)
    return units


def test_every_unit_has_a_layer() -> None:
    units = {unit_of(path) for path in PACKAGE.rglob("*.py")}
    assert units - set(LAYER_OF) == set()
    assert set(LAYER_OF) - units == set()


def test_layers_import_only_downward() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = unit_of(path)
        for imported in imported_units(path) - {unit}:
            if LAYER_OF[imported] > LAYER_OF[unit]:
                upward.append(f"{path.relative_to(PACKAGE)} imports {imported}")
    assert upward == []


FACES = (
    *("cli.py", "cli_app.py", "cli_query.py", "cli_admin.py", "cli_serve.py"),
    *("server/api.py", "server/web.py", "server/mcp.py", "server/mcp_stdio.py"),
)
"""The faces: they translate input and output and reach the library only through
the service (the option groups, `cli_options` and `cli_command_options`, read the
registries of modes and backends to make options of them)."""
FACE_MAY_IMPORT = {"service", "render", "codec", "errors", "model", "defaults"}
"""What a face imports besides the faces' own modules (`cli_*`, `server`)."""


def face_units(path: Path) -> set[str]:
    """The units `path` imports other than the faces' own modules."""
    own = {"server", "__init__"} | {unit for unit in LAYER_OF if unit.startswith("cli")}
    return imported_units(path) - own


def test_faces_reach_the_library_only_through_the_service() -> None:
    beside = {face: sorted(face_units(PACKAGE / face) - FACE_MAY_IMPORT) for face in FACES}
    assert beside == {face: [] for face in FACES}


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("def f():\n    from quoteproof.cli import app\n    import quoteproof.index\n")
    assert imported_units(module) == {"cli", "index"}
