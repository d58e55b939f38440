"""Files a face hands to the service: search batches, labelled questions and saved
answers, each read with an error that names the file (and line) and the cause."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from quoteproof.codec import answer_from_dict
from quoteproof.codec.strict_json import loads_strict
from quoteproof.errors import UsageError
from quoteproof.seal import split_seal

__all__ = ["read_labelled", "read_queries", "read_saved_answer"]


def _lines(path: Path, what: str) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read {what}: {exc}") from exc


def _objects(path: Path, what: str, line_kind: str, field: str) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects of the non-blank lines of `path` (a file of `what`, each
    line a `line_kind` object with a string `field`) with their line numbers.
    Raises `UsageError` naming the file, or the line, and the cause."""
    found = []
    for number, line in enumerate(_lines(path, what), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise ValueError(f"expected an object with a string {field}")
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            raise UsageError(f"{path}:{number}: bad {line_kind} line: {exc}") from exc
        found.append((number, item))
    return found


def read_queries(path: Path) -> list[tuple[Any, str]]:
    """The `(id, text)` of each `{"id", "text"}` line of the JSONL file `path`.
    Raises `UsageError` naming the file, or the line, and the cause."""
    queries = []
    for number, item in _objects(path, "queries", "query", '"text"'):
        if not isinstance(item.get("text"), str):
            raise UsageError(
                f'{path}:{number}: bad query line: expected an object with a string "text"'
            )
        queries.append((item.get("id"), item["text"]))
    return queries


def read_labelled(path: Path) -> list[tuple[str, bool]]:
    """The `(question, answerable)` of each `{"question", "answerable"}` line of the
    JSONL file `path`. Raises `UsageError` naming the file, or the line, and the
    cause."""
    labelled = []
    for number, item in _objects(path, "questions", "question", '"question"'):
        if not isinstance(item.get("question"), str):
            problem = 'expected an object with a string "question"'
        elif not isinstance(item.get("answerable"), bool):
            problem = 'expected "answerable": true or false'
        else:
            labelled.append((item["question"], item["answerable"]))
            continue
        raise UsageError(f"{path}:{number}: bad question line: {problem}")
    return labelled


def read_saved_answer(path: Path) -> Any:
    """The answer JSON saved at `path` (seal included), checked to be an answer.
    Raises `UsageError` naming the file when it cannot be read or is no answer."""
    try:
        data = loads_strict(path.read_text(encoding="utf-8"))
        answer_from_dict(split_seal(data)[0])  # a file that is no answer fails first
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path}: not a readable quoteproof answer: {exc}") from exc
    return data
