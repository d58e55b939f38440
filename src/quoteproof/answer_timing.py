"""Where an answer's time goes: retrieval, the model's calls, and the whole.

`Index.ask` fills an `AnswerTiming` it is handed (the server's metrics read it);
the times are never part of the answer, so the same question gives the same answer
JSON on every face. `TimedBackend` adds the time of each call of the backend it
wraps to `model_s`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from quoteproof.llm.base import Backend, Completion, CompletionRequest, TextSink

__all__ = ["AnswerTiming", "TimedBackend"]


@dataclass
class AnswerTiming:
    """Seconds spent on one answer: retrieving its sources, in model calls (the
    faithfulness check's included), and in all (`Index.ask` from start to end)."""

    retrieval_s: float = 0.0
    model_s: float = 0.0
    total_s: float = 0.0


class TimedBackend:
    """`backend`, each `complete` and `stream` call's time added to
    `timing.model_s`; everything else is the backend's own."""

    def __init__(self, backend: Backend, timing: AnswerTiming) -> None:
        self._backend = backend
        self._timing = timing
        self.name = backend.name
        self.model = backend.model
        self.server = backend.server
        self.capabilities = backend.capabilities

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def excess_tokens(self, request: CompletionRequest) -> int:
        return self._backend.excess_tokens(request)

    def complete(self, request: CompletionRequest) -> Completion:
        start = time.perf_counter()
        try:
            return self._backend.complete(request)
        finally:
            self._timing.model_s += time.perf_counter() - start

    def stream(self, request: CompletionRequest, on_text: TextSink) -> Completion:
        start = time.perf_counter()
        try:
            return self._backend.stream(request, on_text)
        finally:
            self._timing.model_s += time.perf_counter() - start
