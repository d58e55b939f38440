"""Fixtures for the answer strategies: a scripted model of each provider in turn."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.llm_servers import ScriptedAnthropicServer, ScriptedOpenAIServer, ScriptedServer
from helpers.scripted_model import ScriptedModel


@pytest.fixture(params=["openai", "anthropic"])
def llm(request: pytest.FixtureRequest) -> Iterator[ScriptedModel]:
    """A scripted model server of each provider in turn."""
    server: ScriptedServer = (
        ScriptedOpenAIServer() if request.param == "openai" else ScriptedAnthropicServer()
    )
    server.start()
    yield ScriptedModel(request.param, server)
    server.stop()
