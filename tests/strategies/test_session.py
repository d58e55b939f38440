"""What every strategy's session does to a model reply before it is used: bound it."""

from __future__ import annotations

from quoteproof.llm.base import Completion
from quoteproof.model import ToolCall
from quoteproof.strategies.session import MAX_REPLY_CHARS, MAX_TOOL_CALLS, bounded_reply


def test_a_reply_within_bounds_is_kept_as_it_is() -> None:
    completion = Completion("x" * MAX_REPLY_CHARS, "m", tool_calls=(ToolCall("1", "f", "{}"),))
    assert bounded_reply(completion) == (completion, None)


def test_text_tool_calls_and_their_arguments_are_cut() -> None:
    calls = tuple(ToolCall(str(n), "search", "{}") for n in range(MAX_TOOL_CALLS + 4))
    huge = ToolCall("big", "quote", '{"ref": "' + "r" * (2 * MAX_REPLY_CHARS) + '"}')
    completion = Completion("y" * (MAX_REPLY_CHARS + 1), "m", tool_calls=(huge, *calls))
    bounded, notice = bounded_reply(completion)
    assert bounded.text == "y" * MAX_REPLY_CHARS
    assert len(bounded.tool_calls) == MAX_TOOL_CALLS
    assert bounded.tool_calls[0].arguments == huge.arguments[:MAX_REPLY_CHARS]
    assert bounded.tool_calls[1:] == calls[: MAX_TOOL_CALLS - 1]
    assert notice == (
        f"A model reply was cut: its text was {MAX_REPLY_CHARS + 1:,} characters long; only "
        f"the first {MAX_REPLY_CHARS:,} were read; it asked for {MAX_TOOL_CALLS + 5} tool "
        f"calls; only the first {MAX_TOOL_CALLS} ran; tool call arguments were cut to "
        f"{MAX_REPLY_CHARS:,} characters."
    )
