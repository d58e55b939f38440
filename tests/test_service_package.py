"""The service package's names: each is imported from its module only when first asked
for, so that importing the package (as importing any of its modules does first) loads
none of the library, and each is the same object as its module's."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import quoteproof.service as service

PROBE = """
import sys
import quoteproof.service
print(sorted(name for name in sys.modules if name.startswith("quoteproof")))
print("ScopedIndex" in dir(quoteproof.service))
"""


def type_checking_imports(path: Path) -> dict[str, set[str]]:
    """The names the `if TYPE_CHECKING:` block of the module at `path` imports, by
    the module each is imported from."""
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            return {
                found.module: {alias.name for alias in found.names}
                for found in node.body
                if isinstance(found, ast.ImportFrom) and found.module
            }
    return {}


def test_importing_the_package_loads_none_of_the_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    loaded, listed = done.stdout.split("\n")[:2]
    assert loaded == "['quoteproof', 'quoteproof.service']"
    assert listed == "True"  # dir() lists a name not yet imported


def test_each_name_is_its_modules() -> None:
    assert sorted(service.__all__) == sorted(
        name for names in service.EXPORTS.values() for name in names
    )
    for module, names in service.EXPORTS.items():
        for name in names:
            assert getattr(service, name) is getattr(importlib.import_module(module), name)


def test_the_type_checker_sees_the_same_names() -> None:
    exported = {module: set(names) for module, names in service.EXPORTS.items()}
    assert type_checking_imports(Path(service.__file__)) == exported


def test_other_names_are_not_the_packages() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Index'"):
        _ = service.Index
    from quoteproof.service import admin

    assert admin.__name__ == "quoteproof.service.admin"
