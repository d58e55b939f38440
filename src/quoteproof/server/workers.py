"""`quoteproof serve --workers N`: N processes answering on one address.

uvicorn starts each worker process by importing an app factory (`app_from_environment`),
so the parent hands the configuration over in the environment variable
`CONFIG_VARIABLE` (the pickled `ServerConfig`, base64; set only by `serve` itself,
for its own children). Each worker is a whole app of its own: its threads, its
ingest scheduler and parse workers, its connections. What they must agree on lives
in the index (see `server.state`), so a request may reach any of them. The metrics
are counted across the workers in a directory made for this server alone (named in
`PROMETHEUS_MULTIPROC_DIR` for the children, removed when the server stops; see
`server.metrics`).
"""

from __future__ import annotations

import base64
import os
import pickle
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from quoteproof.server.app import create_app
from quoteproof.server.metrics import MULTIPROCESS_VARIABLE
from quoteproof.server.state import ServerConfig

__all__ = ["CONFIG_VARIABLE", "app_from_environment", "run"]

CONFIG_VARIABLE = "QUOTEPROOF_SERVE_CONFIG"
FACTORY = f"{__name__}:app_from_environment"


def app_from_environment() -> FastAPI:
    """The app of one worker process, serving the configuration its parent put in
    `CONFIG_VARIABLE`."""
    config = pickle.loads(base64.b64decode(os.environ[CONFIG_VARIABLE]))
    if not isinstance(config, ServerConfig):
        raise TypeError(f"${CONFIG_VARIABLE} holds no server configuration")
    return create_app(config)


def run(config: ServerConfig, host: str, port: int, workers: int = 1) -> None:
    """Serve `config` on `host`:`port` until stopped: in this process when `workers`
    is 1, else in `workers` uvicorn worker processes sharing the listening socket,
    their metrics counted together in a new temporary directory (replacing any
    `PROMETHEUS_MULTIPROC_DIR` of the environment), removed when they stop."""
    if workers == 1:
        uvicorn.run(create_app(config), host=host, port=port, log_level="info")
        return
    metrics_dir = Path(tempfile.mkdtemp(prefix="quoteproof-metrics-"))
    try:
        os.environ[MULTIPROCESS_VARIABLE] = str(metrics_dir)
        config = replace(config, metrics_dir=metrics_dir)
        os.environ[CONFIG_VARIABLE] = base64.b64encode(pickle.dumps(config)).decode("ascii")
        uvicorn.run(FACTORY, factory=True, host=host, port=port, workers=workers, log_level="info")
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)
