"""The strategy registry is the one list of answer modes: the static type, the CLI,
the HTTP API's schema, the web form, README and docs/usage.md all match it, and a mode runs only
on a backend with the capabilities it needs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from quoteproof.errors import ModeUnavailableError
from quoteproof.llm.base import Capability
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.llm.select import make_backend
from quoteproof.model import AnswerMode
from quoteproof.strategies.registry import (
    STRATEGIES,
    mode_table,
    modes,
    modes_for,
    strategy,
    strategy_for,
)

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
USAGE = REPO / "docs" / "usage.md"


def test_registry_modes_are_the_answer_mode_type() -> None:
    assert modes() == get_args(AnswerMode)
    assert modes()[0] == "quote"  # the default everywhere


def test_readme_mode_table_is_the_registrys() -> None:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- modes:[^\n]*-->\n(.*?)<!-- /modes -->", text, re.S)
    assert found is not None, "README lacks the generated mode table"
    assert found.group(1) == mode_table(), "README's mode table is out of date: paste mode_table()"


def test_the_mode_option_row_lists_the_registrys_modes() -> None:
    text = USAGE.read_text(encoding="utf-8")
    row = re.search(r"\| `--mode ([a-z\\|]+)`", text)
    assert row is not None
    assert tuple(row.group(1).split("\\|")) == modes()


def test_backends_declare_capabilities_and_get_the_modes_they_can_run() -> None:
    extractive = ExtractiveBackend()
    assert Capability.MODEL not in extractive.capabilities
    assert modes_for(extractive) == ("quote",)
    model = make_backend("openai", model="m", base_url="http://127.0.0.1:9/v1")
    assert {Capability.MODEL, Capability.TOOLS, Capability.STREAMING} <= model.capabilities
    assert modes_for(model) == modes()


def test_a_mode_without_the_needed_capability_is_unavailable() -> None:
    assert strategy_for(ExtractiveBackend(), "quote").mode == "quote"
    for entry in STRATEGIES:
        if Capability.MODEL in entry.needs:
            with pytest.raises(ModeUnavailableError, match="needs a language model"):
                strategy_for(ExtractiveBackend(), entry.mode)


def test_an_unknown_mode_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown answer mode 'poem'"):
        strategy("poem")


def test_the_faces_offer_the_registrys_modes() -> None:
    from typer.testing import CliRunner

    from quoteproof.cli import app
    from quoteproof.server.app import openapi_schema

    shown = CliRunner().invoke(app, ["ask", "--help"], env={"COLUMNS": "400"}).output
    assert f"--mode {'|'.join(modes())}" in shown
    schema = openapi_schema()["components"]["schemas"]["AskRequest"]["properties"]["mode"]
    assert tuple(schema["enum"]) == modes()
    assert all(entry.summary in schema["description"] for entry in STRATEGIES)
