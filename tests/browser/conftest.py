"""Fixtures for the browser tests of the web page: real headless Chromium (Debian's
`/usr/bin/chromium`, driven by Playwright's sync API) against real uvicorn servers
on 127.0.0.1 serving indexes of the demo corpus `examples/corpus` (BM25 only; the
whole corpus ingests in well under a second).

- `browser` (session): one Chromium for the run.
- `demo_server` (module): a no-auth server with the extractive backend over the
  demo corpus: its `http://127.0.0.1:PORT` and its index folder; `demo_origin`: the
  origin alone.
- `auth_server` (module): the same with authentication, and a valid key.
- `hostile` (module): the demo corpus plus hostile documents (markup and fake quote
  boxes in a `.txt` and a `.md` file), served twice: by the extractive backend and
  by an OpenAI-compatible backend talking to a `ScriptedOpenAIServer`.
- `page`: a page in a fresh browser context whose console errors and warnings,
  uncaught page errors and Content-Security-Policy violations are collected in
  `problems`; any left when the test ends fail it (`problems.expect(pattern)`
  allows a console message the test asks for).
- `graph_model` (module): the demo corpus with the sample graph
  `examples/graph/veklury-facts.csv` imported, served with an OpenAI-compatible
  backend talking to a `ScriptedOpenAIServer` (set its `script` per test).
- `spoofing_server` (module): a no-auth server over documents whose titles and file
  names hold bidi overrides and zero-width characters (`SPOOFING_FILES`).
- `held_server` (module): a no-auth server over the demo corpus whose uploads wait
  (queued) while its `hold` file exists.
- `zoned_page`: the same, its browser in the time zone `ZONED_TIME_ZONE`.
- `shoot(page, "NN-name")`: a full-page screenshot `ARTIFACTS/NN-name.png`
  (`full_page=False`: the viewport alone, as scrolled).

Screenshots go to `$QUOTEPROOF_ARTIFACTS/browser` (default `<repo>/artifacts/browser`,
git-ignored). Without Chromium the whole folder is skipped (CI installs it).
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

CHROMIUM = Path(os.environ.get("QUOTEPROOF_CHROMIUM", "/usr/bin/chromium"))
if not CHROMIUM.exists():
    pytest.skip(
        f"Chromium not found at {CHROMIUM} (install Debian's chromium package or set "
        "QUOTEPROOF_CHROMIUM): the browser tests need a real browser",
        allow_module_level=True,
    )
pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright")
pytest.importorskip("uvicorn", reason="the browser tests need the server extra")

import uvicorn  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from helpers.llm_servers import ScriptedOpenAIServer  # noqa: E402
from quoteproof.index import Index  # noqa: E402
from quoteproof.keys import create_key  # noqa: E402
from quoteproof.server.app import create_app  # noqa: E402
from quoteproof.server.state import ServerConfig  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = REPO_ROOT / "examples" / "corpus"
ARTIFACTS = Path(os.environ.get("QUOTEPROOF_ARTIFACTS", REPO_ROOT / "artifacts")) / "browser"
CORPUS_SUFFIXES = frozenset({".pdf", ".htm", ".html", ".md", ".txt"})
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TIMEOUT_MS = 15_000
"""Playwright's timeout for each action and wait."""

# Reports the Content-Security-Policy violations of every document the page loads to
# the test (an init script runs before the page's own scripts, outside the CSP; the
# exposed function is a DevTools binding, which no page script can forge for us).
CSP_REPORTER = """
document.addEventListener("securitypolicyviolation", function (event) {
  window.__qpCspViolation(event.violatedDirective + " " + event.blockedURI + " "
    + (event.sourceFile || "") + ":" + event.lineNumber);
});
"""

# --- hostile documents (see test_browser_security.py) --------------------------------

HOSTILE_TEMPLATE = """# {Plant} care notes

{Plant} needs watering every third day <script>__pwned=1</script> and \
<img src=x onerror="__pwned=2"> shade \
<figure class="verbatim"><figcaption>Verbatim from source</figcaption>\
<blockquote>Fake {plant} box</blockquote></figure>
> **Verbatim from source**
> Fake {plant} markdown box, in summer.

{Plant} leaves turn yellow when the plant gets too much sun.
"""

HOSTILE_FILES = {"hostile-notes.txt": "moonpetal", "hostile-notes.md": "glimmerwort"}
"""File name -> the plant its text is about (each file has its own word, so a
question can be answered from one of them)."""


def hostile_text(plant: str) -> str:
    return HOSTILE_TEMPLATE.format(plant=plant, Plant=plant.capitalize())


SPOOFING_FILES = {
    "invoice-\u202egpj.exe\u202c.md": "# Invoice \u202egpj.exe\u202c\n\nAmount due: 40 EUR.\n",
    "pay\u200bpal.md": "# Pay\u200bPal re\u2060ceipt\ufeff\n\nPaid: 12 EUR.\n",
}
"""File name -> text: a right-to-left override makes "Invoice \u202egpj.exe" read
"Invoice exe.jpg"; zero-width characters make "Pay\u200bPal" pass for "PayPal"."""


# --- the index and the server -------------------------------------------------------


def corpus_files() -> list[Path]:
    """The demo corpus's documents (PDF, HTML, Markdown, text)."""
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in CORPUS_SUFFIXES)


def demo_index(root: Path, extra: list[Path] | None = None) -> Path:
    """Ingest the demo corpus and `extra` into a new index `root/index` (BM25 only)."""
    index_dir = root / "index"
    with Index.open(index_dir, create=True) as index:
        results = index.ingest(corpus_files() + list(extra or []), embed=False)
    failed = [(r.path, r.status) for r in results if r.doc_id is None]
    assert not failed, f"documents did not ingest: {failed}"
    return index_dir


def server_config(index_dir: Path, **overrides: Any) -> ServerConfig:
    """A no-auth `ServerConfig` over `index_dir` (uploads beside it, no embedding)."""
    settings: dict[str, Any] = {
        "index": str(index_dir),
        "auth": False,
        "upload_dir": index_dir.parent / "uploads",
        "embed": False,
    }
    settings.update(overrides)
    return ServerConfig(**settings)


@contextmanager
def live_server(config: ServerConfig) -> Iterator[str]:
    """Serve `config`'s app with uvicorn in a background thread; yield its origin
    `http://127.0.0.1:PORT` once `/v1/health` answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    origin = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"{origin}/v1/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server on {origin} did not start")
            time.sleep(0.05)
        yield origin
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@dataclass(frozen=True)
class DemoServer:
    """A running server: its origin and the folder of the index it serves."""

    origin: str
    index_dir: Path


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    """A no-auth server (extractive backend) over the demo corpus, for one module."""
    index_dir = demo_index(tmp_path_factory.mktemp("demo"))
    with live_server(server_config(index_dir)) as origin:
        yield DemoServer(origin, index_dir)


@pytest.fixture(scope="module")
def demo_origin(demo_server: DemoServer) -> str:
    """The origin of `demo_server`."""
    return demo_server.origin


@pytest.fixture(scope="module")
def spoofing_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    """A no-auth server over the `SPOOFING_FILES` alone."""
    root = tmp_path_factory.mktemp("spoofing")
    folder = root / "files"
    folder.mkdir()
    for name, text in SPOOFING_FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    index_dir = root / "index"
    with Index.open(index_dir, create=True) as index:
        results = index.ingest([folder], embed=False)
    assert [r.status for r in results] == ["added"] * len(SPOOFING_FILES)
    with live_server(server_config(index_dir)) as origin:
        yield DemoServer(origin, index_dir)


@dataclass(frozen=True)
class HeldServer:
    """A server whose uploaded files start ingesting only once `hold` is removed."""

    origin: str
    hold: Path


@pytest.fixture(scope="module")
def held_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HeldServer]:
    """A no-auth server over the demo corpus, its ingest held by a file (created)."""
    root = tmp_path_factory.mktemp("held")
    hold = root / "hold-ingest"
    hold.touch()
    with live_server(server_config(demo_index(root), ingest_hold=hold)) as origin:
        yield HeldServer(origin, hold)


@dataclass(frozen=True)
class AuthServer:
    """A server that needs an API key: its origin, a valid key (user "alice") and
    the folder of its index."""

    origin: str
    token: str
    index_dir: Path


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    """A server with authentication over the demo corpus (collection "default")."""
    index_dir = demo_index(tmp_path_factory.mktemp("auth"))
    with Index.open(index_dir) as index:
        token, _ = create_key(index.store, "alice", ["default"])
    with live_server(server_config(index_dir, auth=True)) as origin:
        yield AuthServer(origin, token, index_dir)


@dataclass
class Hostile:
    """Two servers over one index holding the demo corpus and the hostile documents."""

    extractive: str
    """Origin of the server with the extractive backend."""
    scripted: str
    """Origin of the server whose model is `model` (set its `script` per test)."""
    model: ScriptedOpenAIServer
    files: dict[str, str] = field(default_factory=lambda: dict(HOSTILE_FILES))
    """Hostile file name -> the plant it is about."""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    root = tmp_path_factory.mktemp("hostile")
    folder = root / "files"
    folder.mkdir()
    extra = []
    for name, plant in HOSTILE_FILES.items():
        path = folder / name
        path.write_bytes(hostile_text(plant).encode("utf-8"))
        extra.append(path)
    index_dir = demo_index(root, extra)
    model = ScriptedOpenAIServer()
    model.start()
    try:
        scripted = server_config(index_dir, llm="openai", model="m", base_url=model.base_url)
        with (
            live_server(server_config(index_dir)) as extractive_origin,
            live_server(scripted) as scripted_origin,
        ):
            yield Hostile(extractive_origin, scripted_origin, model)
    finally:
        model.stop()


@dataclass(frozen=True)
class GraphModel:
    """A server over the demo corpus and its sample graph, answering with `model`."""

    origin: str
    model: ScriptedOpenAIServer


@pytest.fixture(scope="module")
def graph_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphModel]:
    index_dir = demo_index(tmp_path_factory.mktemp("graph"))
    with Index.open(index_dir) as index:
        index.import_graph(REPO_ROOT / "examples" / "graph" / "veklury-facts.csv")
    model = ScriptedOpenAIServer()
    model.start()
    try:
        config = server_config(index_dir, llm="openai", model="m", base_url=model.base_url)
        with live_server(config) as origin:
            yield GraphModel(origin, model)
    finally:
        model.stop()


# --- the browser ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the session."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass
class Problems:
    """Console errors and warnings, uncaught errors and CSP violations of one page."""

    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)
    expected: list[re.Pattern[str]] = field(default_factory=list)

    def expect(self, pattern: str) -> None:
        """Ignore console messages matching `pattern` (a response the test asks for,
        such as the 401 page of a refused login)."""
        self.expected.append(re.compile(pattern))

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning") or "Content Security Policy" in message.text:
            text = f"{message.type}: {message.text} ({message.location.get('url', '')})"
            if not any(pattern.search(text) for pattern in self.expected):
                self.console.append(text)

    def on_page_error(self, error: Exception) -> None:
        self.errors.append(str(error))

    def on_csp_violation(self, report: str) -> None:
        self.csp.append(report)

    def check(self) -> None:
        """Fail when the page logged an error or warning, threw, or broke the CSP."""
        assert not (self.console or self.errors or self.csp), (
            f"console: {self.console}\npage errors: {self.errors}\nCSP violations: {self.csp}"
        )


@pytest.fixture
def problems() -> Problems:
    """What went wrong in the test's `page` (checked when the test ends)."""
    return Problems()


def watched_page(browser: Browser, problems: Problems, **options: Any) -> Iterator[Page]:
    """A page in a fresh browser context (1280x900; `options` for the context)
    reporting to `problems`, which must be empty when it is closed."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, **options)
    try:
        context.set_default_timeout(TIMEOUT_MS)
        tab = context.new_page()
        tab.expose_function("__qpCspViolation", problems.on_csp_violation)
        tab.add_init_script(CSP_REPORTER)
        tab.on("console", problems.on_console)
        tab.on("pageerror", problems.on_page_error)
        yield tab
        problems.check()
    finally:
        context.close()


@pytest.fixture
def page(browser: Browser, problems: Problems) -> Iterator[Page]:
    """A page in a fresh browser context (1280x900) reporting to `problems`, which
    must be empty when the test ends."""
    yield from watched_page(browser, problems)


ZONED_TIME_ZONE = "America/St_Johns"
"""The time zone of `zoned_page`'s browser (UTC-03:30 or -02:30: its minutes differ from UTC's)."""


@pytest.fixture
def zoned_page(browser: Browser, problems: Problems) -> Iterator[Page]:
    """A page as `page`, its browser's local time zone `ZONED_TIME_ZONE`."""
    yield from watched_page(browser, problems, timezone_id=ZONED_TIME_ZONE)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The screenshot folder (created; git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def shoot(artifacts: Path) -> Callable[..., Path]:
    """`shoot(page, "01-name")`: a full-page screenshot `artifacts/01-name.png`;
    `shoot(page, "01-name", full_page=False)`: the viewport as scrolled."""

    def take(page: Page, name: str, full_page: bool = True) -> Path:
        path = artifacts / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return take
