"""Backend for any OpenAI-compatible chat server (OpenAI, Ollama, vLLM, llama.cpp, ...)."""

from __future__ import annotations

import os

import openai
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)

from quoteproof.errors import BackendError, BackendUnavailableError
from quoteproof.llm.base import Completion, CompletionRequest, Message, Usage

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_RETRIES = 2
# Local servers (Ollama, llama.cpp, vLLM) accept any key; the SDK insists on one.
PLACEHOLDER_API_KEY = "not-needed"


def _message_param(message: Message) -> ChatCompletionMessageParam:
    if message.role == "system":
        return ChatCompletionSystemMessageParam(role="system", content=message.content)
    if message.role == "assistant":
        return ChatCompletionAssistantMessageParam(role="assistant", content=message.content)
    return ChatCompletionUserMessageParam(role="user", content=message.content)


class OpenAIBackend:
    """Chat completions through the official `openai` SDK.

    `base_url` None means the SDK's default (OpenAI itself, or `OPENAI_BASE_URL`).
    Connection failures and time-outs (after `max_retries` retries) raise
    `BackendUnavailableError`; error replies from the server raise `BackendError`.
    """

    name = "openai"

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_RETRIES,
    ) -> None:
        self.model: str | None = model
        self._client = openai.OpenAI(
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_API_KEY,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
        )
        self.base_url = str(self._client.base_url)

    def complete(self, request: CompletionRequest) -> Completion:
        """Send the request's messages and return the first choice's text."""
        assert self.model is not None
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=[_message_param(m) for m in request.messages],
                temperature=request.temperature,
                max_tokens=request.max_tokens,
            )
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise BackendUnavailableError(
                f"cannot reach the model server at {self.base_url}: {exc}"
            ) from exc
        except openai.APIStatusError as exc:
            raise BackendError(
                f"the model server at {self.base_url} answered HTTP {exc.status_code}: "
                f"{exc.message}"
            ) from exc
        except openai.OpenAIError as exc:
            raise BackendError(f"the model server at {self.base_url} failed: {exc}") from exc
        if not response.choices:
            raise BackendError(f"the model server at {self.base_url} returned no choices")
        usage = None
        if response.usage is not None:
            usage = Usage(response.usage.prompt_tokens, response.usage.completion_tokens)
        return Completion(
            text=response.choices[0].message.content or "",
            model=response.model or self.model,
            usage=usage,
        )
