"""`AnswerOptions` is the one definition of the answer options: the CLI's options of
`ask` and `eval` and the fields of the API's `POST /v1/ask` body are made from its
fields (flags, help, defaults, bounds), so a change there reaches every face."""

from __future__ import annotations

import dataclasses
from typing import Any, get_args

import pytest
import typer
from typer.testing import CliRunner

from quoteproof.cli import app
from quoteproof.cli_groups import with_option_groups
from quoteproof.cli_options import (
    ANSWER,
    ANSWER_PARAMETERS,
    AnswerChoices,
    ContextName,
    RetrieverName,
    StrictnessName,
)
from quoteproof.retrieval_settings import RetrieverName as RetrieverKind
from quoteproof.server.api_bodies import ASK_LIMITS, SERVER_KEEPS, AskRequest
from quoteproof.strategies.options import AnswerOptions, answer_field_types
from quoteproof.strategies.registry import mode_help

FIELDS = dataclasses.fields(AnswerOptions)


def command_options(name: str) -> dict[str, Any]:
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    return {param.name: param for param in command.params}


@pytest.mark.parametrize("command", ["ask", "eval"])
def test_every_answer_option_is_an_option_made_from_its_field(command: str) -> None:
    options = command_options(command)
    for field in FIELDS:
        text = field.metadata["option"]
        option = options[ANSWER_PARAMETERS.get(field.name, field.name)]
        assert option.opts == list(text.flags)
        assert option.help == (mode_help() if field.name == "mode" else text.help)
        assert option.default == field.default
        assert (option.min, option.max) == (text.minimum, text.maximum)


def test_the_api_ask_body_holds_the_same_fields_but_those_the_server_keeps() -> None:
    properties = AskRequest.model_json_schema()["properties"]
    assert list(properties) == [
        "question",
        *(field.name for field in FIELDS if field.name not in SERVER_KEEPS),
        "collections",
    ]
    for field in FIELDS:
        if field.name in SERVER_KEEPS:
            continue
        text, schema = field.metadata["option"], properties[field.name]
        assert schema["default"] == field.default
        assert schema["description"] == (mode_help() if field.name == "mode" else text.help)
        assert schema.get("minimum") == text.minimum
        assert schema.get("maximum") == ASK_LIMITS.get(field.name, text.maximum)


def test_the_cli_choices_give_the_answer_options_they_name() -> None:

    seen: list[AnswerOptions] = []
    probe = typer.Typer()

    @probe.command()
    @with_option_groups
    def run(choices: AnswerChoices = ANSWER) -> None:
        seen.append(choices.options())

    args = ["--mode", "cite", "--strictness", "lenient", "--max-steps", "3", "--top-k", "7"]
    result = CliRunner().invoke(probe, [*args, "--threshold", "80"])
    assert result.exit_code == 0, result.output
    assert seen == [AnswerOptions("cite", "lenient", 3, 7, 80.0)]
    assert type(seen[0].mode) is str and type(seen[0].strictness) is str


def test_the_cli_choices_are_the_values_the_library_takes() -> None:
    kinds = answer_field_types()
    for name, choices in (("context", ContextName), ("strictness", StrictnessName)):
        assert [choice.value for choice in choices] == list(get_args(kinds[name]))
    assert [choice.value for choice in RetrieverName] == list(get_args(RetrieverKind))
