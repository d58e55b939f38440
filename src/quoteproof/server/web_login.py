"""Login and logout of the web face: the API key kept in the `qp_key` cookie."""

from __future__ import annotations

from typing import Annotated

from fastapi import Form, Query, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from quoteproof.server import web_page as pages
from quoteproof.server.auth import clear_key_cookie, set_key_cookie
from quoteproof.server.web_page import MaybePrincipal, StateDep, router


@router.get("/login", response_class=HTMLResponse)
def login_page(
    request: Request,
    who: MaybePrincipal,
    next: Annotated[str, Query()] = "/",
) -> Response:
    """The login form (an API key)."""
    return pages.respond(
        request, who, "login.html", "login", next=pages.safe_next(next), problem=None
    )


@router.post("/login", response_class=HTMLResponse)
def login_post(
    request: Request,
    state: StateDep,
    key: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    """Check the key and keep it in the `qp_key` cookie (HttpOnly, SameSite=Strict)."""
    target = pages.safe_next(next)
    refusal = pages.post_refusal(request, csrf_token)
    if refusal is not None:
        return pages.error(request, None, 403, refusal)
    if not state.config.auth:
        return RedirectResponse(target, status_code=303)
    token = key.strip()
    if state.admin().authenticate(token) is None:
        return pages.respond(
            request,
            None,
            "login.html",
            "login",
            status_code=401,
            next=target,
            problem="That key is not valid (or has been revoked).",
        )
    response = RedirectResponse(target, status_code=303)
    set_key_cookie(response, token, secure=request.url.scheme == "https")
    return response


@router.post("/logout")
def logout(request: Request, csrf_token: Annotated[str, Form()] = "") -> Response:
    """Forget the login cookie."""
    refusal = pages.post_refusal(request, csrf_token)
    if refusal is not None:
        return Response(refusal, status_code=403, media_type="text/plain")
    response = RedirectResponse("/login", status_code=303)
    clear_key_cookie(response)
    return response
