"""List numbers written without a mark, which the PDF reader and the quoting step
share."""

from __future__ import annotations

import pytest

from quoteproof.text.numbering import bare_number


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("1 Stop giving the medicine.", 1),
        ("12 Call your doctor", 12),
        ("2 Keep the bottle", 2),
    ],
)
def test_a_number_before_a_capital_is_read(text: str, number: int) -> None:
    assert bare_number(text) == number


@pytest.mark.parametrize(
    "text",
    [
        "1. Stop giving the medicine.",
        "1) Stop",
        "1 stop giving",
        "100 Patients were seen",
        "Stop 1 Now",
        "1  Stop",
        "",
    ],
)
def test_a_marked_or_long_or_lowercase_number_is_not(text: str) -> None:
    assert bare_number(text) is None
