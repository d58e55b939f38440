"""Fixtures for the answer strategies: a scripted model of each provider in turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.llm_servers import ScriptedAnthropicServer, ScriptedOpenAIServer, ScriptedServer
from helpers.scripted_model import ScriptedModel
from quoteproof import Index


@pytest.fixture
def index(index_dir: Path) -> Iterator[Index]:
    """The small corpus's index, open (a private copy per test)."""
    with Index.open(index_dir) as opened:
        yield opened


@pytest.fixture(params=["openai", "anthropic"])
def llm(request: pytest.FixtureRequest) -> Iterator[ScriptedModel]:
    """A scripted model server of each provider in turn."""
    server: ScriptedServer = (
        ScriptedOpenAIServer() if request.param == "openai" else ScriptedAnthropicServer()
    )
    server.start()
    yield ScriptedModel(request.param, server)
    server.stop()
