"""Which model server a backend talks to: a provider's cloud only when asked for."""

from __future__ import annotations

import pytest

from quoteproof.errors import BackendConfigError, Hint
from quoteproof.llm.select import make_backend
from quoteproof.llm.servers import CLOUD_URLS, OLLAMA_URL, public_url, server_url

LOCAL = "http://127.0.0.1:8080/v1"


@pytest.fixture(autouse=True)
def no_server_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No server URL from this process's environment unless a test sets one."""
    for variable in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)


def test_openai_with_nothing_named_is_the_local_ollama() -> None:
    assert OLLAMA_URL == "http://localhost:11434/v1"
    assert server_url("openai") == OLLAMA_URL
    assert server_url("openai", environ={"OPENAI_BASE_URL": ""}) == OLLAMA_URL


def test_the_environment_variable_names_the_server() -> None:
    assert server_url("openai", environ={"OPENAI_BASE_URL": LOCAL}) == LOCAL
    assert server_url("anthropic", environ={"ANTHROPIC_BASE_URL": LOCAL}) == LOCAL
    # each provider reads only its own variable
    assert server_url("openai", environ={"ANTHROPIC_BASE_URL": LOCAL}) == OLLAMA_URL


def test_an_explicit_url_wins_over_the_environment() -> None:
    other = "http://127.0.0.1:9999/v1"
    assert server_url("openai", other, environ={"OPENAI_BASE_URL": LOCAL}) == other
    assert server_url("anthropic", other) == other


def test_the_cloud_only_when_asked_for() -> None:
    assert server_url("openai", cloud=True) == "https://api.openai.com/v1"
    assert server_url("anthropic", cloud=True) == "https://api.anthropic.com"
    # the explicit flag wins over a variable naming another server
    assert (
        server_url("openai", cloud=True, environ={"OPENAI_BASE_URL": LOCAL})
        == (CLOUD_URLS["openai"])
    )
    # naming the cloud's URL is asking for it too
    named = {"OPENAI_BASE_URL": CLOUD_URLS["openai"]}
    assert server_url("openai", environ=named) == CLOUD_URLS["openai"]


def test_a_url_and_the_cloud_flag_together_are_refused() -> None:
    with pytest.raises(BackendConfigError, match="a server URL and the provider's cloud") as raised:
        server_url("openai", LOCAL, cloud=True)
    assert raised.value.hint is Hint.ONE_SERVER and "--" not in str(raised.value)


def test_anthropic_has_no_default_server() -> None:
    with pytest.raises(BackendConfigError) as raised:
        server_url("anthropic", environ={"ANTHROPIC_BASE_URL": ""})
    message = str(raised.value)
    assert "\n" not in message
    assert "ANTHROPIC_BASE_URL" in message and "--" not in message
    assert raised.value.hint is Hint.NAME_SERVER
    assert raised.value.facts == {"backend": "anthropic", "variable": "ANTHROPIC_BASE_URL"}


def test_make_backend_resolves_the_server_without_connecting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # nothing listens on these ports in the test: a backend is made, nothing is sent
    assert make_backend(None, model="llama3.1").server == OLLAMA_URL
    assert make_backend("openai", model="m", cloud=True).server == CLOUD_URLS["openai"]
    monkeypatch.setenv("OPENAI_BASE_URL", LOCAL)
    assert make_backend("openai", model="m").server == LOCAL
    monkeypatch.setenv("ANTHROPIC_BASE_URL", LOCAL)
    assert make_backend("anthropic", model="m", api_key="k").server == LOCAL
    assert make_backend(None).server is None and make_backend("extractive").server is None


def test_recorded_urls_carry_no_credentials() -> None:
    secret = "http://user:s3cret@127.0.0.1:8080/v1?api_key=s3cret#frag"
    assert public_url(secret) == "http://127.0.0.1:8080/v1"
    assert public_url(OLLAMA_URL) == OLLAMA_URL
    backend = make_backend("openai", model="m", base_url=secret)
    assert backend.server == "http://127.0.0.1:8080/v1"
