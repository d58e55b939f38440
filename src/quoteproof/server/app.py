"""Assembling the FastAPI app of `quoteproof serve`.

`create_app(config)` returns the app: the JSON API under `/v1/` (`api.router`), the
metrics at `/metrics` (`metrics_api.router`), the web page (`web.router`, when
present), `/static`, the OpenAPI schema at `/openapi.json` and Swagger UI at
`/docs`, security headers on every response, a size limit on every request body
(`body_limit`), and `QuoteproofError`s answered as `{"error": "..."}`.

`python -m quoteproof.server.app --openapi` prints the OpenAPI schema (what
`make openapi` writes to `docs/openapi.json`).
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from quoteproof.errors import (
    AccessDeniedError,
    BackendConfigError,
    BackendError,
    BackendTimeoutError,
    IndexNotFoundError,
    IngestError,
    QuoteproofError,
    RetrievalError,
    StoreError,
    TableError,
    UnfinishedIngestError,
)
from quoteproof.server import api, metrics_api
from quoteproof.server.body_limit import BodyLimitMiddleware
from quoteproof.server.security import HostCheckMiddleware, SecurityHeadersMiddleware, docs_csp
from quoteproof.server.state import AppState, ServerConfig
from quoteproof.service.about import installed_version

STATIC_DIR = Path(__file__).parent / "static"
TITLE = "quoteproof"
DESCRIPTION = (
    "Question answering over documents in which every quotation is verbatim source "
    "text, by construction. Every `/v1/` endpoint that touches documents or answers "
    "needs an API key (`Authorization: Bearer qp_...` or `X-API-Key`) and sees only "
    "the collections of that key."
)

ERROR_STATUS: tuple[tuple[type[QuoteproofError], int], ...] = (
    (AccessDeniedError, 403),
    (BackendConfigError, 400),
    (BackendTimeoutError, 504),
    (BackendError, 502),
    (IngestError, 422),
    (RetrievalError, 422),
    (TableError, 422),
    (IndexNotFoundError, 503),
    (UnfinishedIngestError, 503),
    (StoreError, 500),
    (QuoteproofError, 400),
)
"""The HTTP status of each `QuoteproofError` class (the first that matches)."""


def error_status(exc: QuoteproofError) -> int:
    """The HTTP status a `QuoteproofError` is answered with."""
    for cls, status in ERROR_STATUS:
        if isinstance(exc, cls):
            return status
    return 400


def _quoteproof_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, QuoteproofError)
    return JSONResponse({"error": str(exc)}, status_code=error_status(exc))


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    return JSONResponse(
        {"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers
    )


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = json_safe(exc.errors())
    problems = [
        f"{'.'.join(str(part) for part in e.get('loc', ()))}: {e.get('msg', 'invalid')}"
        for e in errors
    ]
    return JSONResponse(
        {"error": "; ".join(problems) or "invalid request", "detail": errors}, status_code=422
    )


def json_safe(value: Any) -> Any:
    """`value` as data every JSON response can carry: anything else (exceptions in
    validation errors) as its string, numbers that are not finite as strings
    (`"inf"`), lone surrogates in strings and keys as `\\udXXX` escapes."""
    if isinstance(value, dict):
        return {_text(str(key)): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    return _text(str(value))


def _text(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _web_module() -> ModuleType | None:
    """`server.web`, or None in an installation without it."""
    try:
        return importlib.import_module("quoteproof.server.web")
    except ModuleNotFoundError as exc:
        if exc.name != "quoteproof.server.web":
            raise
        return None


def create_app(config: ServerConfig) -> FastAPI:
    """Return the app serving `config` (see the module docstring)."""
    state = AppState(config)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.start()
        yield
        state.close()

    app = FastAPI(
        title=TITLE,
        version=installed_version(),
        description=DESCRIPTION,
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.quoteproof = state
    upload_limit = int(config.max_upload_mb * 1_000_000)
    upload_routes = [api.UPLOAD_ROUTE]
    web = _web_module()
    if web is not None:
        upload_routes.append(web.UPLOAD_ROUTE)
    app.add_middleware(
        BodyLimitMiddleware,
        limit=int(config.max_body_mb * 1_000_000),
        uploads=dict.fromkeys(upload_routes, upload_limit),
    )
    if config.allowed_hosts is not None:
        app.add_middleware(HostCheckMiddleware, allowed=config.allowed_hosts)
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_exception_handler(QuoteproofError, _quoteproof_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        page = get_swagger_ui_html(openapi_url="/openapi.json", title=f"{TITLE} API")
        html = bytes(page.body).decode()
        return HTMLResponse(html, headers={"Content-Security-Policy": docs_csp(html)})

    app.include_router(api.router)
    app.include_router(metrics_api.router)
    if web is not None:
        app.include_router(web.router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


def openapi_schema() -> dict[str, Any]:
    """The OpenAPI schema of the app (independent of the index it would serve)."""
    return create_app(ServerConfig(upload_dir=Path("uploads"))).openapi()


def openapi_text() -> str:
    """The OpenAPI schema as the text of `docs/openapi.json`."""
    return json.dumps(openapi_schema(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """`python -m quoteproof.server.app --openapi [FILE]`: write the schema."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] != "--openapi" or len(args) > 2:
        print("usage: python -m quoteproof.server.app --openapi [FILE]", file=sys.stderr)
        return 2
    text = openapi_text()
    if len(args) == 2:
        target = Path(args[1])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
