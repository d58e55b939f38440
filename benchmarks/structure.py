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
- modules an ask loads, runs, and has on its path: one `quoteproof ask QUESTION
  --retriever bm25` on an index of `examples/corpus` built without vectors, run in
  a fresh interpreter by `ask_path.py` (see there): the quoteproof modules in
  `sys.modules` after it ("loads"), those with a function that ran while the
  command's `ask` ran ("runs"), and those on the call stack at each landmark of a
  question: the index searched, the model asked, a quote made, the answer recorded,
  the answer laid out ("on the path"). The modules on the path are those a
  newcomer reads to follow `ask`: the command, the service, the index, retrieval,
  the strategy, the backend, the resolver, the audit log and the renderer, each
  down to where its work is done; the base helpers (the units of the package
  map's `base` layer in docs/how-it-works.md) are left out of "runs" and "on the
  path".

Exit status 0; the issue's targets (pairs <= 20, each face <= 6 units, largest
module <= 500 lines, the path of a question <= 25 modules, a format 2 files) are printed and kept as
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
from typing import Any

from figures import Figures, add_json_option

REPO = Path(__file__).resolve().parent.parent
ASK_PATH = Path(__file__).resolve().parent / "ask_path.py"
QUESTION = "What causes obstructive sleep apnea?"
FACE_MAY_IMPORT = {"service", "render", "codec", "errors", "model", "defaults"}
"""The units issue 26 lets a face import."""
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


def ask_trace(root: Path) -> dict[str, Any]:
    """What one `ask --retriever bm25` in `root`'s tree loads, runs and has on its
    path (`ask_path.py`'s object), on a new index of examples/corpus without
    vectors."""
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
            [sys.executable, str(ASK_PATH), str(index), QUESTION, "--retriever", "bm25"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    line = next((x for x in done.stdout.splitlines() if x.startswith("ASK_PATH ")), None)
    if line is None:
        raise RuntimeError(f"the ask probe failed: {done.stderr.strip()[-400:]}")
    seen: dict[str, Any] = json.loads(line.removeprefix("ASK_PATH "))
    return seen


def beyond_base(tree: Tree, modules: Iterable[str]) -> list[str]:
    """`modules` (sorted) without those of the base layer's units."""
    base = tree.base_units()
    return sorted(m for m in modules if m.partition(".")[2].split(".")[0] not in base)


def question_path(tree: Tree, seen: dict[str, Any]) -> list[str]:
    """The modules on the path of a question (`ask_trace`'s landmarks merged), the
    base layer left out."""
    return beyond_base(tree, {m for modules in seen["path"].values() for m in modules})


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

    seen = ask_trace(tree.root)
    ran, on_path = beyond_base(tree, seen["ran"]), question_path(tree, seen)
    print(f"\none `ask --retriever bm25` (exit {seen['exit']}): quoteproof modules")
    print(f"  loaded: {len(seen['loaded'])}")
    print(f"  run (a function of theirs ran; base layer left out): {len(ran)}")
    print(f"  on the path of the question (target <= {TARGET_READ}): {len(on_path)}")
    for mark, modules in seen["path"].items():
        print(f"    {mark}: {len(beyond_base(tree, modules))}")
    if args.verbose:
        print("  on the path:\n    " + "\n    ".join(on_path))
        print("  run, not on the path:\n    " + "\n    ".join(sorted(set(ran) - set(on_path))))
    out.add("modules an ask loads", len(seen["loaded"]), "modules")
    out.add("modules an ask runs", len(ran), "modules")
    out.add("modules on the path of a question", len(on_path), "modules")
    out.target(f"the path of a question <= {TARGET_READ} modules", len(on_path) <= TARGET_READ)
    out.note(f"tree {tree.root}")
    out.data = {"largest": largest, "ask": seen}
    out.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
