"""The options the `quoteproof` commands share: choices, single options, and the
option groups (`cli_groups`) that turn several options into one settings object.

- `RetrievalOptions` (search, ask, calibrate, eval) -> `RetrievalSettings`;
- `BackendOptions` (ask, eval, mcp, serve) -> a `Backend`, or the server's config;
- `AnswerChoices` (ask, eval) -> `service.AnswerOptions`.

`RETRIEVAL`, `BACKEND` and `ANSWER` are the groups' defaults, for the commands'
signatures (`param: RetrievalOptions = RETRIEVAL`).

This module loads none of the library: defaults come from `quoteproof.defaults`, and
the settings objects are built by importing their modules when a command runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from quoteproof.cli_groups import option_group
from quoteproof.defaults import (
    DEFAULT_ASK_TOP_K,
    DEFAULT_CONTEXT,
    DEFAULT_DEPTH,
    DEFAULT_MAX_STEPS,
    DEFAULT_RERANK_CANDIDATES,
    DEFAULT_RERANK_KEEP,
    DEFAULT_RRF_K,
    DEFAULT_THRESHOLD,
)
from quoteproof.llm.servers import DEFAULT_TIMEOUT_S, OLLAMA_URL
from quoteproof.strategies.registry import mode_help, modes, strategy

if TYPE_CHECKING:
    from quoteproof.llm.base import Backend
    from quoteproof.llm.select import BackendName
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


class LLMName(StrEnum):
    extractive = "extractive"
    openai = "openai"
    anthropic = "anthropic"
    local = "local"


ModeName = StrEnum("ModeName", [(mode, mode) for mode in modes()])  # type: ignore[misc]
"""`--mode`'s choices: the registry's modes (`strategies.registry`)."""
DEFAULT_MODE = ModeName(modes()[0])


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


@option_group
@dataclass(frozen=True)
class BackendOptions:
    """`--llm`, `--model` and the options of the model server or local model."""

    llm: Annotated[
        LLMName | None,
        typer.Option(
            "--llm",
            envvar="QUOTEPROOF_LLM",
            help="Backend: extractive (no model), openai (any OpenAI-compatible server), "
            "anthropic, or local (a GGUF model run in-process; the local extra). "
            "Default: openai when a model is named, else extractive.",
        ),
    ] = None
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="Model server URL. Default: OPENAI_BASE_URL or ANTHROPIC_BASE_URL; else, "
            f"for --llm openai, a local Ollama ({OLLAMA_URL}). A cloud API is used only "
            "when named here, in those variables, or with --cloud.",
        ),
    ] = None
    cloud: Annotated[
        bool,
        typer.Option(
            "--cloud",
            envvar="QUOTEPROOF_CLOUD",
            help="Use the provider's own cloud API (api.openai.com, api.anthropic.com): "
            "your question and the retrieved passages leave this machine. Without it, "
            "--llm openai uses --base-url, OPENAI_BASE_URL or a local Ollama, and --llm "
            "anthropic needs --base-url or ANTHROPIC_BASE_URL.",
        ),
    ] = False
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            envvar="QUOTEPROOF_MODEL",
            help="Model name; with --llm local, the GGUF file (default: the bundled SmolLM2).",
        ),
    ] = None
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            help="API key of the model server (default: OPENAI_API_KEY or ANTHROPIC_API_KEY).",
            show_default=False,
        ),
    ] = None
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=1.0,
            help="Seconds one model request may take in all, from sending it to the "
            "reply's last byte (retries included).",
        ),
    ] = DEFAULT_TIMEOUT_S
    grammar: Annotated[
        bool | None,
        typer.Option(
            "--grammar/--no-grammar",
            help="Constrain the model's output to the answer protocol with a grammar. "
            "Default: on for --llm local; for --llm openai only with --grammar (servers "
            "that read llama.cpp grammars: llama.cpp, llama_cpp.server).",
            show_default=False,
        ),
    ] = None
    threads: Annotated[
        int | None,
        typer.Option(
            "--threads", min=1,
            help="--llm local: CPU threads, fixed. Default: for each answer, the cores "
            "no other process is busy on (at least 1), so a shared CPU slows it little.",
            show_default=False,
        ),
    ] = None  # fmt: skip
    ctx: Annotated[
        int, typer.Option("--ctx", min=256, help="--llm local: context window in tokens.")
    ] = DEFAULT_CONTEXT

    @property
    def llm_name(self) -> BackendName | None:
        """The backend asked for, or None to choose by whether a model is named."""
        return self.llm.value if self.llm else None

    def backend(self) -> Backend:
        """The backend these options name (`make_backend`); raises `QuoteproofError`."""
        from quoteproof.llm.select import make_backend

        return make_backend(
            self.llm_name,
            model=self.model, base_url=self.base_url, cloud=self.cloud,
            api_key=self.api_key, timeout=self.timeout, grammar=self.grammar,
            threads=self.threads, context=self.ctx,
        )  # fmt: skip


@option_group
@dataclass(frozen=True)
class AnswerChoices:
    """How to answer: `--mode`, `--strictness`, `--max-steps`, `--top-k`, `--threshold`."""

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

    def options(self) -> AnswerOptions:
        """The answer options these choices name."""
        from quoteproof.service import AnswerOptions

        return AnswerOptions(
            strategy(self.mode).mode, self.strictness.value, self.max_steps, self.top_k,
            self.threshold,
        )  # fmt: skip


RETRIEVAL = RetrievalOptions()
BACKEND = BackendOptions()
ANSWER = AnswerChoices()
