"""JSON request bodies read strictly (`codec.strict_json`), and only for a key.

`StrictJSONRoute` is the route class of the JSON API: a body holding a number
that is not finite (`NaN`, `1e309`) or a lone surrogate (`"\\ud83d"`) is answered
400 with the path of the value, before validation, so no such value reaches a
model, the store or a response. A route that needs an API key checks it before
its body is read (FastAPI reads bodies before it solves dependencies): a request
without a valid key is answered 401 having sent nothing but its headers.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from quoteproof.codec.strict_json import StrictJSONError, loads_strict
from quoteproof.server.auth import principal
from quoteproof.server.state import app_state

__all__ = ["StrictJSONRoute"]


class StrictJSONRequest(Request):
    """A request whose `json()` is `loads_strict` (400 for a value JSON cannot carry;
    malformed JSON still raises `json.JSONDecodeError`, which FastAPI answers 422)."""

    async def json(self) -> Any:
        """The parsed body (cached)."""
        if not hasattr(self, "_json"):
            try:
                self._json = loads_strict(await self.body())
            except StrictJSONError as exc:
                raise HTTPException(400, f"request body: {exc}") from None
        return self._json


def needs_key(dependant: Dependant) -> bool:
    """Whether an endpoint depends on `auth.principal` (directly or through
    another dependency)."""
    return any(dep.call is principal or needs_key(dep) for dep in dependant.dependencies)


class StrictJSONRoute(APIRoute):
    """An `APIRoute` whose endpoint reads JSON bodies with `StrictJSONRequest`,
    after the request's key is checked when the endpoint needs one."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """The default handler, given a `StrictJSONRequest` whose principal (401
        or 403 without one) is found first when the endpoint needs a key."""
        handler = super().get_route_handler()
        keyed = needs_key(self.dependant)

        async def strict_handler(request: Request) -> Response:
            strict = StrictJSONRequest(request.scope, request.receive)
            if keyed:
                await run_in_threadpool(principal, strict, app_state(strict))
            return await handler(strict)

        return strict_handler
