"""Reading question sets (`evalsets/*.jsonl`) for `quoteproof eval`.

A set is JSON Lines, one question per line (the contract is `evalsets/README.md`):
`id` (string, unique), `question` (string), `answerable` (bool), and optionally
`gold_refs` and `gold_quotes` (lists of strings) and `gold_answer` (string). Blank
lines are skipped; keys outside the contract are ignored, so a set may carry notes
of its own. Anything else is an `EvalSetError` that names the file and the line.

Everything here is O(size of the file).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from quoteproof.codec.strict_json import json_kind
from quoteproof.errors import QuoteproofError

__all__ = ["EvalItem", "EvalSetError", "parse_evalset", "parse_item", "read_evalset", "sample"]


class EvalSetError(QuoteproofError):
    """A question set cannot be read: the message names the file and, for a bad
    line, the line number (`set.jsonl:7: "answerable" must be true or false`)."""


@dataclass(frozen=True)
class EvalItem:
    """One question of a set. `line` is where it stands in its file (1-based)."""

    id: str
    question: str
    answerable: bool
    gold_refs: tuple[str, ...] = ()
    gold_quotes: tuple[str, ...] = ()
    gold_answer: str | None = None
    line: int = 0


def _strings(obj: dict[str, object], key: str) -> tuple[str, ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError(f'"{key}" must be a list of strings, got {_kind(value)}')
    for position, entry in enumerate(value):
        if not isinstance(entry, str) or not entry.strip():
            raise ValueError(f'"{key}"[{position}] must be a non-empty string, got {_kind(entry)}')
    return tuple(value)


def _kind(value: object) -> str:
    """`json_kind`, a blank string named as empty."""
    blank = isinstance(value, str) and not value.strip()
    return "an empty string" if blank else json_kind(value)


def parse_item(data: object, line: int = 0) -> EvalItem:
    """Return the item one decoded line describes; raise ValueError saying what is
    wrong with it (without the line number)."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {_kind(data)}")
    for key in ("id", "question"):
        value = data.get(key)
        if key not in data:
            raise ValueError(f'missing "{key}"')
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f'"{key}" must be a non-empty string, got {_kind(value)}')
    if "answerable" not in data:
        raise ValueError('missing "answerable"')
    answerable = data["answerable"]
    if not isinstance(answerable, bool):
        raise ValueError(f'"answerable" must be true or false, got {_kind(answerable)}')
    gold_refs = _strings(data, "gold_refs")
    gold_quotes = _strings(data, "gold_quotes")
    gold_answer = data.get("gold_answer")
    if gold_answer is not None and not isinstance(gold_answer, str):
        raise ValueError(f'"gold_answer" must be a string or null, got {_kind(gold_answer)}')
    if not answerable and (gold_refs or gold_quotes):
        raise ValueError('an unanswerable question cannot have "gold_refs" or "gold_quotes"')
    return EvalItem(
        id=data["id"],
        question=data["question"],
        answerable=answerable,
        gold_refs=gold_refs,
        gold_quotes=gold_quotes,
        gold_answer=gold_answer,
        line=line,
    )


def parse_evalset(lines: Iterable[str], name: str) -> list[EvalItem]:
    """Return the items of a set given as lines of text; `name` is used in errors.

    Raises `EvalSetError` at the first bad line (not JSON, not an item, a repeated
    `id`), or when the set holds no question at all.
    """
    items: list[EvalItem] = []
    first_line: dict[str, int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            raise EvalSetError(f"{name}:{number}: not valid JSON: {exc}") from None
        try:
            item = parse_item(data, number)
        except ValueError as exc:
            raise EvalSetError(f"{name}:{number}: {exc}") from None
        if item.id in first_line:
            raise EvalSetError(
                f"{name}:{number}: duplicate id {item.id!r} (first on line {first_line[item.id]})"
            )
        first_line[item.id] = number
        items.append(item)
    if not items:
        raise EvalSetError(f"{name}: no questions in the set")
    return items


def read_evalset(path: str | Path) -> list[EvalItem]:
    """Read the set at `path` (UTF-8 JSON Lines); raise `EvalSetError` when it cannot
    be read or holds a bad line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvalSetError(f"{path}: no such question set") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalSetError(f"{path}: cannot read the question set: {exc}") from None
    return parse_evalset(text.splitlines(), str(path))


def sample(items: Sequence[EvalItem], n: int | None, seed: int | None = None) -> list[EvalItem]:
    """Return `n` items of `items`, deterministically: the first `n`, or with `seed`
    a random sample drawn with `random.Random(seed)` (kept in set order). `n` None
    or at least `len(items)` returns them all (in set order)."""
    if n is not None and n < 0:
        raise ValueError("the sample size must be at least 0")
    if n is None or n >= len(items):
        return list(items)
    if seed is None:
        return list(items[:n])
    chosen = sorted(random.Random(seed).sample(range(len(items)), n))
    return [items[i] for i in chosen]
