"""The static figures of benchmarks/structure.py, on a small tree written here: the
units a face imports, the longest modules, and the modules a newcomer reads to
follow `ask` (top-level imports followed, the base layer and re-export-only package
`__init__`s left out)."""

from __future__ import annotations

from pathlib import Path

from helpers.bench_scripts import REPO, load_script

structure = load_script("structure")

MAP = """## The package map

```
faces       cli*.py
service     service/
base        model.py (data types), text/
```
"""

FILES = {
    "__init__.py": "",
    "cli.py": (
        "from quoteproof import cli_query\ndef main():\n    from quoteproof.render import x\n"
    ),
    "cli_query.py": (
        "from typing import TYPE_CHECKING\n"
        "from quoteproof.defaults import D\n"
        "if TYPE_CHECKING:\n    from quoteproof.store.base import Store\n"
        "def ask():\n    from quoteproof.service import ScopedIndex\n"
        "def ingest():\n    from quoteproof.ingest.pipeline import run\n"
    ),
    "defaults.py": "D = 1\n",
    "model.py": "class Answer:\n    pass\n",
    "render/__init__.py": "x = 1\n",
    "service/__init__.py": '"""The service."""\nfrom quoteproof.service.view import ScopedIndex\n',
    "service/view.py": "from quoteproof.model import Answer\nfrom . import helpers\n",
    "service/helpers.py": "import json\n",
    "store/__init__.py": "",
    "store/base.py": "class Store:\n    pass\n",
    "ingest/__init__.py": "",
    "ingest/pipeline.py": "\n".join(["def run():", *["    pass"] * 9]) + "\n",
    "strategies/__init__.py": "",
    "strategies/quote.py": "from quoteproof.text.spans import trim\n",
    "text/__init__.py": "",
    "text/spans.py": "def trim():\n    pass\n",
}


def write_tree(root: Path) -> None:
    for name, text in FILES.items():
        path = root / "src" / "quoteproof" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "how-it-works.md").write_text(MAP, encoding="utf-8")


def test_a_face_counts_every_unit_it_imports_but_the_faces_own(tmp_path: Path) -> None:
    write_tree(tmp_path)
    tree = structure.Tree(tmp_path)
    assert structure.face_units(tree, structure.faces(tree)["cli"]) == {
        "defaults",
        "store",
        "service",
        "ingest",
        "render",
    }


def test_the_newcomer_follows_ask_main_and_top_level_imports(tmp_path: Path) -> None:
    write_tree(tmp_path)
    tree = structure.Tree(tmp_path)
    assert tree.base_units() == {"model", "text"}
    assert structure.newcomer_modules(tree) == [
        "quoteproof.cli",
        "quoteproof.cli_query",
        "quoteproof.defaults",
        "quoteproof.render",
        "quoteproof.service.helpers",
        "quoteproof.service.view",
        "quoteproof.strategies.quote",
    ]


def test_the_longest_modules_come_first(tmp_path: Path) -> None:
    write_tree(tmp_path)
    assert structure.largest_modules(structure.Tree(tmp_path), most=2) == [
        ("ingest/pipeline.py", 10),
        ("cli_query.py", 8),
    ]


def test_a_format_is_one_module_and_one_registry_line() -> None:
    assert structure.add_format(REPO) == (2, [])


def test_a_tree_without_the_format_registry_is_not_measured(tmp_path: Path) -> None:
    write_tree(tmp_path)
    assert structure.add_format(tmp_path) == (None, ["no format registry (ingest/formats.py)"])
