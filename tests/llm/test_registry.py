"""The backend registry: one table names the backends, what they can do and the
options they read; `--llm`, the option help and grammar checks follow from it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
import typer

from quoteproof.cli import app
from quoteproof.errors import BackendConfigError, Hint
from quoteproof.llm.capability import Capability
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.llm.registry import (
    BACKENDS,
    BackendEntry,
    BackendSpec,
    IndexServices,
    backend_names,
    bind_to_index,
    make_backend,
    option_help,
)


def ask_options() -> dict[str, typer.core.TyperOption]:
    command = typer.main.get_command(app).commands["ask"]  # type: ignore[attr-defined]
    return {param.opts[0]: param for param in command.params}


def test_llm_offers_every_registered_backend_with_its_summary() -> None:
    llm = ask_options()["--llm"]
    assert tuple(str(choice) for choice in llm.type_descriptor.choices) == backend_names()
    for entry in BACKENDS:
        assert f"{entry.name} ({entry.summary})" in (llm.help or "")


def test_an_option_read_by_some_backends_names_them() -> None:
    assert option_help("threads").startswith("--llm local: ")
    assert option_help("grammar").startswith("--llm openai/local: ")
    assert not option_help("model").startswith("--llm")
    assert ask_options()["--ctx"].help == option_help("context")


@pytest.mark.parametrize("entry", BACKENDS, ids=lambda entry: entry.name)
def test_a_grammar_is_refused_by_the_backends_without_constrained(entry: BackendEntry) -> None:
    if Capability.CONSTRAINED in entry.capabilities:
        return  # making openai or local needs a server or a model file: tested with them
    with pytest.raises(BackendConfigError) as refused:
        make_backend(BackendSpec(entry.name, model="m", api_key="k", grammar=True))
    assert refused.value.hint is Hint.GRAMMAR_BACKEND


def test_an_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(BackendConfigError, match="unknown backend 'nope'"):
        make_backend(BackendSpec("nope"))


def test_a_spec_names_its_backend() -> None:
    assert BackendSpec().backend_name() == "extractive"
    assert BackendSpec(model="llama3").backend_name() == "openai"
    assert make_backend(BackendSpec()).name == "extractive"


def test_the_no_model_backend_takes_the_index_services_through_its_entry() -> None:
    def embed(texts: Sequence[str]) -> Any:
        return [[1.0] for _ in texts]

    def rows(chunk: Any) -> Sequence[tuple[int, int]]:
        return ()

    def after(chunk: Any) -> Any:
        return None

    made: list[str] = []
    services = IndexServices(lambda: made.append("embed") or embed, lambda: rows, lambda: after)
    bound = bind_to_index(ExtractiveBackend(), services)
    assert isinstance(bound, ExtractiveBackend)
    assert (bound.embed, bound.table_rows, bound.following) == (embed, rows, after)
    own = ExtractiveBackend(embed=len)  # type: ignore[arg-type]
    assert bind_to_index(own, services).embed is len  # type: ignore[attr-defined]
    assert made == ["embed"]  # the index's model is made only when it is taken


def test_a_backend_made_outside_the_registry_is_bound_unchanged() -> None:
    class Outside:
        name = "outside"

    outside: Any = Outside()
    assert bind_to_index(outside, IndexServices(lambda: None, lambda: len, lambda: len)) is outside
