"""The backends: for each, its name, what it can do and which options it reads.

`BACKENDS` is the one list of backends, as `strategies.registry.STRATEGIES` is of
answer modes. `--llm`'s choices and the help of every backend option
(`cli_options`), the server's backend (`server.state`) and `make_backend` are
derived from it. A `BackendSpec` says which backend to make and with which options;
whether a backend takes a grammar is whether it can have `Capability.CONSTRAINED`.

Adding a backend is a module with the backend and a `from_spec(spec)` function,
and one `BackendEntry` line here. Each backend's module (and its SDK, which takes
seconds to load) is imported only when the backend is made: this module loads
none of them, so the CLI's help can read it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, cast

from quoteproof.defaults import DEFAULT_CONTEXT
from quoteproof.errors import BackendConfigError, Hint
from quoteproof.llm.capability import Capability
from quoteproof.llm.servers import DEFAULT_TIMEOUT_S, OLLAMA_URL
from quoteproof.option_text import OptionText

if TYPE_CHECKING:
    from quoteproof.llm.base import Backend
    from quoteproof.llm.extractive import Embed
    from quoteproof.llm.extractive_units import Following, TableRows

__all__ = [
    "BACKENDS",
    "BackendEntry",
    "BackendSpec",
    "IndexServices",
    "OptionText",
    "backend_entry",
    "backend_names",
    "bind_to_index",
    "make_backend",
    "option_help",
]


def _option(
    default: Any, *flags: str, help: str, envvar: str | None = None, minimum: float | None = None
) -> Any:
    """A `BackendSpec` field with its command-line text (`OptionText`)."""
    text = OptionText(flags, help, envvar, minimum, show_default=default is not None)
    return field(default=default, metadata={"option": text})


@dataclass(frozen=True)
class BackendSpec:
    """Which backend to make and how: the backend options of `ask`, `eval`, `mcp`
    and `serve`. `llm` names a backend of `BACKENDS` (None: `openai` when a `model`
    is named, else `extractive`); each backend reads only the fields its entry
    `reads`."""

    llm: str | None = _option(
        None,
        "--llm",
        help="Default: openai when --model is given, else extractive.",
        envvar="QUOTEPROOF_LLM",
    )
    model: str | None = _option(
        None,
        "--model",
        help="Model name; for local, the GGUF file (default: the bundled SmolLM2).",
        envvar="QUOTEPROOF_MODEL",
    )
    base_url: str | None = _option(
        None,
        "--base-url",
        help="Model server URL. Default: $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL; "
        f"else, for openai, a local Ollama ({OLLAMA_URL}). A cloud API is used only "
        "when named here, in those variables, or with --cloud.",
    )
    cloud: bool = _option(
        False,
        "--cloud",
        help="Use the provider's own cloud API (api.openai.com, api.anthropic.com): "
        "your question and the retrieved passages leave this machine.",
        envvar="QUOTEPROOF_CLOUD",
    )
    api_key: str | None = _option(
        None,
        "--api-key",
        help="API key of the model server (default: $OPENAI_API_KEY or $ANTHROPIC_API_KEY).",
    )
    timeout: float = _option(
        DEFAULT_TIMEOUT_S,
        "--timeout",
        help="Seconds one model request may take in all, retries included.",
        minimum=1.0,
    )
    grammar: bool | None = _option(
        None,
        "--grammar/--no-grammar",
        help="Constrain the model's output to the answer protocol with a grammar "
        "(for openai: servers that read llama.cpp grammars). Default: on for local.",
    )
    threads: int | None = _option(
        None,
        "--threads",
        help="CPU threads, fixed. Default: for each answer, the cores no other "
        "process is busy on (at least 1).",
        minimum=1,
    )
    context: int = _option(DEFAULT_CONTEXT, "--ctx", help="Context window in tokens.", minimum=256)

    def spec_fields(self) -> dict[str, Any]:
        """This spec's own fields by name (a subclass's other fields left out), to
        make another spec or a `ServerConfig` from."""
        return {
            spec_field.name: getattr(self, spec_field.name) for spec_field in fields(BackendSpec)
        }

    def backend_name(self) -> str:
        """The backend this spec names: `llm`, else `openai` with a model, else
        `extractive`."""
        return str(self.llm) if self.llm else "openai" if self.model else "extractive"


@dataclass(frozen=True)
class IndexServices:
    """What a backend may take from the index it answers from, each made only when
    called: `embed`, the embedding model that ranks quotes (None without one), and
    `table_rows`, the table rows of a chunk; `following`, the chunk after a chunk."""

    embed: Callable[[], Embed | None]
    table_rows: Callable[[], TableRows]
    following: Callable[[], Following]


@dataclass(frozen=True)
class BackendEntry:
    """A backend: its `name` (`--llm`), a `summary` for the help, the capabilities
    it can have (`CONSTRAINED`: it takes a grammar), the `BackendSpec` fields it
    `reads`, whether it `needs_model` named, `make`, which builds it, and `bind`,
    which gives a built one what it takes from the index (None: nothing)."""

    name: str
    summary: str
    capabilities: frozenset[Capability]
    reads: frozenset[str]
    make: Callable[[BackendSpec], Backend]
    needs_model: bool = False
    bind: Callable[[Backend, IndexServices], Backend] | None = None


def _from_module(module: str) -> Callable[[BackendSpec], Backend]:
    """`make` for a backend whose module has `from_spec(spec)`: imports the module
    (and its SDK) only when a backend is made."""

    def make(spec: BackendSpec) -> Backend:
        built: Backend = importlib.import_module(module).from_spec(spec)
        return built

    return make


def _extractive(spec: BackendSpec) -> Backend:
    from quoteproof.llm.extractive import ExtractiveBackend

    return ExtractiveBackend()


def _bind_extractive(backend: Backend, services: IndexServices) -> Backend:
    """The no-model backend ranking with the index's embedding model and reading its
    tables, unless it was made with its own."""
    from quoteproof.llm.extractive import ExtractiveBackend

    given = cast(ExtractiveBackend, backend)
    return ExtractiveBackend(
        given.embed or services.embed(),
        given.table_rows or services.table_rows(),
        given.following or services.following(),
    )


_MODEL = frozenset({Capability.MODEL, Capability.TOOLS, Capability.STREAMING})
_SERVER = frozenset({"model", "base_url", "cloud", "api_key", "timeout"})

BACKENDS: tuple[BackendEntry, ...] = (
    BackendEntry(
        "extractive", "no model", frozenset(), frozenset(), _extractive, bind=_bind_extractive
    ),
    BackendEntry(
        "openai",
        "any OpenAI-compatible server",
        _MODEL | {Capability.CONSTRAINED},
        _SERVER | {"grammar"},
        _from_module("quoteproof.llm.openai"),
        needs_model=True,
    ),
    BackendEntry(
        "anthropic",
        "the Anthropic Messages API",
        _MODEL,
        _SERVER,
        _from_module("quoteproof.llm.anthropic"),
        needs_model=True,
    ),
    BackendEntry(
        "local",
        "a GGUF model run in-process; the local extra",
        _MODEL | {Capability.CONSTRAINED},
        frozenset({"model", "grammar", "threads", "context"}),
        _from_module("quoteproof.llm.local"),
    ),
)

_BY_NAME = {entry.name: entry for entry in BACKENDS}


def backend_names() -> tuple[str, ...]:
    """Every backend's name, in the registry's order."""
    return tuple(entry.name for entry in BACKENDS)


def backend_entry(name: str) -> BackendEntry:
    """The entry of backend `name`. Raises `BackendConfigError` for an unknown one."""
    found = _BY_NAME.get(name)
    if found is None:
        raise BackendConfigError(
            f"unknown backend {name!r} (backends: {', '.join(backend_names())})"
        )
    return found


def bind_to_index(backend: Backend, services: IndexServices) -> Backend:
    """`backend` given what its registry entry takes from the index (`bind`); itself
    when its entry takes nothing, or it has none (a backend made outside the
    registry)."""
    entry = _BY_NAME.get(backend.name)
    if entry is None or entry.bind is None:
        return backend
    return entry.bind(backend, services)


def make_backend(spec: BackendSpec) -> Backend:
    """The backend `spec` names, made with the options it reads.

    Raises `BackendConfigError` for an unknown backend, a grammar asked of one that
    cannot take one (no `Capability.CONSTRAINED`), a backend that needs a model
    name without one, and whatever the backend's own checks refuse (a server
    `llm.servers.server_url` cannot choose, a missing API key or model file).
    """
    name = spec.backend_name()
    entry = backend_entry(name)
    if spec.grammar and Capability.CONSTRAINED not in entry.capabilities:
        takes = " or ".join(e.name for e in BACKENDS if Capability.CONSTRAINED in e.capabilities)
        raise BackendConfigError(
            f"grammars need the {takes} backend, not {name}",
            hint=Hint.GRAMMAR_BACKEND,
            facts={"backend": name, "takes": takes},
        )
    if entry.needs_model and not spec.model:
        raise BackendConfigError(
            f"the {name} backend needs a model name",
            hint=Hint.NAME_MODEL,
            facts={"backend": name},
        )
    return entry.make(spec)


def option_help(name: str) -> str:
    """The help of `BackendSpec` field `name`: its own text, after the backends
    that read it when only some model backends do (`--llm local: ...`); for
    `llm`, each backend with its summary."""
    text: OptionText = next(f for f in fields(BackendSpec) if f.name == name).metadata["option"]
    if name == "llm":
        listed = "; ".join(f"{entry.name} ({entry.summary})" for entry in BACKENDS)
        return f"Backend: {listed}. {text.help}"
    models = [entry.name for entry in BACKENDS if Capability.MODEL in entry.capabilities]
    readers = [entry.name for entry in BACKENDS if name in entry.reads]
    if sorted(readers) == sorted(models):
        return text.help
    first = text.help.split(" ", 1)[0]
    lead = first if first.isupper() else first.lower()  # "CPU" stays, "Model" goes
    return f"--llm {'/'.join(readers)}: {lead}{text.help[len(first) :]}"
