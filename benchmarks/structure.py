"""The structure figures of issue 26, measured on a source tree: repeated code, what
each face imports, the largest modules, and what one `quoteproof ask` loads and asks
a newcomer to read.

    python benchmarks/structure.py [--tree DIR] [--json FILE]

`--tree` is the root of a quoteproof checkout (default: this one; another tree, for
instance `git archive main | tar -x -C /tmp/main`, is measured the same way, so one
script gives before and after). The figures:

- duplicate pairs: the pair count of `duplicates --repo src` run in the tree (the
  `duplicates` command on PATH; when it is not there the figure is "not measured").
- units imported by each face: a unit is a top-level module or package of
  quoteproof (`store`, `index`, `render`, ...). Per face file (`cli*.py`,
  `server/*.py`) and per face (cli: every `cli*.py`; web, api, mcp: their
  `server/` modules) the units imported anywhere in the files, the faces' own
  modules (`cli*`, `server`, the package's `__init__`) left out; "beyond the
  service" counts those other than service, render, codec, errors, model and
  defaults, which the issue lets a face import.
- largest modules: lines of the longest `.py` files under `src/quoteproof`, and how
  many are over 500 lines.
- files touched to add a document format: in a copy of the tree's `src/`, an example
  format (reStructuredText read as plain text) is added as one new module and one
  line in the format registry (`ingest/formats.py`); then, in a fresh interpreter
  on the copy, a file of it must parse, be found in a folder walk, pass the upload
  check (and fail it with other content), be named in the upload help, and be
  ingested into an index. The figure is 2 when every check passes; else it is not
  met, and the checks that failed are printed ("not measured" for a tree without
  the registry).
- modules an ask loads: the `quoteproof...` entries of `sys.modules` after
  `quoteproof ask QUESTION --retriever bm25` ran (through `quoteproof.cli.main()`
  in a fresh interpreter) on an index of `examples/corpus` built without vectors.
- modules a newcomer reads to follow `ask` (static): start from `cli.py`'s `main`
  and the `ask` command's module (`cli_query.py`, or `cli.py` in an older tree): its
  top-level imports and those inside the function `ask`; follow each reached
  module's top-level imports (not those inside functions nor under
  `TYPE_CHECKING`), adding the modules the registries load by name for the default
  answer (`strategies.quote`, `llm.extractive`) and `service.view` (where
  `ScopedIndex.ask` lives); then count the modules reached, leaving out the base
  helpers (the units of the package map's `base` layer in docs/how-it-works.md) and
  package `__init__` files that only import and re-export.

Exit status 0; the issue's targets (pairs <= 20, each face <= 6 units, largest
module <= 500 lines, a newcomer's ask path <= 25 modules) are printed and kept as
targets in the JSON figures.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from figures import Figures, add_json_option

REPO = Path(__file__).resolve().parent.parent
QUESTION = "What causes obstructive sleep apnea?"
FACE_MAY_IMPORT = {"service", "render", "codec", "errors", "model", "defaults"}
"""The units issue 26 lets a face import."""
BY_NAME = ("quoteproof.strategies.quote", "quoteproof.llm.extractive", "quoteproof.service.view")
"""Loaded by name on the path of a default `ask` (the mode's strategy, the backend
without a model, the service's scoped view); an older tree may lack some."""
TARGET_PAIRS, TARGET_FACE_UNITS, TARGET_LINES, TARGET_READ, TARGET_FORMAT = 20, 6, 500, 25, 2


def module_name(package: Path, path: Path) -> str:
    """The dotted module name of `path`, a `.py` file under the directory `package`."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute_imports(
    tree: ast.Module,
    module: str,
    is_package: bool,
    *,
    inside_functions: bool,
    type_checking: bool = False,
) -> Iterable[tuple[str, ast.AST]]:
    """Each module name imported in `tree` (the module `module`) with the node of the
    function it sits in (the module for top-level imports), relative imports made
    absolute, `from a import b` giving both `a` and `a.b`; imports under
    `if TYPE_CHECKING` left out unless `type_checking`, and those inside functions
    unless `inside_functions`."""
    base = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST, owner: ast.AST) -> Iterable[tuple[str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            typing_only = isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            if typing_only and not type_checking:
                continue
            if isinstance(child, ast.Import):
                yield from ((alias.name, owner) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                source = child.module or ""
                if child.level:
                    parts = base.split(".")
                    parts = parts[: len(parts) - child.level + 1]
                    source = ".".join([*parts, source] if source else parts)
                yield source, owner
                yield from ((f"{source}.{alias.name}", owner) for alias in child.names)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if inside_functions:
                    yield from visit(child, child)
            else:
                yield from visit(child, owner)

    yield from visit(tree, tree)


class Tree:
    """The modules of quoteproof in one source tree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.package = root / "src" / "quoteproof"
        self.paths = {module_name(self.package, p): p for p in self.package.rglob("*.py")}
        self._parsed: dict[str, ast.Module] = {}

    def parsed(self, module: str) -> ast.Module:
        """The syntax tree of `module`."""
        if module not in self._parsed:
            self._parsed[module] = ast.parse(self.paths[module].read_text("utf-8"))
        return self._parsed[module]

    def resolve(self, name: str) -> str | None:
        """The module of quoteproof that the dotted `name` is or lies in, or None."""
        while name and name not in self.paths:
            name = name.rpartition(".")[0]
        return name or None

    def imports(self, module: str, *, inside: str | None = None) -> set[str]:
        """The quoteproof modules `module` imports at its top level, and also inside
        its function named `inside` when given (`quoteproof` itself left out)."""
        found = set()
        is_package = self.paths[module].name == "__init__.py"
        tree = self.parsed(module)
        for name, owner in absolute_imports(tree, module, is_package, inside_functions=True):
            own = owner is tree or getattr(owner, "name", None) == inside
            target = self.resolve(name) if own and name.startswith("quoteproof.") else None
            if target and target not in (module, "quoteproof"):
                found.add(target)
        return found

    def units_imported(self, path: Path) -> set[str]:
        """The top-level units of quoteproof that the file `path` imports anywhere
        (under `TYPE_CHECKING` too)."""
        module = module_name(self.package, path)
        units = set()
        tree = self.parsed(module)
        is_package = path.name == "__init__.py"
        every = absolute_imports(
            tree, module, is_package, inside_functions=True, type_checking=True
        )
        for name, _ in every:
            target = self.resolve(name) if name.startswith("quoteproof.") else None
            if target and target != "quoteproof":
                units.add(target.split(".")[1])
        return units

    def only_reexports(self, module: str) -> bool:
        """Whether `module` is a package `__init__` holding only a docstring, imports
        and `__all__`."""
        if self.paths[module].name != "__init__.py":
            return False
        for node in self.parsed(module).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
                continue
            return False
        return True

    def base_units(self) -> set[str]:
        """The units of the `base` layer of the package map in docs/how-it-works.md."""
        page = (self.root / "docs" / "how-it-works.md").read_text("utf-8")
        block = re.search(r"^## The package map\n.*?^```\n(.*?)^```", page, re.M | re.S)
        if not block:
            return set()
        text, inside = "", False
        for line in block.group(1).splitlines():
            if line[:1].strip():
                inside = line.startswith("base ")
            if inside:
                text += " " + line
        while re.search(r"\([^()]*\)", text):
            text = re.sub(r"\([^()]*\)", " ", text)
        return set(re.findall(r"(?<![\w/.*])([A-Za-z_]\w*)(?:\.py\b|/)", text))


def duplicate_pairs(root: Path) -> int | None:
    """The pair count of `duplicates --repo src` in `root`, or None without the command."""
    command = shutil.which("duplicates")
    if command is None:
        return None
    done = subprocess.run(
        [command, "--repo", "src", "--seconds", "120"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    first = done.stdout.splitlines()[:1] or [""]
    if first[0].startswith("no duplicates"):
        return 0
    counted = re.match(r"(\d+) pairs? of places", first[0])
    return int(counted.group(1)) if counted else None


def faces(tree: Tree) -> dict[str, list[Path]]:
    """Each face's files: `cli` every `cli*.py`; `web`, `api`, `mcp` their `server/`
    modules (by name)."""
    server = sorted((tree.package / "server").glob("*.py"))
    return {
        "cli": sorted(tree.package.glob("cli*.py")),
        "web": [p for p in server if p.stem.startswith("web")],
        "api": [p for p in server if p.stem.startswith("api")],
        "mcp": [p for p in server if p.stem.startswith("mcp")],
    }


def face_units(tree: Tree, files: Sequence[Path]) -> set[str]:
    """The units `files` import, the faces' own modules left out."""
    own = {"server", "__init__"} | {p.stem for p in tree.package.glob("cli*.py")}
    units: set[str] = set()
    for path in files:
        units |= tree.units_imported(path)
    return units - own


def largest_modules(tree: Tree, most: int = 8) -> list[tuple[str, int]]:
    """The `most` longest modules: path under the package and line count."""
    lines = [
        (str(path.relative_to(tree.package)), len(path.read_text("utf-8").splitlines()))
        for path in tree.paths.values()
    ]
    return sorted(lines, key=lambda item: -item[1])[:most]


def newcomer_modules(tree: Tree) -> list[str]:
    """The modules a newcomer reads to follow `ask` (the rule in this module's
    docstring)."""
    command = "quoteproof.cli_query" if "quoteproof.cli_query" in tree.paths else "quoteproof.cli"
    reached = {"quoteproof.cli", command}
    todo = [(command, "ask"), ("quoteproof.cli", "main")]
    todo += [(name, None) for name in BY_NAME if name in tree.paths]
    reached |= {name for name, _ in todo}
    while todo:
        module, inside = todo.pop()
        for target in tree.imports(module, inside=inside) - reached:
            reached.add(target)
            todo.append((target, None))
    base = tree.base_units()
    kept = [
        m
        for m in reached
        if m.split(".")[1] not in base and m != "quoteproof" and not tree.only_reexports(m)
    ]
    return sorted(kept)


FORMAT_MODULE = '''
"""reStructuredText read as plain text: the example format benchmarks/structure.py adds."""

from dataclasses import replace

from quoteproof.ingest.plain.text import parse_text
from quoteproof.model import ParsedDocument


def parse_rst(raw: bytes, path: str) -> ParsedDocument:
    return replace(parse_text(raw, path), format="rst")
'''
FORMAT_LINE = (
    '    Format("reStructuredText", (".rst",), "quoteproof.ingest.plain.rst:parse_rst"),\n'
)
"""The example format's module (`ingest/plain/rst.py`) and its registry line."""

FORMAT_PROBE = """
import json, sys
from pathlib import Path
from quoteproof import Index
from quoteproof.ingest.files import discover_files, parse_file
from quoteproof.service.uploads import SUPPORTED_SUFFIXES, format_names, upload_problem
folder = Path(sys.argv[1])
(folder / "notes.rst").write_text("Title\\n=====\\n\\nThe rst format is read.\\n")
(folder / "other.xyz").write_text("not a document")
found = discover_files([folder]).files
checks = {
    "parses": parse_file(folder / "notes.rst").format == "rst",
    "found in a folder walk": found == [(folder / "notes.rst").resolve()],
    "upload accepted": upload_problem("a.rst", b"plain text") is None,
    "mislabelled upload refused": "a PDF" in (upload_problem("a.rst", b"%PDF-1.7") or ""),
    "upload field accepts it": ".rst" in SUPPORTED_SUFFIXES,
    "upload help names it": "reStructuredText" in format_names(),
}
with Index.open(folder / "index", create=True) as index:
    results = index.ingest([folder / "notes.rst"], embed=False)
checks["ingested"] = [r.status for r in results] == ["added"]
print("CHECKS " + json.dumps(checks))
"""


def add_format(root: Path) -> tuple[int | None, list[str]]:
    """Add the example format to a copy of `root`'s sources (one new module, one
    registry line) and check it works (see the module docstring): the files
    touched (None when the tree has no format registry or a check failed) and the
    checks that failed."""
    registry = root / "src" / "quoteproof" / "ingest" / "formats.py"
    if not registry.exists():
        return None, ["no format registry (ingest/formats.py)"]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "tree"
        shutil.copytree(root / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__"))
        package = copy / "src" / "quoteproof"
        (package / "ingest" / "plain" / "rst.py").write_text(FORMAT_MODULE, "utf-8")
        text = (package / "ingest" / "formats.py").read_text("utf-8")
        table = re.search(r"^FORMATS\b.*?^\)$", text, re.M | re.S)
        if table is None:
            return None, ["no FORMATS table in ingest/formats.py"]
        at = table.end() - 1
        (package / "ingest" / "formats.py").write_text(text[:at] + FORMAT_LINE + text[at:])
        work = Path(tmp) / "work"
        work.mkdir()
        done = subprocess.run(
            [sys.executable, "-c", FORMAT_PROBE, str(work)],
            env=child_environment(copy),
            capture_output=True,
            text=True,
            check=False,
        )
    line = next((x for x in done.stdout.splitlines() if x.startswith("CHECKS ")), None)
    if line is None:
        return None, [f"the probe failed: {done.stderr.strip()[-400:]}"]
    failed = [name for name, ok in json.loads(line.removeprefix("CHECKS ")).items() if not ok]
    return (None if failed else 2), failed


def child_environment(root: Path) -> dict[str, str]:
    """This environment, offline, with `root`'s sources first on the import path."""
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), env.get("PYTHONPATH", "")])
    return env


BUILD = """
import sys
from pathlib import Path
from quoteproof import Index
with Index.open(Path(sys.argv[1]), create=True) as index:
    index.ingest([Path(sys.argv[2])], embed=False)
"""

PROBE = """
import json, sys
import quoteproof.cli
question, index = sys.argv[1:3]
sys.argv = ["quoteproof", "ask", question, "--index", index, "--retriever", "bm25"]
code = 0
try:
    quoteproof.cli.main()
except SystemExit as exit:
    code = exit.code
loaded = sorted(m for m in sys.modules if m == "quoteproof" or m.startswith("quoteproof."))
print("\\nLOADED " + json.dumps({"exit": code, "modules": loaded}))
"""


def ask_loads(root: Path) -> tuple[list[str], object]:
    """The quoteproof modules loaded by one `ask --retriever bm25` in `root`'s tree, on
    a new index of examples/corpus without vectors, and the command's exit status."""
    env = child_environment(root)
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "index"
        corpus = root / "examples" / "corpus"
        subprocess.run(
            [sys.executable, "-c", BUILD, str(index), str(corpus)],
            env=env,
            check=True,
            capture_output=True,
        )
        done = subprocess.run(
            [sys.executable, "-c", PROBE, QUESTION, str(index)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    line = next((x for x in done.stdout.splitlines() if x.startswith("LOADED ")), None)
    if line is None:
        raise RuntimeError(f"the ask probe failed: {done.stderr.strip()[-400:]}")
    loaded = json.loads(line.removeprefix("LOADED "))
    return loaded["modules"], loaded["exit"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO, help="The checkout to measure.")
    parser.add_argument("-v", "--verbose", action="store_true", help="List the modules.")
    add_json_option(parser)
    args = parser.parse_args(argv)
    tree = Tree(args.tree.resolve())
    out = Figures("structure")

    pairs = duplicate_pairs(tree.root)
    print(f"tree: {tree.root}")
    if pairs is None:
        print("duplicates --repo src: not measured (no `duplicates` command on PATH)")
        out.note("duplicate pairs not measured: no `duplicates` command on PATH")
    else:
        print(f"duplicates --repo src: {pairs} pairs (target <= {TARGET_PAIRS})")
        out.add("duplicate pairs", pairs, "pairs")
        out.target(f"duplicate pairs <= {TARGET_PAIRS}", pairs <= TARGET_PAIRS)

    print("\nunits imported (all / beyond service, render, codec, errors, model, defaults)")
    for face, files in faces(tree).items():
        units = face_units(tree, files)
        beyond = sorted(units - FACE_MAY_IMPORT)
        print(f"  face {face:4} {len(units):3} / {len(beyond):2}  {', '.join(beyond)}")
        out.add(f"units imported, {face}", len(units), "units")
        out.add(f"units beyond the service, {face}", len(beyond), "units")
        out.target(f"{face} imports <= {TARGET_FACE_UNITS} units", len(units) <= TARGET_FACE_UNITS)
        for path in files:
            own = face_units(tree, [path])
            print(
                f"    {path.relative_to(tree.package)!s:28} {len(own):3} / "
                f"{len(own - FACE_MAY_IMPORT):2}"
            )

    largest = largest_modules(tree)
    over = sum(1 for path in tree.paths.values() if len(path.read_text("utf-8").splitlines()) > 500)
    print(f"\nlargest modules ({over} over {TARGET_LINES} lines)")
    for name, lines in largest:
        print(f"  {lines:5}  {name}")
    out.add("largest module", largest[0][1], "lines")
    out.add("modules over 500 lines", over, "modules")
    out.target(f"largest module <= {TARGET_LINES} lines", largest[0][1] <= TARGET_LINES)

    touched, failed = add_format(tree.root)
    if touched is None:
        print(f"\nfiles touched to add a document format: not met ({'; '.join(failed)})")
        out.note(f"adding a format: {'; '.join(failed)}")
    else:
        print(f"\nfiles touched to add a document format: {touched} (target {TARGET_FORMAT})")
        out.add("files touched to add a document format", touched, "files")
    out.target(f"a format is {TARGET_FORMAT} files", touched == TARGET_FORMAT)

    loaded, status = ask_loads(tree.root)
    print(f"\nquoteproof modules loaded by `ask --retriever bm25`: {len(loaded)} (exit {status})")
    if args.verbose:
        print("  " + "\n  ".join(loaded))
    out.add("modules an ask loads", len(loaded), "modules")

    read = newcomer_modules(tree)
    print(f"modules a newcomer reads to follow `ask`: {len(read)} (target <= {TARGET_READ})")
    if args.verbose:
        print("  " + "\n  ".join(read))
    out.add("modules a newcomer reads for ask", len(read), "modules")
    out.target(f"a newcomer reads <= {TARGET_READ} modules for ask", len(read) <= TARGET_READ)
    out.note(f"tree {tree.root}")
    out.data = {"largest": largest, "ask_loads": loaded, "newcomer_reads": read}
    out.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
