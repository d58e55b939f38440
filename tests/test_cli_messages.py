"""The CLI words the library's errors: the library names no flag, the CLI does."""

from __future__ import annotations

from pathlib import Path

import pytest

from quoteproof import Index
from quoteproof.cli_messages import CLI_WORDING, EXIT_USAGE, cli_message, exit_code
from quoteproof.errors import (
    BackendUnavailableError,
    Hint,
    IndexNotFoundError,
    ModeUnavailableError,
    QuoteproofError,
    UsageError,
)
from quoteproof.keys import create_key
from quoteproof.llm.select import make_backend
from quoteproof.llm.servers import server_url
from quoteproof.strategies.registry import strategy


def raised(call: object, *args: object, **kwargs: object) -> QuoteproofError:
    with pytest.raises(QuoteproofError) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    return caught.value


def test_every_hint_has_cli_wording() -> None:
    assert set(CLI_WORDING) == set(Hint)


@pytest.mark.parametrize(
    ("error", "library", "cli"),
    [
        (
            lambda: make_backend("openai"),
            "the openai backend needs a model name",
            "--llm openai needs a model name: pass --model NAME or set QUOTEPROOF_MODEL",
        ),
        (
            lambda: server_url("openai", "http://x", cloud=True),
            "a server URL and the provider's cloud API both choose the server",
            "--base-url and --cloud both choose the server: give one of them",
        ),
        (
            lambda: make_backend("anthropic", model="m", api_key="k", grammar=True),
            "grammars need the openai or local backend, not anthropic",
            "--grammar needs --llm openai or local, not anthropic",
        ),
        (
            lambda: make_backend("anthropic", model="m", cloud=True),
            "the anthropic backend needs an API key",
            "--llm anthropic needs an API key: set ANTHROPIC_API_KEY or pass --api-key",
        ),
        (
            lambda: server_url("anthropic", environ={}),
            "the anthropic backend has no local default server",
            "--llm anthropic has no local default server: pass --base-url URL",
        ),
    ],
)
def test_backend_errors_name_flags_only_in_the_cli(
    error: object, library: str, cli: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    exc = raised(error)
    assert library in str(exc) and "--" not in str(exc)
    assert cli_message(exc).startswith(cli)
    assert exit_code(exc) == EXIT_USAGE


def test_a_missing_index_is_worded_with_the_ingest_command(tmp_path: Path) -> None:
    exc = raised(Index.open, tmp_path / "none")
    assert isinstance(exc, IndexNotFoundError) and exc.location == str(tmp_path / "none")
    assert str(exc) == f"no index at {tmp_path / 'none'}"
    assert cli_message(exc) == (
        f"no index at {tmp_path / 'none'} "
        f"(run `quoteproof ingest PATH --index {tmp_path / 'none'}`)"
    )


def test_an_unreachable_server_and_a_mode_without_a_model() -> None:
    down = BackendUnavailableError("http://127.0.0.1:9/v1", "connection refused")
    assert str(down) == "cannot reach the model server at http://127.0.0.1:9/v1: connection refused"
    assert "--base-url URL" in cli_message(down) and "--cloud" in cli_message(down)
    mode = ModeUnavailableError("cite")
    assert "--" not in str(mode)
    assert cli_message(mode).startswith("--mode cite needs a language model: pass --model NAME")


def test_user_input_errors_are_usage_errors(tmp_path: Path) -> None:
    assert isinstance(raised(strategy, "nope"), UsageError)
    with Index.open(tmp_path / "index", create=True) as index:
        no_collection = raised(create_key, index.store, "api", [])
        bad_name = raised(create_key, index.store, "api", ["no spaces"])
    assert isinstance(no_collection, UsageError) and isinstance(bad_name, UsageError)
    assert str(no_collection) == "a key needs at least one collection"
    assert cli_message(no_collection) == "a key needs at least one collection (--collection NAME)"
    # still a ValueError, for callers that caught one
    assert isinstance(bad_name, ValueError)
