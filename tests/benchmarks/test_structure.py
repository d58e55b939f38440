"""The figures of benchmarks/structure.py: on a small tree written here, the units a
face imports, the longest modules and the base layer left out of a question's
path; on this tree, the path of one question (ask_path.py) and adding a format."""

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


def test_the_base_layer_is_left_out_of_a_questions_path(tmp_path: Path) -> None:
    write_tree(tmp_path)
    tree = structure.Tree(tmp_path)
    assert tree.base_units() == {"model", "text"}
    seen = {
        "path": {
            "a quote made": ["quoteproof.cli", "quoteproof.model", "quoteproof.service.view"],
            "the answer laid out": ["quoteproof.cli", "quoteproof.text.spans"],
        }
    }
    assert structure.question_path(tree, seen) == ["quoteproof.cli", "quoteproof.service.view"]


def test_a_question_runs_its_path_and_reaches_every_landmark() -> None:
    seen = structure.ask_trace(REPO)
    assert seen["exit"] == 0
    assert set(seen["path"]) == {
        "the index searched",
        "the model asked",
        "a quote made",
        "the answer recorded",
        "the answer laid out",
    }
    path = set(structure.question_path(structure.Tree(REPO), seen))
    spine = {"cli_query", "service.view", "index", "strategies.quote", "quoting.resolve"}
    assert {f"quoteproof.{name}" for name in spine} | {"quoteproof.audit"} <= path
    assert "quoteproof.model.answers" not in path  # the base layer
    # A backend that cannot constrain its output gets no grammar: none is made.
    assert "quoteproof.quoting.grammar" not in seen["ran"]
    assert "quoteproof.quoting.grammar" in seen["loaded"]


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
