"""Reaching a PostgreSQL index: its connection (`connect`), its URL shown with the
password masked (`redact_url`, `scrub`: no message or `location` ever holds it), and
the server's errors in plain words (`explain`, for `failures.store_errors`).
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import unquote

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row

from quoteproof.errors import StoreError

__all__ = ["CONNECT_TIMEOUT_S", "connect", "explain", "redact_url", "scrub"]

CONNECT_TIMEOUT_S = 10
"""Seconds to wait for the server unless the URL or PGCONNECT_TIMEOUT says otherwise."""


def connect(url: str, location: str) -> psycopg.Connection[DictRow]:
    """Open an autocommit connection, or raise StoreError saying why not (no password)."""
    try:
        options: dict[str, Any] = {}
        if "connect_timeout" not in conninfo_to_dict(url) and "PGCONNECT_TIMEOUT" not in os.environ:
            options["connect_timeout"] = CONNECT_TIMEOUT_S
        return psycopg.connect(url, autocommit=True, row_factory=dict_row, **options)
    except psycopg.Error as exc:
        reason = scrub(str(exc), url) or type(exc).__name__
        raise StoreError(f"cannot connect to PostgreSQL at {location}: {reason}") from None


_URL_PASSWORD = re.compile(r"^(\w+://[^:/?#@]*):([^@/?#]+)@")
_PARAM_PASSWORD = re.compile(r"([?&]password=)([^&#]*)", re.IGNORECASE)


def redact_url(url: str) -> str:
    """Return `url` with its password (after `user:` or in a `password=` parameter)
    replaced by `***`; an empty password stays empty."""
    url = _URL_PASSWORD.sub(r"\1:***@", url)
    return _PARAM_PASSWORD.sub(lambda m: m[1] + ("***" if m[2] else ""), url)


def scrub(message: str, url: str) -> str:
    """Return `message` on one line, with any password of `url` in it masked."""
    secrets = [m[2] for m in (_URL_PASSWORD.search(url), *_PARAM_PASSWORD.finditer(url)) if m]
    for secret in secrets:
        for form in (secret, unquote(secret)):
            if form:
                message = message.replace(form, "***")
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


_CAUSES: dict[str, str] = {
    "53": (  # insufficient resources: disk full, out of memory, too many connections
        "the database server is out of disk space or another resource; the change was "
        "not made and the index holds what it held before"
    ),
    "08": "the connection to the PostgreSQL server was lost (is the server running?)",
    "57": (
        "the PostgreSQL server ended the connection or cancelled the work (a shutdown, "
        "or an administrator's command)"
    ),
    "25006": "the database is read-only (a standby server, or read-only transactions)",
    "42501": "the database user lacks the permission to do this",
    "55P03": "the database is locked by another session; try again",
    "XX": "the database server reports damaged data or an internal error",
}
"""Plain words for SQLSTATE codes and classes (their first two characters)."""


def explain(exc: BaseException) -> str | None:
    """The cause of a psycopg error in plain words, None when there is nothing to add."""
    state = getattr(exc, "sqlstate", None)
    if state:
        return _CAUSES.get(state) or _CAUSES.get(state[:2])
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        return _CAUSES["08"]  # a closed or broken connection carries no SQLSTATE
    return None
