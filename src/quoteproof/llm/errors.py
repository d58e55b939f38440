"""Turning a provider SDK's exceptions into quoteproof's, the same way for every SDK,
and telling a reply the server should never have sent from a failure of ours."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from quoteproof.errors import BackendError, BackendUnavailableError
from quoteproof.llm.base import Completion

_T = TypeVar("_T")

MALFORMED_REPLY: tuple[type[Exception], ...] = (
    ValueError,
    TypeError,
    AttributeError,
    KeyError,
    IndexError,
)
"""What reading a reply raises when it is not what the protocol promises: the SDKs
parse JSON without checking its shape, so a field of the wrong type fails only
when it is used."""


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


@contextmanager
def reply_errors(base_url: str) -> Iterator[None]:
    """Re-raise a `MALFORMED_REPLY` error raised inside the block (which must only
    read the reply: no callback of the caller's) as `BackendError` saying that the
    server at `base_url` sent a reply that is not valid."""
    try:
        yield
    except MALFORMED_REPLY as exc:
        what = "JSON" if isinstance(exc, json.JSONDecodeError) else "for its API"
        raise BackendError(
            f"the model server at {base_url} sent a reply that is not valid {what}: {exc}"
        ) from exc


def checked(completion: Completion) -> Completion:
    """`completion`, once its fields are known to have their types (text, model
    name and tool-call fields strings, token counts whole numbers); raises
    `TypeError` naming the first that does not."""
    strings = {"text": completion.text, "model": completion.model or ""}
    for number, call in enumerate(completion.tool_calls):
        fields = {"id": call.id, "name": call.name, "arguments": call.arguments}
        strings |= {f"tool call {number} {key}": value for key, value in fields.items()}
    for name, value in strings.items():
        if not isinstance(value, str):
            raise TypeError(f"{name} is {type(value).__name__}, not a string")
    usage = completion.usage
    counts = () if usage is None else (usage.prompt_tokens, usage.completion_tokens)
    if not all(isinstance(count, int) for count in counts):
        raise TypeError(f"token counts {counts} are not whole numbers")
    return completion


def read_replies(items: Iterable[_T], base_url: str) -> Iterator[_T]:
    """The items of a streamed reply (`items`: an SDK's event iterator), each taken
    under `reply_errors`; what the consumer does with an item is not."""
    iterator = iter(items)
    while True:
        with reply_errors(base_url):
            try:
                item = next(iterator)
            except StopIteration:
                return
        yield item
