"""Turning a provider SDK's exceptions into quoteproof's, the same way for every SDK."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from quoteproof.errors import BackendError, BackendUnavailableError


@contextmanager
def sdk_errors(
    base_url: str,
    *,
    unreachable: tuple[type[Exception], ...],
    status: type[Exception],
    other: type[Exception],
) -> Iterator[None]:
    """Re-raise the SDK errors raised inside the block as quoteproof's.

    `unreachable` (connection failures, time-outs) become `BackendUnavailableError`
    naming `base_url`; `status` (an error reply; it carries `status_code` and
    `message`) becomes `BackendError` saying "HTTP <code>"; anything else of `other`
    (the SDK's base class) becomes `BackendError`.
    """
    try:
        yield
    except unreachable as exc:
        raise BackendUnavailableError(base_url, str(exc)) from exc
    except status as exc:
        code, message = getattr(exc, "status_code", "?"), getattr(exc, "message", str(exc))
        raise BackendError(
            f"the model server at {base_url} answered HTTP {code}: {message}"
        ) from exc
    except other as exc:
        raise BackendError(f"the model server at {base_url} failed: {exc}") from exc
