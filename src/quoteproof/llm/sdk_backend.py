"""What the backends over a provider's SDK (`openai`, `anthropic`) share: how they
are made (`SdkConnection`, from a `BackendSpec` by `spec_connection`), their API key
(given, else from the SDK's variable), the SDK's client, made with the request
deadline in its transport; the model server's URL kept without credentials
(`server`, recorded in each answer); and around each request its deadline and the
SDK's errors turned into quoteproof's."""

from __future__ import annotations

import os
from contextlib import ExitStack
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Required, TypedDict, Unpack

from quoteproof.errors import BackendConfigError, Hint
from quoteproof.llm.base import CompletionRequest
from quoteproof.llm.deadline import DeadlineExceeded, deadline_transport, time_limit
from quoteproof.llm.errors import sdk_errors
from quoteproof.llm.servers import (
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT_S,
    Provider,
    public_url,
    server_url,
)

if TYPE_CHECKING:
    from quoteproof.llm.registry import BackendSpec

__all__ = ["SdkBackend", "SdkConnection", "spec_connection"]


class SdkConnection(TypedDict, total=False):
    """The keyword arguments every SDK backend is made with: the `model`, the server's
    `base_url`, the `api_key` (None or absent: the SDK's variable), the `timeout` one
    request may take in all (default `DEFAULT_TIMEOUT_S`) and how many times a failed
    connection is retried (`max_retries`, default `DEFAULT_RETRIES`)."""

    model: Required[str]
    base_url: Required[str]
    api_key: str | None
    timeout: float
    max_retries: int


def spec_connection(name: Provider, spec: BackendSpec) -> SdkConnection:
    """How the backend `name` of `spec` (`llm.registry`) connects: its model, on the
    server `llm.servers.server_url` chooses (raises `BackendConfigError` when none is
    named), with its API key and timeout."""
    return SdkConnection(
        model=spec.model or "",
        base_url=server_url(name, spec.base_url, cloud=spec.cloud),
        api_key=spec.api_key,
        timeout=spec.timeout,
    )


def _overdue(sdk_error: type[Exception]) -> type[DeadlineExceeded]:
    """What a request whose deadline passed raises inside the SDK: an error of the
    SDK's own kind (`sdk_error`), which it neither retries nor wraps, that is also a
    `DeadlineExceeded` (`llm.deadline`)."""
    return type("Overdue", (DeadlineExceeded, sdk_error), {"__module__": __name__})


class SdkBackend:
    """The shared part of a backend that sends requests through an SDK (`_sdk`, the
    SDK's module; `_sdk_error` its base error class; `_sdk_client` its client class),
    made with an `SdkConnection`.

    The API key is the one given, else `$<key_variable>`, else `placeholder_key`;
    without any the constructor raises `BackendConfigError`. `base_url` is the
    server's URL (`llm.servers.server_url` chooses one); it is kept as `server`
    (without credentials: `public_url`), the URL recorded in each answer. One request
    may take `timeout` seconds in all, retries included, from sending it to the
    reply's last byte (`llm.deadline`); past that it raises `BackendTimeoutError`.
    Connection failures (after `max_retries` retries) raise
    `BackendUnavailableError`; error replies from the server, and replies that are
    not valid JSON of the protocol, raise `BackendError`.
    """

    name: str
    key_variable: ClassVar[str]
    """The environment variable that holds the API key."""
    placeholder_key: ClassVar[str | None] = None
    """The key sent when none is given or set (None: a key is required)."""
    _sdk: ModuleType
    _sdk_error: ClassVar[type[Exception]]
    _sdk_client: ClassVar[type[Any]]

    def __init__(self, **connection: Unpack[SdkConnection]) -> None:
        model, base_url = connection["model"], connection["base_url"]
        timeout = connection.get("timeout", DEFAULT_TIMEOUT_S)
        self.model: str | None = model
        self._model = model
        self._timeout = timeout
        self._url = public_url(base_url)
        self.server: str | None = self._url
        self._overdue = _overdue(self._sdk_error)
        self._client = self._sdk_client(
            api_key=self._api_key(connection.get("api_key")),
            base_url=base_url,
            timeout=timeout,
            max_retries=connection.get("max_retries", DEFAULT_RETRIES),
            http_client=self._http_client(),
        )

    def _api_key(self, given: str | None) -> str:
        """`given`, else `$<key_variable>`, else `placeholder_key`; raises
        `BackendConfigError` when there is none."""
        key = given or os.environ.get(self.key_variable) or self.placeholder_key
        if not key:
            raise BackendConfigError(
                f"the {self.name} backend needs an API key: set {self.key_variable} or give one",
                hint=Hint.API_KEY,
                facts={"backend": self.name, "variable": self.key_variable},
            )
        return key

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
