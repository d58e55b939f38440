"""Which model made an answer, in the same words for every renderer.

The text here is quoteproof's own except the model name and server URL, which come
from the configuration or the model server's reply: each renderer escapes them as it
escapes any other text from an answer.
"""

from __future__ import annotations

from quoteproof.model import LLMInfo

__all__ = ["NO_MODEL_FACTS_NOTICE", "NO_MODEL_NOTICE", "model_parts"]

NO_MODEL_NOTICE = (
    "No language model: quotes chosen by retrieval only; check that they answer the question."
)
"""Shown with every answer made without a language model (`LLMInfo.language_model`),
but one from knowledge-graph triplets alone (`NO_MODEL_FACTS_NOTICE`)."""
NO_MODEL_FACTS_NOTICE = (
    "No language model: facts chosen by knowledge-graph search; their supporting words "
    "found in the documents by lookup."
)
"""Shown with an answer made without a language model from triplets alone
(`--context triplets`)."""


def model_parts(llm: LLMInfo) -> list[str]:
    """The footer parts naming the model that answered: `model: NAME (BACKEND)` when
    the model is known and `server: URL` when a server answered; none without a
    language model (`NO_MODEL_NOTICE` says so instead)."""
    if not llm.language_model:
        return []
    parts = [f"model: {llm.model} ({llm.backend})"] if llm.model else []
    return parts + ([f"server: {llm.server}"] if llm.server else [])
