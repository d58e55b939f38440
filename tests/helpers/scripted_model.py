"""A scripted model of either provider, with provider-neutral views of what it
received, for running every answer mode against both wire protocols."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from helpers.llm_servers import (
    Reply,
    ScriptedAnthropicServer,
    ScriptedOpenAIServer,
    ScriptedServer,
    content_text,
)
from quoteproof.llm.anthropic import AnthropicBackend
from quoteproof.llm.base import Backend
from quoteproof.llm.openai import OpenAIBackend


@dataclass
class ScriptedModel:
    """A started scripted server of one provider and a backend that talks to it,
    with provider-neutral views of the requests it received."""

    provider: str
    server: ScriptedServer

    @property
    def script(self) -> list[Reply]:
        return self.server.script

    @script.setter
    def script(self, replies: list[Reply]) -> None:
        self.server.script = replies

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.server.requests

    def backend(self) -> Backend:
        if isinstance(self.server, ScriptedAnthropicServer):
            return AnthropicBackend(
                model="m", base_url=self.server.base_url, api_key="k", max_retries=0
            )
        assert isinstance(self.server, ScriptedOpenAIServer)
        return OpenAIBackend(model="m", base_url=self.server.base_url, max_retries=0)

    def system(self, number: int) -> str:
        """The system prompt of request `number`."""
        body = self.requests[number]
        if self.provider == "anthropic":
            return content_text(body.get("system", ""))
        return "\n".join(
            content_text(m["content"]) for m in body["messages"] if m["role"] == "system"
        )

    def first_user(self, number: int) -> str:
        """The text of the first user message of request `number`."""
        body = self.requests[number]
        return next(content_text(m["content"]) for m in body["messages"] if m["role"] == "user")

    def tool_results(self, number: int) -> list[str]:
        """The tool results sent back in request `number`, in order."""
        body = self.requests[number]
        if self.provider == "anthropic":
            return [
                content_text(block.get("content"))
                for m in body["messages"]
                if isinstance(m["content"], list)
                for block in m["content"]
                if block.get("type") == "tool_result"
            ]
        return [content_text(m["content"]) for m in body["messages"] if m["role"] == "tool"]

    def tool_names(self, number: int) -> list[str]:
        """The names of the tools offered in request `number`."""
        tools = self.requests[number].get("tools", [])
        if self.provider == "anthropic":
            return [tool["name"] for tool in tools]
        return [tool["function"]["name"] for tool in tools]

    def sent_messages(self, number: int) -> list[tuple[str, str]]:
        """Request `number`'s messages as (role, text), the system prompt first."""
        body = self.requests[number]
        messages = [(m["role"], content_text(m["content"])) for m in body["messages"]]
        if self.provider == "anthropic" and body.get("system"):
            return [("system", content_text(body["system"])), *messages]
        return messages
