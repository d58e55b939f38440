"""JSON request bodies read strictly (`codec.strict_json`).

`StrictJSONRoute` is the route class of the JSON API: a body holding a number
that is not finite (`NaN`, `1e309`) or a lone surrogate (`"\\ud83d"`) is answered
400 with the path of the value, before validation, so no such value reaches a
model, the store or a response.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute

from quoteproof.codec.strict_json import StrictJSONError, loads_strict

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


class StrictJSONRoute(APIRoute):
    """An `APIRoute` whose endpoint reads JSON bodies with `StrictJSONRequest`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """The default handler, given a `StrictJSONRequest`."""
        handler = super().get_route_handler()

        async def strict_handler(request: Request) -> Response:
            return await handler(StrictJSONRequest(request.scope, request.receive))

        return strict_handler
