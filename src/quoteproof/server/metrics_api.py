"""`GET /metrics`: the server's metrics in the Prometheus text format
(`server.metrics`), for the key's principal: every series for an admin key or
`serve --no-auth`, only its own collections' series for a key limited to some;
401 without a valid key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response

from quoteproof.server.api_bodies import ERRORS
from quoteproof.server.auth import principal
from quoteproof.server.metrics import CONTENT_TYPE
from quoteproof.server.state import AppStateDep
from quoteproof.service import Principal

router = APIRouter(tags=["metrics"])


@router.get(
    "/metrics",
    summary="Metrics in the Prometheus text format",
    response_class=Response,
    responses={
        401: ERRORS[401],
        200: {"content": {CONTENT_TYPE.split(";")[0]: {"schema": {"type": "string"}}}},
    },
)
def metrics(who: Annotated[Principal, Depends(principal)], state: AppStateDep) -> Response:
    """Answers by mode, status and refusal reason; retrieval, model and total time;
    tokens; rejected model output by reason; faithfulness; verification failures;
    ingest jobs and failed files. Every series has a `collection` label; a key
    limited to collections sees only the series of its own."""
    return Response(state.metrics.exposition(who), media_type=CONTENT_TYPE)
