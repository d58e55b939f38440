"""One question rule on every face (`service.check_question`): a question of nothing
but white space is refused by the HTTP API, the web page, the MCP server and the CLI
with the same message, and nothing is recorded; so is one longer than the limit
(the API's and MCP's schemas refuse it first, with their own words)."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.forms import with_token
from quoteproof.cli import app
from quoteproof.index import Index
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.service import MAX_QUESTION_CHARS, Principal, ScopedIndex, check_question
from quoteproof.service.questions import EMPTY_QUESTION, LONG_QUESTION

REFUSED = {"   \t\n ": EMPTY_QUESTION, "rash " * (MAX_QUESTION_CHARS // 5 + 1): LONG_QUESTION}


def audit_count(server: Any) -> int:
    return len(server.client.get("/history", headers=server.a).text.split('class="entry"'))


@pytest.mark.parametrize("question", list(REFUSED), ids=["spaces", "too long"])
def test_every_face_refuses_the_question_with_one_message(server: Any, question: str) -> None:
    message = REFUSED[question]
    with pytest.raises(ValueError, match="^" + message[:20]):
        check_question(question)
    before = audit_count(server)

    api = server.client.post("/v1/ask", json={"question": question}, headers=server.a)
    if message == EMPTY_QUESTION:
        assert (api.status_code, api.json()["error"]) == (400, message)
    else:
        assert api.status_code == 422 and "at most 10000 characters" in api.json()["error"]

    form = with_token(server.client, {"question": question}, server.a)
    web = server.client.post("/ask", data=form, headers={**server.a, "HX-Request": "true"})
    assert web.status_code == 400 and message in web.text.replace("&#34;", '"')
    stream = server.client.post("/ask/stream", data=form, headers=server.a)
    assert (stream.status_code, stream.text) == (400, message)

    with Index.open(server.index_dir) as index:
        tools = _tools(index)
        with pytest.raises(Exception, match=message[:20]) as raised:
            tools.ask(question, "quote")  # the tool's body, after the schema's checks
        assert str(raised.value) == message

    cli = CliRunner().invoke(app, ["ask", question, "--index", str(server.index_dir)])
    assert cli.exit_code == 2 and cli.stderr.strip() == f"error: {message}"
    assert audit_count(server) == before


def _tools(index: Index) -> Any:
    pytest.importorskip("mcp", reason="the MCP server needs the mcp SDK")
    from quoteproof.server.mcp import Tools

    return Tools(ScopedIndex(index, Principal("mcp", ("A",))), ExtractiveBackend(), 90.0)
