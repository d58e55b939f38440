"""Help that reads at 80 columns: the `quoteproof` commands' help in click's plain
layout (typer's panels cut long words and URLs: "ANTHROPIC_BASE_UR…"), arguments
named in capitals (QUESTION, not `{question}`), option values named in a word
(TEXT, INT, NUM, PATH or the choices) instead of typer's `<str>`, each command's
whole first line in a group's list of commands (wrapped, not cut), and an unknown
option that names a choice of another option answered with that option ("No such
option: --json Did you mean --format json?").

`HelpCommand` and `HelpGroup` are the classes every command and group is made with
(`cli.command`, the `typer.Typer` groups).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from typer._click.exceptions import NoSuchOption
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

__all__ = ["HelpCommand", "HelpGroup", "value_name"]

_VALUE_NAMES = {
    "str": "TEXT",
    "int": "INT",
    "int range": "INT",
    "float": "NUM",
    "float range": "NUM",
    "path": "PATH",
}


def value_name(typer_type: str) -> str:
    """The word that stands for an option's value in the help, from typer's type
    placeholder (`<str>`, `<int range>`, `<list[str]>`, `<a|b>`): TEXT, INT, NUM
    or PATH, the choices themselves (`a|b`), else the type's name in capitals."""
    label = typer_type.removeprefix("<").removesuffix(">")
    if label.startswith("list[") and label.endswith("]"):
        label = label[5:-1]
    if "|" in label:
        return label
    return _VALUE_NAMES.get(label, label.upper())


class _Argument(TyperArgument):
    """An argument named in capitals, without typer's type placeholder."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        name = self.display_name_raw
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")


class _Option(TyperOption):
    """An option whose value is named in a word (`value_name`)."""

    def display_type_rich(self, ctx: Any) -> str | None:
        if self.metavar is not None:
            return self.metavar
        return value_name(self.display_type(ctx))


def _plain_parameters(command: Any) -> None:
    """Give `command`'s parameters the plain help of `_Argument` and `_Option`."""
    for param in command.params:
        if type(param) is TyperArgument:
            param.__class__ = _Argument
            if param.metavar is None and param.name is not None:
                param.metavar = param.name.upper()
        elif type(param) is TyperOption:
            param.__class__ = _Option


def _first_line(command: Any) -> str:
    """A command's whole first line of help: its `short_help`, else the first
    paragraph of its help, joined into one line."""
    text = str(command.short_help or command.help or "").strip()
    return " ".join(text.split("\n\n")[0].split())


def _choices(param: Any) -> list[str]:
    """The values an option takes when its type is a choice of an enum, else []."""
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return [str(member.value) for member in annotation]
    return []


def _choice_options(command: Any, unknown: str) -> list[str]:
    """The options of `command` that take the unknown option `unknown` ("--json") as
    a choice, each written with it ("--format json")."""
    value = unknown.lstrip("-")
    return [
        f"{param.opts[0]} {value}"
        for param in command.params
        if isinstance(param, TyperOption) and value in _choices(param)
    ]


class HelpCommand(TyperCommand):
    """A command with the plain help of this module."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain_parameters(self)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as error:
            meant = _choice_options(self, error.option_name)
            if not meant:
                raise
            also = [*meant, *(error.possibilities or ())]
            raise NoSuchOption(error.option_name, possibilities=also, ctx=ctx) from None

    def get_short_help_str(self, limit: int = 45) -> str:
        return _first_line(self)


class HelpGroup(TyperGroup):
    """A group with the plain help of this module; its commands are listed with
    their whole first line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain_parameters(self)

    def get_short_help_str(self, limit: int = 45) -> str:
        return _first_line(self)
