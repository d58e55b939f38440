"""The options the `quoteproof` commands share: choices, single options, and the
option groups (`cli_groups`) that turn several options into one settings object.

- `RetrievalOptions` (search, ask, calibrate, eval) -> `RetrievalSettings`;
- `BackendOptions` (ask, eval, mcp, serve): a `llm.registry.BackendSpec`, made from
  the backend registry;
- `AnswerChoices` (ask, eval) -> `service.AnswerOptions`;
- `GraderOptions` (eval): `--grader` and the backend options again, as
  `--grader-llm`, `--grader-model`, ..., for the model that grades the answers.

`RETRIEVAL`, `BACKEND`, `ANSWER` and `GRADER` are the groups' defaults, for the commands'
signatures (`param: RetrievalOptions = RETRIEVAL`).

This module loads none of the library: the registries and options objects come from
`service.options` (which loads none either), defaults from `quoteproof.defaults`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, fields, make_dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, get_args, get_type_hints

import typer

from quoteproof.cli_groups import option_group
from quoteproof.service.options import (
    AnswerOptions,
    BackendSpec,
    OptionText,
    RetrievalSettings,
    backend_names,
    mode_help,
    modes,
    option_help,
    strategy,
)
from quoteproof.service.options import RetrieverName as RetrieverKind

T = TypeVar("T")


class AnswerFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


class TextOrJson(StrEnum):
    """The `--format` of ingest, show and search."""

    text = "text"
    json = "json"
    jsonl = "jsonl"


def _choices(name: str, values: Iterable[str]) -> Any:
    """An option's choices: the StrEnum `name` with one member per value of `values`,
    named as its value."""
    return StrEnum(name, [(value, value) for value in values])


LLMName = _choices("LLMName", backend_names())
"""`--llm`'s choices: the registry's backends (`llm.registry`)."""
ModeName = _choices("ModeName", modes())
"""`--mode`'s choices: the registry's modes (`strategies.registry`)."""
DEFAULT_MODE = ModeName(modes()[0])
ContextName = _choices("ContextName", ("paragraphs", "triplets", "both", "whole"))
"""`--context`'s choices: the context forms (`model.ContextForm`)."""
StrictnessName = _choices("StrictnessName", ("strict", "lenient"))
"""`--strictness`'s choices (`quoting.citations.Strictness`)."""
RetrieverName = _choices("RetrieverName", get_args(RetrieverKind))
"""`--retriever`'s choices: the retrievers (`retrieval_settings`)."""


CollectionsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--collection",
        help="Only documents of this collection (repeat for several; default: all).",
        show_default=False,
    ),
]
IndexOption = Annotated[
    str,
    typer.Option(
        "--index",
        help="Index: a directory (SQLite) or a postgresql:// URL.",
        envvar="QUOTEPROOF_INDEX",
    ),
]
MaxFileOption = Annotated[
    float, typer.Option("--max-file-mb", min=0.001, help="Refuse files larger than this (MB).")
]


def _field_option(settings: type, name: str, help: str | None = None) -> Any:
    """The option of the field `name` of the options object `settings`
    (`AnswerOptions`, `RetrievalSettings`): the flags, help (or `help`) and bounds
    its `OptionText` gives."""
    text = next(f for f in fields(settings) if f.name == name).metadata["option"]
    return typer.Option(
        *text.flags,
        help=help or text.help,
        min=text.minimum,
        max=text.maximum,
        show_default=text.show_default,
    )


def _options_of(
    settings: type,
    kinds: dict[str, Any],
    defaults: dict[str, Any] | None = None,
    helps: dict[str, str] | None = None,
) -> list[tuple[str, Any, Any]]:
    """The fields of the options object `settings` as an option group's
    (`make_dataclass`'s `(name, type, default)`): each annotated with its option
    (`_field_option`, its help from `helps` where given), of the type `kinds` gives
    (else its default's), with the default `defaults` gives (else its own)."""
    spread = []
    for setting in fields(settings):
        name = setting.name
        option = _field_option(settings, name, (helps or {}).get(name))
        kind = kinds.get(name, type(setting.default))
        spread.append((name, Annotated[kind, option], (defaults or {}).get(name, setting.default)))
    return spread


EmbedModelOption = Annotated[str | None, _field_option(RetrievalSettings, "embed_model")]
ThresholdOption = Annotated[float, _field_option(AnswerOptions, "threshold")]
AuditKeyOption = Annotated[
    Path | None,
    typer.Option(
        "--audit-key",
        help="The key file that signs the audit log, kept outside the index "
        "(made on first use). Default: $QUOTEPROOF_AUDIT_KEY, else audit.key in "
        "~/.config/quoteproof.",
        show_default=False,
    ),
]


def _group(name: str, doc: str, spread: list[tuple[str, Any, Any]], **made: Any) -> type:
    """The option group `name` with the docstring `doc` and the fields `spread`
    (`(name, type, default)`); `made` as `make_dataclass` takes it (bases, namespace)."""
    group = make_dataclass(name, spread, frozen=True, **made)
    group.__doc__ = doc
    return option_group(group)


def _options_from(settings: type, kinds: dict[str, Any]) -> Callable[[type[T]], type[T]]:
    """A class decorator: the class, made an option group whose fields are those of
    the options object `settings` (`_options_of`, with `kinds`); its docstring and
    methods stay."""

    def made(cls: type[T]) -> type[T]:
        spread = _options_of(settings, kinds)
        return _group(cls.__name__, cls.__doc__ or "", spread, bases=(cls,))

    return made


@_options_from(
    RetrievalSettings,
    {"retriever": RetrieverName | None, "embed_model": str | None, "rerank_model": str | None},
)
class RetrievalOptions:
    """`--retriever`, `--embed-model`, the reranker's and fusion's options: the fields
    of `RetrievalSettings`, each with the option its field carries (`retrieval_settings`),
    `--retriever`'s choices `RetrieverName`."""

    def settings(self) -> RetrievalSettings:
        """The retrieval settings these options name."""
        chosen = {f.name: getattr(self, f.name) for f in fields(RetrievalSettings)}
        retriever = chosen["retriever"]
        return RetrievalSettings(**{**chosen, "retriever": retriever and str(retriever)})


def _backend_options() -> type[BackendSpec]:
    """`BackendSpec` as an option group: each field an option with the flags and
    help the backend registry gives it (`llm.registry.option_help`), `--llm`'s
    choices the registry's backends."""
    hints = get_type_hints(BackendSpec)
    spread = []
    for spec_field in fields(BackendSpec):
        text: OptionText = spec_field.metadata["option"]
        kind = LLMName | None if spec_field.name == "llm" else hints[spec_field.name]
        option = typer.Option(
            *text.flags,
            help=option_help(spec_field.name),
            envvar=text.envvar,
            min=text.minimum,
            show_default=text.show_default,
        )
        spread.append((spec_field.name, Annotated[kind, option], spec_field.default))
    doc = "The backend options (`llm.registry.BackendSpec`): `--llm`, `--model`, ..."
    return _group("BackendOptions", doc, spread, bases=(BackendSpec,))


if TYPE_CHECKING:
    BackendOptions = BackendSpec
else:
    BackendOptions = _backend_options()


GRADER_PREFIX = "grader_"


def _grader_flag(flag: str) -> str:
    """`--model` as `--grader-model`, `--grammar/--no-grammar` as
    `--grader-grammar/--no-grader-grammar`."""
    parts = []
    for part in flag.split("/"):
        negated = part.startswith("--no-")
        name = part[len("--no-") :] if negated else part[len("--") :]
        parts.append(f"--{'no-' if negated else ''}grader-{name}")
    return "/".join(parts)


def _grader_spec(self: Any) -> BackendSpec | None:
    """The grader's backend spec: None when `--grader` and every grader option were
    left out (no grading)."""
    chosen = asdict(self)
    asked = chosen.pop("grader")
    spec_fields = {name[len(GRADER_PREFIX) :]: value for name, value in chosen.items()}
    llm = spec_fields.pop("llm")
    spec = BackendSpec(llm=str(llm) if llm else None, **spec_fields)
    return spec if asked or spec.llm or spec.model else None


def _grader_options() -> type:
    """`--grader` and the `BackendSpec` fields again, prefixed (`--grader-llm`,
    `--grader-model`, `--grader-base-url`, ...), with the help of the backend
    options and no environment variables; `spec()` gives the grader's
    `BackendSpec`, or None when grading was not asked for."""
    hints = get_type_hints(BackendSpec)
    spread: list[tuple[str, Any, Any]] = [
        (
            "grader",
            Annotated[
                bool,
                typer.Option(
                    "--grader",
                    help="Grade every answer to a question with a gold_answer (1-5 and "
                    "CORRECT/INCORRECT) with the model the --grader-* options name; "
                    "implied by --grader-llm or --grader-model. See docs/grading.md.",
                ),
            ],
            False,
        )
    ]
    for spec_field in fields(BackendSpec):
        text: OptionText = spec_field.metadata["option"]
        kind = LLMName | None if spec_field.name == "llm" else hints[spec_field.name]
        option = typer.Option(
            *(_grader_flag(flag) for flag in text.flags),
            help="Grader: " + option_help(spec_field.name).replace("--llm ", "--grader-llm "),
            min=text.minimum,
            show_default=text.show_default,
        )
        name = GRADER_PREFIX + spec_field.name
        spread.append((name, Annotated[kind, option], spec_field.default))
    doc = "The grader of `eval`: `--grader`, `--grader-llm`, `--grader-model`, ..."
    return _group("GraderOptions", doc, spread, namespace={"spec": _grader_spec})


if TYPE_CHECKING:

    class GraderOptions:
        """The grader of `eval` (see `_grader_options`)."""

        def spec(self) -> BackendSpec | None:
            """The grader's backend spec, or None for no grading."""
            ...

else:
    GraderOptions = _grader_options()


ANSWER_PARAMETERS = {"context": "context_form"}
"""Answer fields given to the command under another name: `context` is the
backend's `--ctx` (`BackendSpec.context`)."""


def _answer_options(self: Any) -> AnswerOptions:
    """The answer options these choices name."""
    chosen = {**asdict(self), "mode": strategy(self.mode).mode, "strictness": str(self.strictness)}
    for name, parameter in ANSWER_PARAMETERS.items():
        chosen[name] = str(chosen.pop(parameter))
    return AnswerOptions(**chosen)


def _answer_choices() -> type:
    """`AnswerOptions` as an option group: each field an option with the flags, help
    and bounds its field carries (`strategies.options`); `--mode`'s choices and help
    from the mode registry, `--strictness`'s from `StrictnessName`, `--context`'s
    from `ContextName`, the others of their default's type. `options()` gives the
    `AnswerOptions` they name."""
    kinds: dict[str, Any] = {
        "mode": ModeName,
        "strictness": StrictnessName,
        "context": ContextName,
        "document": str | None,
    }
    chosen: dict[str, Any] = {
        "mode": DEFAULT_MODE,
        "strictness": StrictnessName.strict,
        "context": ContextName.paragraphs,
    }
    spread = [
        (ANSWER_PARAMETERS.get(name, name), kind, default)
        for name, kind, default in _options_of(AnswerOptions, kinds, chosen, {"mode": mode_help()})
    ]
    doc = "How to answer: the fields of `AnswerOptions`, as options of the same names."
    return _group("AnswerChoices", doc, spread, namespace={"options": _answer_options})


if TYPE_CHECKING:

    class AnswerChoices:
        """How to answer (see `_answer_choices`)."""

        def options(self) -> AnswerOptions:
            """The answer options these choices name."""
            ...

else:
    AnswerChoices = _answer_choices()


RETRIEVAL = RetrievalOptions()
BACKEND = BackendOptions()
ANSWER = AnswerChoices()
GRADER = GraderOptions()
