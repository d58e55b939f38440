"""The option groups (`cli_groups`) that one command takes, beside the shared ones
of `cli_options`:

- `IngestOptions` (ingest) -> `ingest.parsing.IngestSettings`;
- `EvalOptions` (eval) -> `service.evaluate.EvalRequest`;
- `ServeOptions` (serve): where and how the server listens and takes uploads.

Like `cli_options`, this module loads none of the library: the settings objects
are built by importing their modules when a command runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from quoteproof.cli_groups import option_group
from quoteproof.cli_options import MaxFileOption
from quoteproof.defaults import (
    DEFAULT_JOBS,
    DEFAULT_MAX_FILE_MB,
    DEFAULT_OVERLAP_TOKENS,
    DEFAULT_PARSE_MEMORY_MB,
    DEFAULT_PARSE_SECONDS,
    DEFAULT_SECTION_TOKENS,
    DEFAULT_WINDOW_TOKENS,
)

if TYPE_CHECKING:
    from quoteproof.service.evaluate import EvalRequest
    from quoteproof.service.ingest import IngestSettings


@option_group
@dataclass(frozen=True)
class IngestOptions:
    """How files are parsed and chunked: limits, OCR, chunk sizes, worker processes."""

    max_file_mb: MaxFileOption = DEFAULT_MAX_FILE_MB
    parse_memory_mb: Annotated[
        float,
        typer.Option(
            "--parse-memory-mb",
            min=1,
            help="Memory (MB) one file may use to parse, plus 64 per MB of the file.",
        ),
    ] = DEFAULT_PARSE_MEMORY_MB
    parse_seconds: Annotated[
        float,
        typer.Option(
            "--parse-seconds",
            min=1,
            help="CPU seconds one file may use to parse, plus 10 per MB of the file.",
        ),
    ] = DEFAULT_PARSE_SECONDS
    ocr: Annotated[
        bool,
        typer.Option("--ocr", help="Run Tesseract on PDF pages without a text layer."),
    ] = False
    section_tokens: Annotated[
        int, typer.Option("--section-tokens", min=1, help="A section up to this size is one chunk.")
    ] = DEFAULT_SECTION_TOKENS
    window_tokens: Annotated[
        int, typer.Option("--window-tokens", min=1, help="Window size for longer sections.")
    ] = DEFAULT_WINDOW_TOKENS
    overlap_tokens: Annotated[
        int, typer.Option("--overlap-tokens", min=0, help="Tokens two windows share.")
    ] = DEFAULT_OVERLAP_TOKENS
    jobs: Annotated[
        int, typer.Option("--jobs", min=1, help="Worker processes that parse files.")
    ] = DEFAULT_JOBS

    def settings(self, collection: str) -> IngestSettings:
        """The ingest settings these options name, new files going to `collection`."""
        from quoteproof.service.ingest import ChunkSettings, IngestSettings, ParseLimits

        return IngestSettings(
            max_file_mb=self.max_file_mb,
            ocr=self.ocr,
            chunking=ChunkSettings(self.section_tokens, self.window_tokens, self.overlap_tokens),
            collection=collection,
            limits=ParseLimits(self.parse_memory_mb, self.parse_seconds),
        )


@option_group
@dataclass(frozen=True)
class EvalOptions:
    """What `eval` reports and where: recall depths, a sample, the report's files."""

    recall_k: Annotated[
        list[str] | None,
        typer.Option(
            "--recall-k",
            help="Also report retrieval recall at these k (repeat, or 1,10,20); always at --top-k.",
            show_default=False,
        ),
    ] = None
    sample_size: Annotated[
        int | None,
        typer.Option(
            "--sample",
            min=1,
            help="Ask only N questions: the first N, or N drawn with --seed.",
            show_default=False,
        ),
    ] = None
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed", help="Draw the --sample at random with this seed.", show_default=False
        ),
    ] = None
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Where to write the run (default: eval-<set name>.json)."
        ),
    ] = None
    html_report: Annotated[
        Path | None,
        typer.Option("--html", help="Where to write the HTML report (default: beside the JSON)."),
    ] = None
    compare: Annotated[
        Path | None,
        typer.Option("--compare", help="An earlier run (its JSON): show what changed since."),
    ] = None

    def request(self, evalset: Path, recall_ks: tuple[int, ...]) -> EvalRequest:
        """The evaluation of the set at `evalset` these options name."""
        from quoteproof.service.evaluate import EvalRequest

        return EvalRequest(
            evalset,
            recall_ks,
            self.sample_size,
            self.seed,
            self.output,
            self.html_report,
            self.compare,
        )


@option_group
@dataclass(frozen=True)
class ServeOptions:
    """Where the server listens, whether it needs keys, what requests may carry."""

    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1"
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port.")] = 8000
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth",
            help="Serve without API keys, every collection to everyone (loopback hosts only).",
        ),
    ] = False
    max_upload_mb: Annotated[
        float, typer.Option("--max-upload-mb", min=0.001, help="Most one upload may carry.")
    ] = 50.0
    max_body_mb: Annotated[
        float,
        typer.Option(
            "--max-body-mb",
            min=0.001,
            help="Most any other request may carry (a question, an answer to verify).",
        ),
    ] = 2.0
    upload_dir: Annotated[
        Path | None,
        typer.Option(
            "--upload-dir",
            help="Where uploaded files are kept (default: 'uploads' beside the index "
            "directory; a temporary folder for PostgreSQL).",
        ),
    ] = None
    embed: Annotated[
        bool | None,
        typer.Option(
            "--embed/--no-embed",
            help="Compute vectors of uploads for dense retrieval. Default: when the dense "
            "extra is installed.",
            show_default=False,
        ),
    ] = None
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            help="Server processes answering on this address; they share the index "
            "(for several hosts, give each the same PostgreSQL index and audit key).",
        ),
    ] = 1


INGEST = IngestOptions()
EVAL = EvalOptions()
SERVE = ServeOptions()
