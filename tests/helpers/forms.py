"""The web page's form token, as a test client is served it."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi.testclient import TestClient

from helpers.dom import parse

FIELD = "csrf_token"


def form_token(client: TestClient, headers: Mapping[str, str] | None = None) -> str:
    """The form token every form of the web page carries for `client` (its cookies,
    and `headers`): read from the ask page, or the login page it redirects to."""
    page = parse(client.get("/", headers=dict(headers or {})).text)
    tokens = {
        node.attrs["value"]
        for node in page.find_all("input")
        if node.attrs.get("name") == FIELD and node.attrs.get("type") == "hidden"
    }
    assert len(tokens) == 1, tokens
    return tokens.pop()


def with_token(
    client: TestClient,
    data: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """`data` (form fields) with the form token of `client` added."""
    return {**(data or {}), FIELD: form_token(client, headers)}
