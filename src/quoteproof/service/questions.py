"""The one rule for a question, whichever face it comes from (the CLI, the HTTP API,
the web page, the MCP server): `check_question`."""

from __future__ import annotations

from quoteproof.defaults import MAX_QUESTION_CHARS
from quoteproof.errors import UsageError

__all__ = ["MAX_QUESTION_CHARS", "QuestionError", "check_question"]

EMPTY_QUESTION = 'the question is empty: ask a question in words, e.g. "What causes it?"'
LONG_QUESTION = f"the question is longer than {MAX_QUESTION_CHARS:,} characters"


class QuestionError(UsageError):
    """A question no face may ask: empty (nothing but white space) or longer than
    `MAX_QUESTION_CHARS`."""


def check_question(question: str) -> str:
    """Return `question` when it may be asked. Raises `QuestionError`, with the same
    message on every face, when it holds nothing but white space or is longer than
    `MAX_QUESTION_CHARS` characters."""
    if not question.strip():
        raise QuestionError(EMPTY_QUESTION)
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(LONG_QUESTION)
    return question
