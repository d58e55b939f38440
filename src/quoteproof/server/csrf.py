"""Form tokens of the web page, against cross-site request forgery (CSRF).

Every form of the web page carries a hidden `csrf_token` field: an HMAC, under a
secret derived from the audit key (`AppState.form_secret`), of the API key the
request presents (none without auth or before login). Every request of the web
page that changes something (asking, uploading, deleting, logging in or out) must
carry the token of the key it presents, besides coming from this origin
(`auth.cross_origin`). A page of another site, or on another port of this host,
can make a browser send the login cookie, but cannot read this server's pages, so
cannot know the token. Every server process that shares the index and its audit
key makes the same tokens, so a page served by one process posts to any other.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from fastapi import Request

from quoteproof.server.auth import request_token
from quoteproof.server.state import AppState

__all__ = ["FIELD", "csrf_token", "valid_csrf_token"]

FIELD = "csrf_token"
"""The form field that carries the token."""


def csrf_token(request: Request) -> str:
    """The form token of the key `request` presents (the same for every request that
    presents that key, in every process sharing the audit key)."""
    state: AppState = request.app.state.quoteproof
    key = (request_token(request) or "").encode("utf-8", "surrogatepass")
    digest = hmac.new(state.form_secret(), b"quoteproof-form\0" + key, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def valid_csrf_token(request: Request, presented: object) -> bool:
    """True when `presented` (a form field's value) is the form token of the key
    `request` presents (compared in constant time)."""
    if not isinstance(presented, str):
        return False
    expected = csrf_token(request).encode("ascii")
    return hmac.compare_digest(expected, presented.encode("utf-8", "surrogatepass"))
