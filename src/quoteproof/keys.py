"""API keys: creating them and checking a presented key.

A key is shown once, as `qp_<key_id>_<secret>`; the index stores only the key id,
a name, the SHA-256 of the secret and the collections the key may see. The secret
is 32 random bytes (URL-safe base64), so a plain SHA-256 is enough to keep it:
nothing about it can be guessed from the hash.
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Iterable
from datetime import UTC, datetime

from quoteproof.audit import ALL_COLLECTIONS
from quoteproof.errors import Hint, UsageError
from quoteproof.model import sha256_text
from quoteproof.store.base import ApiKey, Store, check_collection_name

__all__ = ["ALL_COLLECTIONS", "KEY_PREFIX", "authenticate", "create_key", "parse_token"]

KEY_PREFIX = "qp"

_TOKEN = re.compile(r"\Aqp_(?P<key_id>[0-9a-f]{12})_(?P<secret>[A-Za-z0-9_-]{43})\Z")


def create_key(
    store: Store, name: str, collections: Iterable[str], *, admin: bool = False
) -> tuple[str, ApiKey]:
    """Create and store a key for `collections` (with `admin`, for every collection
    and the server's metrics: its collections are `(ALL_COLLECTIONS,)`, a name no
    collection can have); return the token (shown only once)
    and the stored record.

    Raises `UsageError` for an empty name, no collection or a bad collection name,
    or collections named for an admin key.
    """
    names = tuple(dict.fromkeys(check_collection_name(c) for c in collections))
    if admin:
        if names:
            raise UsageError("an admin key sees every collection: name none")
        names = (ALL_COLLECTIONS,)
    if not names:
        raise UsageError("a key needs at least one collection", hint=Hint.NEED_COLLECTION)
    if not name.strip():
        raise UsageError("a key needs a name")
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    created = datetime.now(UTC).isoformat(timespec="seconds")
    key = ApiKey(key_id, name.strip(), sha256_text(secret), names, created)
    store.add_api_key(key)
    return f"{KEY_PREFIX}_{key_id}_{secret}", key


def parse_token(token: str) -> tuple[str, str] | None:
    """Split a presented token into (key id, secret), or None when malformed."""
    match = _TOKEN.match(token.strip())
    return (match.group("key_id"), match.group("secret")) if match else None


def authenticate(store: Store, token: str) -> ApiKey | None:
    """Return the stored key that `token` presents, or None when the token is
    malformed, unknown, revoked or its secret does not match (compared in constant
    time)."""
    parsed = parse_token(token)
    if parsed is None:
        return None
    key = store.get_api_key(parsed[0])
    if key is None or key.revoked:
        return None
    if not hmac.compare_digest(key.secret_sha256, sha256_text(parsed[1])):
        return None
    return key
