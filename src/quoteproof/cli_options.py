"""The options the `quoteproof` commands share: choices, single options, and the
option groups (`cli_groups`) that turn several options into one settings object.

- `RetrievalOptions` (search, ask, calibrate, eval) -> `RetrievalSettings`;
- `BackendOptions` (ask, eval, mcp, serve): a `llm.registry.BackendSpec`, made from
  the backend registry;
- `AnswerChoices` (ask, eval) -> `service.AnswerOptions`.

`RETRIEVAL`, `BACKEND` and `ANSWER` are the groups' defaults, for the commands'
signatures (`param: RetrievalOptions = RETRIEVAL`).

This module loads none of the library: defaults come from `quoteproof.defaults`, and
the settings objects are built by importing their modules when a command runs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, make_dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

import typer

from quoteproof.cli_groups import option_group
from quoteproof.defaults import (
    DEFAULT_DEPTH,
    DEFAULT_RERANK_CANDIDATES,
    DEFAULT_RERANK_KEEP,
    DEFAULT_RRF_K,
)
from quoteproof.llm.registry import BackendSpec, OptionText, backend_names, option_help
from quoteproof.strategies.options import AnswerOptions
from quoteproof.strategies.registry import mode_help, modes, strategy

if TYPE_CHECKING:
    from quoteproof.service import RetrievalSettings
    from quoteproof.service import RetrieverName as RetrieverKind


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


LLMName = StrEnum("LLMName", [(name, name) for name in backend_names()])  # type: ignore[misc]
"""`--llm`'s choices: the registry's backends (`llm.registry`)."""


ModeName = StrEnum("ModeName", [(mode, mode) for mode in modes()])  # type: ignore[misc]
"""`--mode`'s choices: the registry's modes (`strategies.registry`)."""
DEFAULT_MODE = ModeName(modes()[0])


class ContextName(StrEnum):
    paragraphs = "paragraphs"
    triplets = "triplets"
    both = "both"
    whole = "whole"


class StrictnessName(StrEnum):
    strict = "strict"
    lenient = "lenient"


class RetrieverName(StrEnum):
    bm25 = "bm25"
    dense = "dense"
    hybrid = "hybrid"


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
EmbedModelOption = Annotated[
    str | None,
    typer.Option(
        "--embed-model",
        help="Embedding model (local directory or name). Default: the index's, or "
        "all-MiniLM-L6-v2 for a new index.",
    ),
]


def _answer_option(name: str, help: str | None = None) -> Any:
    """The option of the `AnswerOptions` field `name`: its flags, help (or `help`)
    and bounds."""
    text = next(f for f in fields(AnswerOptions) if f.name == name).metadata["option"]
    return typer.Option(
        *text.flags,
        help=help or text.help,
        min=text.minimum,
        max=text.maximum,
        show_default=text.show_default,
    )


ThresholdOption = Annotated[float, _answer_option("threshold")]
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


@option_group
@dataclass(frozen=True)
class RetrievalOptions:
    """`--retriever`, `--embed-model`, the reranker's and fusion's options."""

    retriever: Annotated[
        RetrieverName | None,
        typer.Option(
            "--retriever",
            help="bm25, dense or hybrid (RRF of both). Default: hybrid when the index has vectors.",
        ),
    ] = None
    embed_model: EmbedModelOption = None
    rerank_model: Annotated[
        str | None,
        typer.Option("--rerank-model", help="Local cross-encoder directory to rerank with."),
    ] = None
    rerank_candidates: Annotated[
        int, typer.Option("--rerank-candidates", min=1, help="Fused hits the reranker reorders.")
    ] = DEFAULT_RERANK_CANDIDATES
    rerank_keep: Annotated[
        int, typer.Option("--rerank-keep", min=1, help="Reranked hits kept.")
    ] = DEFAULT_RERANK_KEEP
    rrf_k: Annotated[int, typer.Option("--rrf-k", min=0, help="RRF constant k.")] = DEFAULT_RRF_K
    bm25_weight: Annotated[
        float, typer.Option("--bm25-weight", min=0.0, help="Weight of the BM25 list in fusion.")
    ] = 1.0
    dense_weight: Annotated[
        float, typer.Option("--dense-weight", min=0.0, help="Weight of the dense list in fusion.")
    ] = 1.0
    depth: Annotated[
        int, typer.Option("--fusion-depth", min=1, help="Hits each list contributes to fusion.")
    ] = DEFAULT_DEPTH

    @property
    def retriever_name(self) -> RetrieverKind | None:
        """The retriever asked for, or None for the index's default."""
        return self.retriever.value if self.retriever else None

    def settings(self) -> RetrievalSettings:
        """The retrieval settings these options name."""
        from quoteproof.service import RetrievalSettings

        return RetrievalSettings(**{**asdict(self), "retriever": self.retriever_name})


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
    group = make_dataclass("BackendOptions", spread, bases=(BackendSpec,), frozen=True)
    group.__doc__ = "The backend options (`llm.registry.BackendSpec`): `--llm`, `--model`, ..."
    return option_group(group)


if TYPE_CHECKING:
    BackendOptions = BackendSpec
else:
    BackendOptions = _backend_options()


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
    spread = []
    for answer_field in fields(AnswerOptions):
        name = answer_field.name
        option = _answer_option(name, mode_help() if name == "mode" else None)
        kind = kinds.get(name, type(answer_field.default))
        default = chosen.get(name, answer_field.default)
        spread.append((ANSWER_PARAMETERS.get(name, name), Annotated[kind, option], default))
    group = make_dataclass(
        "AnswerChoices", spread, namespace={"options": _answer_options}, frozen=True
    )
    group.__doc__ = "How to answer: the fields of `AnswerOptions`, as options of the same names."
    return option_group(group)


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
