"""Who a request acts for: the `Principal` of its API key.

A key is presented as `Authorization: Bearer qp_...`, as `X-API-Key: qp_...`, or
in the cookie `qp_key` (set by the web page's login: HttpOnly, SameSite=Strict).
A principal sees only the collections of its key; in no-auth mode (loopback only)
every request acts for `ANONYMOUS`, who sees every collection.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import HTTPException, Request, Response

from quoteproof.server.state import AppState, AppStateDep
from quoteproof.service import ANONYMOUS, Principal

KEY_COOKIE = "qp_key"
API_KEY_HEADER = "X-API-Key"
_PRINCIPAL_SCOPE_KEY = "quoteproof.principal"
"""Where `principal` keeps a request's principal once found (its ASGI scope)."""


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def cross_origin(request: Request) -> bool:
    """True when a browser says the request comes from another origin: a
    `Sec-Fetch-Site` of `cross-site` or `same-site` (another port of this host is
    the same site), or an `Origin` that is `null` or names another host than `Host`.
    Requests without these headers (not from a browser) are not cross-origin.

    `Sec-Fetch-Site: same-origin` (which no page can forge) is believed first: under
    the server's `Referrer-Policy: no-referrer`, Chromium sends `Origin: null` with
    a plain form post from the server's own pages."""
    site = request.headers.get("sec-fetch-site")
    if site == "same-origin":
        return False
    if site in ("cross-site", "same-site"):
        return True
    origin = request.headers.get("origin")
    if origin is None:
        return False
    return origin == "null" or urlsplit(origin).netloc != request.headers.get("host")


def request_token(request: Request) -> str | None:
    """The key a request presents (bearer header, then `X-API-Key`, then the
    cookie), or None."""
    return _credentials(request)[0]


def _credentials(request: Request) -> tuple[str | None, bool]:
    """The presented key and whether it came from the cookie."""
    header = request.headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip(), False
    api_key = request.headers.get(API_KEY_HEADER, "").strip()
    if api_key:
        return api_key, False
    cookie = request.cookies.get(KEY_COOKIE) or None
    return cookie, cookie is not None


def principal_for_token(state: AppState, token: str | None) -> Principal | None:
    """The principal of `token`, or None when it is missing, unknown, wrong or
    revoked. In no-auth mode always `ANONYMOUS`."""
    if not state.config.auth:
        return ANONYMOUS
    if not token:
        return None
    return state.admin().authenticate(token)


def optional_principal(request: Request, state: AppStateDep) -> Principal | None:
    """FastAPI dependency: the request's principal, or None without a valid key
    (for pages that show a login form instead of answering 401)."""
    return principal_for_token(state, request_token(request))


def principal(request: Request, state: AppStateDep) -> Principal:
    """FastAPI dependency: the request's principal; 401 with `WWW-Authenticate:
    Bearer` when the key is missing, invalid or revoked. Found once per request
    (the JSON routes check it before reading the body: `server.json_body`).

    A request that changes something (not GET, HEAD or OPTIONS) from another
    origin is refused with 403 when its authority is ambient, that is when the key
    comes from the cookie or the server runs without auth: another web page must
    not act with the user's login (CSRF). Keys in headers cannot be sent
    cross-origin by a browser without CORS, which the server never allows.
    """
    cached = request.scope.get(_PRINCIPAL_SCOPE_KEY)
    if isinstance(cached, Principal):
        return cached
    token, from_cookie = _credentials(request)
    ambient = from_cookie or not state.config.auth
    if ambient and request.method not in SAFE_METHODS and cross_origin(request):
        raise HTTPException(403, "cross-origin request refused")
    found = principal_for_token(state, token)
    if found is None:
        raise HTTPException(
            401,
            "a valid API key is needed: send 'Authorization: Bearer qp_...'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    request.scope[_PRINCIPAL_SCOPE_KEY] = found
    return found


def set_key_cookie(response: Response, token: str, *, secure: bool = False) -> None:
    """Store `token` in the login cookie (HttpOnly, SameSite=Strict; `secure` when
    served over HTTPS)."""
    response.set_cookie(
        KEY_COOKIE, token, httponly=True, samesite="strict", secure=secure, path="/"
    )


def clear_key_cookie(response: Response) -> None:
    """Remove the login cookie (log out)."""
    response.delete_cookie(KEY_COOKIE, path="/", httponly=True, samesite="strict")
