"""The package map of docs/how-it-works.md, read from the page: every module and
package of quoteproof sits in exactly one layer of it, and each layer imports only
its own layer and the layers below it."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

import pytest

import quoteproof

PACKAGE = Path(quoteproof.__file__).parent
MAP_PAGE = Path(__file__).parents[1] / "docs" / "how-it-works.md"

_MAP_BLOCK = re.compile(r"^## The package map\n.*?^```\n(.*?)^```", re.M | re.S)
_BRACKETS = re.compile(r"\([^()]*\)")
_UNIT = re.compile(r"(?<![\w/.*])([A-Za-z_][\w*]*)(?:\.py\b|/)")


def map_layers(page: str) -> list[tuple[str, list[str]]]:
    """The layers of the package map in `page` (a Markdown text), top to bottom: each
    its name and the unit patterns it names (`cli*` for `cli*.py`, `store` for
    `store/`), read outside brackets from the lines that start with the layer's name
    and those indented under it."""
    block = _MAP_BLOCK.search(page)
    assert block, "no package map (a code block under '## The package map')"
    layers: list[tuple[str, list[str]]] = []
    texts: list[str] = []
    for line in block.group(1).splitlines():
        if line[:1].strip():
            name, _, rest = line.partition(" ")
            layers.append((name, []))
            texts.append(rest)
        elif layers:
            texts[-1] += " " + line
    for (_, units), text in zip(layers, texts, strict=True):
        while _BRACKETS.search(text):
            text = _BRACKETS.sub(" ", text)
        units.extend(_UNIT.findall(text))
    return layers


def package_units() -> set[str]:
    """The package's top-level modules and subpackages (`__init__` and `__main__`
    included)."""
    return {unit_of(path) for path in PACKAGE.rglob("*.py")}


def layer_table(
    layers: list[tuple[str, list[str]]], units: set[str]
) -> tuple[dict[str, int], list[str]]:
    """The depth of each of `units` in `layers` (0 the bottom layer), and the problems:
    a pattern that names no unit, a unit in no layer or in several."""
    depth: dict[str, int] = {}
    problems = []
    for level, (layer, patterns) in enumerate(reversed(layers)):
        for pattern in patterns:
            matched = fnmatch.filter(sorted(units), pattern)
            if not matched:
                problems.append(f"{layer}: {pattern} is not a module or package of quoteproof")
            for unit in matched:
                if unit in depth:
                    problems.append(f"{unit} is in more than one layer")
                depth[unit] = level
    problems += [f"{unit} is in no layer" for unit in sorted(units - set(depth))]
    return depth, problems


LAYERS = map_layers(MAP_PAGE.read_text("utf-8"))
"""The layers of the package map, top to bottom: each its name and unit patterns."""


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


def upward_imports(layer_of: dict[str, int]) -> list[str]:
    """Each import of a unit from a unit of a higher layer, as `path imports unit`
    (units in no layer are left to `layer_table`)."""
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = unit_of(path)
        for imported in imported_units(path) - {unit}:
            if layer_of.get(imported, -1) > layer_of.get(unit, len(LAYERS)):
                upward.append(f"{path.relative_to(PACKAGE)} imports {imported}")
    return upward


LAYER_OF, MAP_PROBLEMS = layer_table(LAYERS, package_units())
"""Each unit's layer, 0 the bottom one (`base`), and what the map gets wrong."""


def test_the_map_names_every_unit_once_and_nothing_else() -> None:
    assert [name for name, _ in LAYERS][::-1][:2] == ["base", "storage"]
    assert MAP_PROBLEMS == []


def test_layers_import_only_downward() -> None:
    assert upward_imports(LAYER_OF) == []


def test_a_wrong_map_is_caught() -> None:
    page = MAP_PAGE.read_text("utf-8")
    store_on_top = page.replace("\nstorage     store/ ", "\nstorage     ").replace(
        "\nfaces       cli*.py,", "\nfaces       store/, cli*.py,"
    )
    depth, problems = layer_table(map_layers(store_on_top), package_units())
    assert problems == []
    assert "index.py imports store" in upward_imports(depth)
    missing = page.replace("pdfium_lock.py\n", "\n").replace("locations.py,", "nowhere.py,")
    assert layer_table(map_layers(missing), package_units())[1] == [
        "ingest: nowhere is not a module or package of quoteproof",
        "locations is in no layer",
        "pdfium_lock is in no layer",
    ]
    twice = page.replace("keys.py, signing_record.py", "keys.py, signing_record.py, model.py")
    assert layer_table(map_layers(twice), package_units())[1] == ["model is in more than one layer"]


@pytest.mark.parametrize(
    ("text", "units"),
    [
        ("base        model.py (data types, not store/), text/", ["model", "text"]),
        (
            "faces       cli*.py, server/ (HTTP API,\n            web page), __main__.py",
            ["cli*", "server", "__main__"],
        ),
    ],
)
def test_the_map_reader_takes_units_outside_brackets(text: str, units: list[str]) -> None:
    page = f"## The package map\n\n```\n{text}\n```\n"
    assert map_layers(page) == [(text.split()[0], units)]


FACES = (
    *sorted(path.name for path in PACKAGE.glob("cli*.py")),
    *("server/api.py", "server/api_bodies.py", "server/mcp.py", "server/mcp_stdio.py"),
    *("server/web.py", "server/web_page.py", "server/web_ask.py", "server/web_sources.py"),
    *("server/web_library.py", "server/web_history.py", "server/web_login.py"),
)
"""The faces: every module of the CLI (`cli*.py`, its option groups included) and
the server's faces; they translate input and output and reach the library only
through the service."""
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
