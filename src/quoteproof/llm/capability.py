"""What a backend can do, in a module of its own: the answer modes' registry reads
it (for `ask --mode`'s help) without loading the backends' protocol."""

from __future__ import annotations

from enum import StrEnum


class Capability(StrEnum):
    """What a backend can do; answer modes need some (`strategies.registry`)."""

    MODEL = "model"
    """A language model writes the reply (not so for `extractive`)."""
    TOOLS = "tools"
    """It answers requests with `tools` with tool calls."""
    STREAMING = "streaming"
    """`stream` hands the reply over piece by piece as it is written."""
    CONSTRAINED = "constrained"
    """It obeys `CompletionRequest.grammar` (and makes tool calls through it)."""
