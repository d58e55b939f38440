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
from typing import TYPE_CHECKING, Annotated, get_type_hints

import typer

from quoteproof.cli_groups import option_group
from quoteproof.defaults import (
    DEFAULT_ASK_TOP_K,
    DEFAULT_DEPTH,
    DEFAULT_MAX_STEPS,
    DEFAULT_RERANK_CANDIDATES,
    DEFAULT_RERANK_KEEP,
    DEFAULT_RRF_K,
    DEFAULT_THRESHOLD,
)
from quoteproof.llm.registry import BackendSpec, OptionText, backend_names, option_help
from quoteproof.strategies.registry import mode_help, modes, strategy

if TYPE_CHECKING:
    from quoteproof.retrieval.retriever import RetrievalSettings
    from quoteproof.retrieval.retriever import RetrieverName as RetrieverKind
    from quoteproof.service import AnswerOptions


class AnswerFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


class IngestFormat(StrEnum):
    text = "text"
    json = "json"


class SearchFormat(StrEnum):
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
EmbedModelOption = Annotated[
    str | None,
    typer.Option(
        "--embed-model",
        help="Embedding model (local directory or name). Default: the index's, or "
        "all-MiniLM-L6-v2 for a new index.",
    ),
]
ThresholdOption = Annotated[
    float,
    typer.Option("--threshold", min=0.0, max=100.0, help="Fuzzy quote match score 0-100."),
]
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
        from quoteproof.retrieval.retriever import RetrievalSettings

        return RetrievalSettings(
            retriever=self.retriever_name,
            rrf_k=self.rrf_k,
            bm25_weight=self.bm25_weight,
            dense_weight=self.dense_weight,
            depth=self.depth,
            embed_model=self.embed_model,
            rerank_model=self.rerank_model,
            rerank_candidates=self.rerank_candidates,
            rerank_keep=self.rerank_keep,
        )


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


@option_group
@dataclass(frozen=True)
class AnswerChoices:
    """How to answer: `--mode`, `--strictness`, `--max-steps`, `--top-k`, `--threshold`,
    `--context`, `--document`, the fields of `AnswerOptions` by the same names."""

    mode: Annotated[ModeName, typer.Option("--mode", help=mode_help())] = DEFAULT_MODE
    strictness: Annotated[
        StrictnessName,
        typer.Option(
            "--strictness",
            help="cite mode: strict refuses unless every sentence cites a source; "
            "lenient drops uncited sentences and marks the answer partial.",
        ),
    ] = StrictnessName.strict
    max_steps: Annotated[
        int, typer.Option("--max-steps", min=1, help="agent mode: most model calls.")
    ] = DEFAULT_MAX_STEPS
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Sources given to the model.")] = (
        DEFAULT_ASK_TOP_K
    )
    threshold: ThresholdOption = DEFAULT_THRESHOLD
    context_form: Annotated[
        ContextName,
        typer.Option(
            "--context",
            help="What the model is given: retrieved paragraphs; knowledge-graph "
            "triplets (from `kg import`, or extracted by the model) alone; both; or "
            "whole: every passage of the documents in scope, when they fit the model's "
            "context window (else retrieval, with a notice).",
        ),
    ] = ContextName.paragraphs
    document: Annotated[
        str | None,
        typer.Option(
            "--document",
            help="--context whole: give the model only this document (an id from "
            "`documents list`, or its file).",
            show_default=False,
        ),
    ] = None

    def options(self) -> AnswerOptions:
        """The answer options these choices name."""
        from quoteproof.service import AnswerOptions

        chosen = {**asdict(self), "mode": strategy(self.mode).mode, "strictness": self.strictness}
        chosen["context"] = chosen.pop("context_form")  # `context` is the backend's --ctx
        return AnswerOptions(**chosen)


RETRIEVAL = RetrievalOptions()
BACKEND = BackendOptions()
ANSWER = AnswerChoices()
