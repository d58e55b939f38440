"""The `local` backend's configuration errors, and tool calls made through a grammar."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.local_extra import local_extra_installed
from quoteproof.errors import BackendConfigError, Hint
from quoteproof.llm.base import (
    Capability,
    Completion,
    CompletionRequest,
    Message,
    ToolCall,
    ToolSpec,
)
from quoteproof.llm.local import LocalBackend
from quoteproof.llm.select import make_backend
from quoteproof.llm.tool_grammar import fold_tools, unfold_tool_call

TOOL = ToolSpec(
    "quote",
    "Quote a passage.",
    {"type": "object", "properties": {"ref": {"type": "string"}}, "required": ["ref"]},
)


def test_a_missing_model_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(BackendConfigError, match=r"nope\.gguf does not exist"):
        LocalBackend(model_path=missing)


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_text("this is not a model")
    with pytest.raises(BackendConfigError, match="is not a GGUF model file"):
        make_backend("local", model=str(fake))


def test_grammar_needs_a_backend_that_can_take_one() -> None:
    with pytest.raises(BackendConfigError, match="grammars need the openai or local") as raised:
        make_backend("anthropic", model="m", api_key="k", grammar=True)
    assert raised.value.hint is Hint.GRAMMAR_BACKEND
    backend = make_backend("openai", model="m", base_url="http://127.0.0.1:9/v1", grammar=True)
    assert Capability.CONSTRAINED in backend.capabilities
    openai = make_backend("openai", model="m", base_url="http://127.0.0.1:9/v1")
    assert Capability.CONSTRAINED not in openai.capabilities


def test_cli_reports_a_bad_model_file_in_one_line(tmp_path: Path, index_dir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "quoteproof", "ask", "What is shingles?", "--index",
         str(index_dir), "--llm", "local", "--model", str(tmp_path / "missing.gguf")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "missing.gguf does not exist" in result.stderr
    assert "Traceback" not in result.stderr


def test_tools_fold_into_the_prompt_and_a_grammar() -> None:
    call = ToolCall("call_1", "quote", '{"ref": "a.1"}')
    request = CompletionRequest(
        (
            Message("system", "Rules."),
            Message("user", "Question?"),
            Message("assistant", "", (call,)),
            Message("tool", '{"ok": true}', tool_call_id="call_1"),
        ),
        "Question?",
        (),
        tools=(TOOL,),
    )
    folded = fold_tools(request)
    assert folded.tools == () and folded.grammar is not None
    assert '"\\"quote\\""' in folded.grammar  # the tool name, as a JSON string literal
    roles = [m.role for m in folded.messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert (
        folded.messages[0].content.startswith("Rules.") and "quote:" in folded.messages[0].content
    )
    assert json.loads(folded.messages[2].content) == {"tool": "quote", "arguments": {"ref": "a.1"}}
    assert folded.messages[3].content == 'Result of quote: {"ok": true}'
    assert fold_tools(CompletionRequest((), "q", ())) == CompletionRequest((), "q", ())


def test_a_json_reply_becomes_one_tool_call() -> None:
    request = CompletionRequest(
        (Message("user", "q"), Message("assistant", "x")), "q", (), tools=(TOOL,)
    )
    reply = Completion('{"tool": "quote", "arguments": {"ref": "b.2"}}', "m")
    unfolded = unfold_tool_call(reply, request)
    assert unfolded.text == ""
    assert unfolded.tool_calls == (ToolCall("call_2", "quote", '{"ref": "b.2"}'),)
    cut = Completion('{"tool": "quo', "m")
    assert unfold_tool_call(cut, request) == cut


@pytest.mark.skipif(not local_extra_installed(), reason="the local extra is not installed")
def test_the_bundled_model_answers_under_a_grammar_with_usage() -> None:
    backend = LocalBackend(threads=1)
    assert backend.model == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert Capability.CONSTRAINED in backend.capabilities
    request = CompletionRequest(
        (Message("user", "Say yes or no."),), "q", (), max_tokens=8,
        grammar='root ::= "yes" | "no"',
    )  # fmt: skip
    pieces: list[str] = []
    completion = backend.stream(request, pieces.append)
    assert completion.text in ("yes", "no") and "".join(pieces) == completion.text
    assert completion.usage is not None and completion.usage.prompt_tokens > 5
    assert backend.excess_tokens(request) == 0
    assert backend.excess_tokens(CompletionRequest(request.messages, "q", (), max_tokens=10**6))
