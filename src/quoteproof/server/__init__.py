"""The HTTP face of quoteproof: a FastAPI app (`create_app`) serving the JSON API
under `/v1/` and the web page, run by `quoteproof serve`.

Modules: `state` (configuration and per-thread index), `auth` (API keys and the
`Principal` a request acts as), `jobs` (background ingest of uploads; `journal`
keeps the jobs across restarts; files are parsed in limited child processes,
`ingest.parse_worker`), `api`
(the JSON endpoints), `security` (response headers), `app` (assembly).
"""

from __future__ import annotations

import ipaddress

__all__ = ["MAX_QUESTION_CHARS", "is_loopback_host"]

MAX_QUESTION_CHARS = 10_000
"""The longest question or search query the API, the web page and the MCP server take."""


def is_loopback_host(host: str) -> bool:
    """True when `host` is a loopback address (127.0.0.0/8, ::1) or `localhost`:
    the only hosts a server without authentication may listen on."""
    host = host.strip()
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:
        return False
