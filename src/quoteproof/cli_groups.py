"""Option groups for typer commands: one dataclass stands for several options.

A command parameter annotated with an `@option_group` dataclass is replaced, in the
signature typer reads, by the dataclass's fields (each an `Annotated[..., typer.Option]`
with its default); when the command runs, those options are collected back into one
instance of the dataclass. So a group of options (and the code that turns them into
a settings object) is written once and used by every command that takes it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints

_GROUP_MARK = "__quoteproof_option_group__"

C = TypeVar("C", bound=Callable[..., Any])
T = TypeVar("T")


def option_group(cls: type[T]) -> type[T]:
    """Mark the dataclass `cls` as an option group (see the module docstring).
    Every field needs a default and an `Annotated[..., typer.Option(...)]` type."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} is not a dataclass")
    setattr(cls, _GROUP_MARK, True)
    return cls


def _group_parameters(cls: type) -> list[inspect.Parameter]:
    hints = get_type_hints(cls, include_extras=True)
    return [
        inspect.Parameter(
            field.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=field.default,
            annotation=hints[field.name],
        )
        for field in dataclasses.fields(cls)
    ]


def with_option_groups(command: C) -> C:
    """Return `command` with each option-group parameter spread into its options
    for typer, and gathered back into the group's dataclass when it is called.
    Apply it below `@app.command()`. Raises TypeError when two options share a name."""
    hints = get_type_hints(command, include_extras=True)
    parameters: list[inspect.Parameter] = []
    groups: dict[str, tuple[type, tuple[str, ...]]] = {}
    for parameter in inspect.signature(command).parameters.values():
        annotation = hints[parameter.name]
        if getattr(annotation, _GROUP_MARK, False):
            spread = _group_parameters(annotation)
            groups[parameter.name] = (annotation, tuple(p.name for p in spread))
            parameters.extend(spread)
        else:
            parameters.append(parameter.replace(annotation=annotation))
    names = [p.name for p in parameters]
    if len(set(names)) != len(names):
        raise TypeError(f"{command.__name__}: two options share a name in {names}")

    @functools.wraps(command)
    def run(**options: Any) -> Any:
        for name, (cls, fields) in groups.items():
            options[name] = cls(**{field: options.pop(field) for field in fields})
        return command(**options)

    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    return run  # type: ignore[return-value]
