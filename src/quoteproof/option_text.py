"""`OptionText`: how a field of an options object is given on the command line.

The options objects (`llm.registry.BackendSpec`, `strategies.options.AnswerOptions`,
`retrieval_settings.RetrievalSettings`) carry it in each field's metadata (key
`"option"`); the CLI makes its options from them (`cli_options`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OptionText"]


@dataclass(frozen=True)
class OptionText:
    """How a field of an options object is given on the command line: its `flags`, a
    short `help`, the environment variable it may come from, its least value, whether
    its default is shown, its greatest value."""

    flags: tuple[str, ...]
    help: str
    envvar: str | None = None
    minimum: float | None = None
    show_default: bool = True
    maximum: float | None = None
