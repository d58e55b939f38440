"""Which model server `quoteproof ask` talks to, as a user runs it: real processes,
a scripted OpenAI-protocol server on 127.0.0.1, nothing sent anywhere else; and how
answers made with and without a language model say so."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from helpers.llm_servers import ScriptedOpenAIServer
from quoteproof.llm.servers import OLLAMA_URL
from quoteproof.render.provenance import NO_MODEL_NOTICE
from test_cli_modes import clean_env, errors, run

QUESTION = "What is the recommended dose?"


def scripted_quote(index: Path, server: ScriptedOpenAIServer) -> None:
    """Script `server` to quote the passage about the dose."""
    from quoteproof import Index

    with Index.open(index) as opened:
        ref = opened.search(QUESTION, top_k=1)[0].chunk.ref
    server.script = [f'<quote ref="{ref}">The recommended dose is 200 mg on day 1</quote>']


def audited_servers(index: Path) -> list[str | None]:
    """`llm.server` of every answer in the audit log, oldest first."""
    exported = run("audit", "export", "--index", str(index))
    assert exported.returncode == 0, exported.stderr
    return [json.loads(line)["answer"]["llm"]["server"] for line in exported.stdout.splitlines()]


def ask(index: Path, *options: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run("ask", QUESTION, "--index", str(index), *options, env=env)


def test_openai_base_url_names_the_server_and_is_recorded(
    index_dir: Path, openai_server: ScriptedOpenAIServer
) -> None:
    scripted_quote(index_dir, openai_server)
    env = clean_env(OPENAI_BASE_URL=openai_server.base_url, QUOTEPROOF_MODEL="scripted")
    result = ask(index_dir, "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    llm = json.loads(result.stdout)["llm"]
    assert llm["backend"] == "openai" and llm["model"] == "scripted"
    assert llm["server"] == openai_server.base_url and llm["language_model"] is True
    assert len(openai_server.requests) == 1
    assert audited_servers(index_dir) == [openai_server.base_url]


def test_base_url_wins_over_the_variable_and_text_shows_the_server(
    index_dir: Path, openai_server: ScriptedOpenAIServer, dead_server_url: str
) -> None:
    scripted_quote(index_dir, openai_server)
    env = clean_env(OPENAI_BASE_URL=dead_server_url)
    result = ask(index_dir, "--base-url", openai_server.base_url, "--model", "scripted", env=env)
    assert result.returncode == 0, result.stderr
    assert f"model: scripted (openai) · server: {openai_server.base_url}" in result.stdout
    assert NO_MODEL_NOTICE not in result.stdout
    assert audited_servers(index_dir) == [openai_server.base_url]


def test_with_nothing_named_the_request_goes_to_the_local_ollama(index_dir: Path) -> None:
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 11434)) == 0:
            pytest.skip("something listens on Ollama's port on this machine")
    result = ask(index_dir, "--model", "llama3.1", "--timeout", "5", env=clean_env())
    assert result.returncode == 2
    (line,) = errors(result.stderr)
    assert f"cannot reach the model server at {OLLAMA_URL}" in line
    assert "--base-url" in line and "OPENAI_BASE_URL" in line and "--cloud" in line
    assert "api.openai.com" not in result.stderr


def test_anthropic_without_a_server_or_the_cloud_flag_is_refused(index_dir: Path) -> None:
    env = clean_env(ANTHROPIC_API_KEY="sk-test")
    result = ask(index_dir, "--llm", "anthropic", "--model", "m", env=env)
    assert result.returncode == 2 and result.stdout == ""
    (line,) = errors(result.stderr)
    assert "no local default server" in line
    assert "ANTHROPIC_BASE_URL" in line and "--base-url" in line and "--cloud" in line


def test_the_cloud_flag_from_the_environment_and_its_conflict_with_a_url(
    index_dir: Path, dead_server_url: str
) -> None:
    # QUOTEPROOF_CLOUD opts in like --cloud: the next check (the API key) is reached
    keyless = ask(
        index_dir, "--llm", "anthropic", "--model", "m", env=clean_env(QUOTEPROOF_CLOUD="1")
    )
    assert keyless.returncode == 2 and "ANTHROPIC_API_KEY" in keyless.stderr
    both = ask(index_dir, "--model", "m", "--cloud", "--base-url", dead_server_url, env=clean_env())
    assert both.returncode == 2
    assert "--base-url and --cloud both choose the server" in both.stderr


def test_an_answer_without_a_model_says_so(index_dir: Path) -> None:
    text = ask(index_dir, env=clean_env())
    assert text.returncode == 0, text.stderr
    assert f"! Note: {NO_MODEL_NOTICE}" in text.stdout.splitlines()
    assert "server: " not in text.stdout
    data = json.loads(ask(index_dir, "--format", "json", env=clean_env()).stdout)
    assert data["llm"]["language_model"] is False and data["llm"]["server"] is None
    markdown = ask(index_dir, "--format", "markdown", env=clean_env()).stdout
    assert f"**Note:** {NO_MODEL_NOTICE}" in markdown
