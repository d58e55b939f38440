"""A time limit on a whole request to a model server, not on each read.

The HTTP client's time-outs bound each connect, write and read: a server that
sends a byte every few seconds keeps one request going for as long as it likes.
`time_limit(url, seconds)` sets a deadline for the requests made inside it (a
context variable: per thread), and `deadline_transport()` makes connections whose
every socket operation waits at most until that deadline. Past it, the operation
raises the transport's `DeadlineExceeded` class, which each backend makes an error
of its SDK's own kind so that the SDK neither retries nor wraps it, and
`time_limit` turns it into `BackendTimeoutError`. Outside `time_limit` the
transport is the default one.

Requests sent through a proxy named by the environment (`HTTPS_PROXY`, ...) use
the client's proxy transport: only the per-operation time-outs bound them.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpcore2
import httpx2

from quoteproof.errors import BackendTimeoutError

__all__ = ["DeadlineExceeded", "deadline_transport", "time_limit"]

_DEADLINE: ContextVar[float | None] = ContextVar("quoteproof_model_deadline", default=None)
"""The `time.monotonic()` by which the current model request must be done."""


class DeadlineExceeded(Exception):
    """The current request's deadline has passed."""


@contextmanager
def time_limit(url: str, seconds: float) -> Iterator[None]:
    """Give the requests made inside the block `seconds` in all, from now; raise
    `BackendTimeoutError` naming `url` when they take longer."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    except DeadlineExceeded:
        raise BackendTimeoutError(url, seconds) from None
    finally:
        _DEADLINE.reset(token)


class _Clock:
    """The deadline as one transport keeps it: past it, `exceeded` is raised."""

    def __init__(self, exceeded: type[DeadlineExceeded]) -> None:
        self.exceeded = exceeded

    def left(self, timeout: float | None) -> float | None:
        """`timeout` (None: none) cut to the time left before the deadline; raises
        `exceeded` when none is left."""
        deadline = _DEADLINE.get()
        if deadline is None:
            return timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise self.exceeded
        return left if timeout is None else min(timeout, left)

    @contextmanager
    def expiring(self) -> Iterator[None]:
        """A time-out raised inside the block is `exceeded` once the deadline has
        passed (it was the deadline that cut it short)."""
        try:
            yield
        except httpcore2.TimeoutException:
            self.left(None)
            raise


class _DeadlineStream(httpcore2.NetworkStream):
    """A connection whose reads and writes end at the deadline."""

    def __init__(self, stream: httpcore2.NetworkStream, clock: _Clock) -> None:
        self._stream = stream
        self._clock = clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with self._clock.expiring():
            return self._stream.read(max_bytes, self._clock.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with self._clock.expiring():
            self._stream.write(buffer, self._clock.left(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        with self._clock.expiring():
            stream = self._stream.start_tls(ssl_context, server_hostname, self._clock.left(timeout))
        return _DeadlineStream(stream, self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """The default network backend, connecting within the deadline and handing out
    `_DeadlineStream`s."""

    def __init__(self, clock: _Clock) -> None:
        self._backend = httpcore2.SyncBackend()
        self._clock = clock

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        with self._clock.expiring():
            stream = self._backend.connect_tcp(
                host, port, self._clock.left(timeout), local_address, socket_options
            )
        return _DeadlineStream(stream, self._clock)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        with self._clock.expiring():
            stream = self._backend.connect_unix_socket(
                path, self._clock.left(timeout), socket_options
            )
        return _DeadlineStream(stream, self._clock)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def deadline_transport(exceeded: type[DeadlineExceeded]) -> httpx2.HTTPTransport:
    """The default HTTP transport (default limits, certificates from the
    environment as the client's), over connections that keep `time_limit` and
    raise `exceeded` past its deadline."""
    transport = httpx2.HTTPTransport()
    limits = httpx2.Limits(max_connections=100, max_keepalive_connections=20)
    # httpx2's transport takes no network backend: replace the pool it made with
    # an identical one that has ours.
    transport._pool = httpcore2.ConnectionPool(
        ssl_context=httpx2.create_ssl_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_DeadlineBackend(_Clock(exceeded)),
    )
    return transport
