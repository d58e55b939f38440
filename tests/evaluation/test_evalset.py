"""Tests for quoteproof.evaluation.evalset: reading sets, errors that name the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quoteproof.evaluation.evalset import (
    EvalItem,
    EvalSetError,
    parse_evalset,
    read_evalset,
    sample,
)

GOOD = {
    "id": "q1",
    "question": "What is the dose?",
    "answerable": True,
    "gold_refs": ["fda/label.pdf"],
    "gold_quotes": ["200 mg on day 1"],
    "gold_answer": "200 mg",
}


def lines(*objects: object) -> list[str]:
    return [o if isinstance(o, str) else json.dumps(o) for o in objects]


def test_reads_items_skipping_blank_lines_and_ignoring_extra_keys(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    unanswerable = {"id": "q2", "question": "Who won?", "answerable": False, "note": "probe"}
    path.write_text("\n".join(lines(GOOD, "", "   ", unanswerable)) + "\n", encoding="utf-8")
    assert read_evalset(path) == [
        EvalItem("q1", "What is the dose?", True, ("fda/label.pdf",), ("200 mg on day 1",),
                 "200 mg", line=1),
        EvalItem("q2", "Who won?", False, line=4),
    ]  # fmt: skip


def test_optional_fields_may_be_null() -> None:
    item = {**GOOD, "gold_refs": None, "gold_quotes": None, "gold_answer": None}
    (parsed,) = parse_evalset(lines(item), "s")
    assert (parsed.gold_refs, parsed.gold_quotes, parsed.gold_answer) == ((), (), None)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "s.jsonl:2: not valid JSON"),
        ("[" * 100_000, "s.jsonl:2: not valid JSON"),
        ("[1, 2]", "s.jsonl:2: expected a JSON object, got an array"),
        ({"question": "Q?", "answerable": True}, 's.jsonl:2: missing "id"'),
        ({"id": 7, "question": "Q?", "answerable": True}, '"id" must be a non-empty string'),
        ({"id": "x", "question": " ", "answerable": True}, '"question" must be a non-empty'),
        ({"id": "x", "question": "Q?"}, 's.jsonl:2: missing "answerable"'),
        (
            {"id": "x", "question": "Q?", "answerable": "yes"},
            's.jsonl:2: "answerable" must be true or false, got a string',
        ),
        (
            {**GOOD, "id": "x", "gold_refs": "fda/label.pdf"},
            's.jsonl:2: "gold_refs" must be a list of strings, got a string',
        ),
        (
            {**GOOD, "id": "x", "gold_quotes": ["ok", 3]},
            's.jsonl:2: "gold_quotes"[1] must be a non-empty string, got a number',
        ),
        ({**GOOD, "id": "x", "gold_answer": ["a"]}, '"gold_answer" must be a string or null'),
        (
            {**GOOD, "id": "x", "answerable": False},
            "s.jsonl:2: an unanswerable question cannot have",
        ),
        ({**GOOD}, "s.jsonl:2: duplicate id 'q1' (first on line 1)"),
    ],
)
def test_bad_lines_are_errors_naming_the_line(bad: object, message: str) -> None:
    with pytest.raises(EvalSetError) as caught:
        parse_evalset(lines(GOOD, bad), "s.jsonl")
    assert message in str(caught.value)


def test_empty_missing_and_undecodable_sets(tmp_path: Path) -> None:
    with pytest.raises(EvalSetError, match="no questions"):
        parse_evalset(["", "  "], "empty.jsonl")
    with pytest.raises(EvalSetError, match="no such question set"):
        read_evalset(tmp_path / "absent.jsonl")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"id": "caf\xe9"}\n')
    with pytest.raises(EvalSetError, match="cannot read the question set"):
        read_evalset(latin)


def test_sample_is_deterministic() -> None:
    items = [EvalItem(f"q{i}", "Q?", True, line=i) for i in range(10)]
    assert sample(items, None) == items
    assert sample(items, 20) == items
    assert [i.id for i in sample(items, 3)] == ["q0", "q1", "q2"]
    drawn = sample(items, 4, seed=7)
    assert drawn == sample(items, 4, seed=7)
    assert len(drawn) == 4 and drawn != items[:4]
    assert [i.line for i in drawn] == sorted(i.line for i in drawn)  # kept in set order
    with pytest.raises(ValueError):
        sample(items, -1)
