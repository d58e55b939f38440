"""The `quoteproof` commands that serve an index: `mcp` (the MCP server over stdio)
and `serve` (the HTTP API and the web page)."""

from __future__ import annotations

import os
from pathlib import Path

from quoteproof.cli_app import command, fail, note
from quoteproof.cli_command_options import SERVE, ServeOptions
from quoteproof.cli_options import (
    BACKEND,
    AuditKeyOption,
    BackendOptions,
    CollectionsOption,
    IndexOption,
    ThresholdOption,
)
from quoteproof.defaults import DEFAULT_INDEX, DEFAULT_THRESHOLD


@command("mcp")
def mcp_server(
    index: IndexOption = DEFAULT_INDEX,
    backend_options: BackendOptions = BACKEND,
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    collection: CollectionsOption = None,
    audit_key: AuditKeyOption = None,
) -> None:
    """Serve the index to desktop assistants over MCP (stdio): search, quote, ask.

    The quote tool returns the source's own words with a receipt, never the
    assistant's; answers asked through the ask tool are recorded in the audit log
    (user "mcp"). With --collection every tool sees only those collections.
    """
    from quoteproof.service import check_collection_name, make_backend

    try:
        from quoteproof.server.mcp import McpServer
    except ImportError as exc:
        if not (exc.name or "").startswith("mcp"):
            raise
        fail("quoteproof mcp needs the MCP SDK: pip install 'mcp>=2'")
    collections = tuple(dict.fromkeys(map(check_collection_name, collection or ())))
    backend = make_backend(backend_options)
    server = McpServer.open(
        index, backend, collections=collections or None, threshold=threshold, audit_key=audit_key
    )
    with server:
        server.run()


@command()
def serve(
    index: IndexOption = DEFAULT_INDEX,
    listen: ServeOptions = SERVE,
    backend_options: BackendOptions = BACKEND,
    audit_key: AuditKeyOption = None,
) -> None:
    """Serve the HTTP API (/v1/, OpenAPI at /docs) and the web page.

    Every request needs an API key (`quoteproof keys create`) and sees only that
    key's collections; --no-auth is allowed on a loopback address only.
    """
    from quoteproof.server import is_loopback_host
    from quoteproof.service import make_backend
    from quoteproof.service.admin import Admin

    host = listen.host
    if listen.no_auth and not is_loopback_host(host):
        fail(
            f"--no-auth serves every document to anyone who can reach {host}; it is allowed "
            "only on a loopback address (127.0.0.1, ::1, localhost)"
        )
    try:
        from quoteproof.server.security import LOOPBACK_NAMES
        from quoteproof.server.state import INGEST_HOLD_ENV, ServerConfig
        from quoteproof.server.workers import run
    except ImportError as exc:
        fail(
            f"quoteproof serve needs the server extra ({exc.name} is missing): "
            "pip install 'quoteproof[server]'"
        )
    with Admin.open(index, create=True, audit_key=audit_key) as admin:
        has_keys = bool(admin.keys())
        admin.check_signing_key()  # one that cannot be read or made fails now, not per answer
    config = ServerConfig(
        **backend_options.spec_fields(),
        index=index,
        auth=not listen.no_auth,
        max_upload_mb=listen.max_upload_mb,
        max_body_mb=listen.max_body_mb,
        upload_dir=listen.upload_dir,
        embed=listen.embed,
        allowed_hosts=(*LOOPBACK_NAMES, host) if listen.no_auth else None,
        audit_key=audit_key,
        ingest_hold=Path(hold) if (hold := os.environ.get(INGEST_HOLD_ENV)) else None,
    )
    make_backend(config)  # a bad --llm/--model fails now, not per request
    if listen.no_auth:
        note("no authentication: every request sees every collection")
    elif not has_keys:
        note(
            f"the index {index} has no API keys yet, so every request will be refused; "
            f"create one with: quoteproof keys create --collection NAME --index {index}"
        )
    run(config, host, listen.port, listen.workers)
