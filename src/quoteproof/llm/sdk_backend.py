"""What the backends over a provider's SDK (`openai`, `anthropic`) share: the SDK's
client, made with the request deadline in its transport; the model server's URL
kept without credentials (`server`, recorded in each answer); and around each
request its deadline and the SDK's errors turned into quoteproof's."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from types import ModuleType
from typing import Any

from quoteproof.llm.base import CompletionRequest
from quoteproof.llm.deadline import DeadlineExceeded, deadline_transport, time_limit
from quoteproof.llm.errors import sdk_errors
from quoteproof.llm.servers import public_url

__all__ = ["SdkBackend"]


def _overdue(sdk_error: type[Exception]) -> type[DeadlineExceeded]:
    """What a request whose deadline passed raises inside the SDK: an error of the
    SDK's own kind (`sdk_error`), which it neither retries nor wraps, that is also a
    `DeadlineExceeded` (`llm.deadline`)."""
    return type("Overdue", (DeadlineExceeded, sdk_error), {"__module__": __name__})


class SdkBackend:
    """The shared part of a backend that sends requests for `model` through `sdk`
    (the SDK's module; `sdk_error` its base error class) to `base_url`, each given
    `timeout` seconds in all: its `_client` is `client` (the SDK's client class)
    made with `api_key`, retrying `max_retries` times."""

    def __init__(
        self,
        model: str,
        base_url: str,
        timeout: float,
        sdk: ModuleType,
        sdk_error: type[Exception],
        *,
        client: Callable[..., Any],
        api_key: str,
        max_retries: int,
    ) -> None:
        self.model: str | None = model
        self._model = model
        self._timeout = timeout
        self._url = public_url(base_url)
        self.server: str | None = self._url
        self._sdk, self._sdk_error = sdk, sdk_error
        self._overdue = _overdue(sdk_error)
        self._client = client(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=self._http_client(),
        )

    def excess_tokens(self, request: CompletionRequest) -> int:
        """0: the server's context window is not known here (it reports overflows)."""
        return 0

    def _http_client(self) -> Any:
        """The SDK's HTTP client, its transport ending each request at its deadline."""
        return self._sdk.DefaultHttpxClient(transport=deadline_transport(self._overdue))

    def _requesting(self) -> ExitStack:
        """A block for one request: the SDK's errors raised inside become quoteproof's
        (`llm.errors.sdk_errors`), and it may take the backend's timeout in all
        (`llm.deadline.time_limit`)."""
        stack = ExitStack()
        stack.enter_context(
            sdk_errors(
                self._url,
                unreachable=(self._sdk.APIConnectionError, self._sdk.APITimeoutError),
                status=self._sdk.APIStatusError,
                other=self._sdk_error,
            )
        )
        stack.enter_context(time_limit(self._url, self._timeout))
        return stack
