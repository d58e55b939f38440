"""The seal of an answer: what shows that a saved answer JSON is, key for key, the
answer quoteproof made and recorded.

Every answer handed out as JSON (`ask --format json`, `POST /v1/ask`,
`GET /v1/answers/{id}`, the MCP `ask` tool) is recorded in the audit log first; its
JSON then carries one more key, `seal`: `audit_entry` (the id of that log entry),
`sha256` (the SHA-256 of the answer's canonical JSON, `canonical_json`: every key
but `seal`, as the entry's body holds it) and `signature` (an HMAC-SHA256 of both
under the index's audit key, `quoteproof.audit_key`). `check_seal` shows any edit:
a changed key no longer hashes to `sha256`; a `sha256` recomputed to match needs a
new signature, which only the key's holder can make; and the answer is compared
with the log entry it names, key by key, to say what was changed.

An answer saved before answers were sealed has no `seal`: only its quotes can be
checked (`receipts`), and `check_seal` says so. Removing the seal makes any answer
such an unsealed one: what an unsealed answer says outside its quotes is never
vouched for.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

from quoteproof.model import sha256_text
from quoteproof.store.audit_chain import keyed_signature
from quoteproof.store.base import AuditEntry

__all__ = [
    "SEAL_KEY",
    "Seal",
    "SealCheck",
    "canonical_json",
    "check_seal",
    "seal_entry",
    "split_seal",
]

SEAL_KEY = "seal"
"""The top-level key of an answer JSON that holds its seal."""

UNSEALED = (
    "the answer as a whole is unsealed (saved before answers were sealed, or its seal "
    "was removed): only its quotes were checked; its question, prose, sources and "
    "everything else are not"
)

_SHOWN_DIFFERENCES = 8
"""At most this many differences from the audit entry are listed."""

_SHOWN_CHARS = 120
"""A value longer than this (as JSON) is shown cut, ending in `…`."""


def canonical_json(data: Mapping[str, Any]) -> str:
    """The canonical JSON text of answer data (as `codec.answer_to_dict` makes it):
    keys sorted, non-ASCII kept. The audit log records an answer as this text, and
    the seal hashes it. O(size)."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def _signature(key: bytes, audit_entry: str, digest: str) -> str:
    return keyed_signature(key, "quoteproof-answer-seal", audit_entry, digest)


@dataclass(frozen=True)
class Seal:
    """The seal of an answer: its audit log entry, the hash of its canonical JSON and
    the signature of both under the audit key (see the module docstring)."""

    audit_entry: str
    sha256: str
    signature: str

    def to_data(self) -> dict[str, str]:
        """The seal as the JSON object of an answer's `seal` key."""
        return {"audit_entry": self.audit_entry, "sha256": self.sha256, "signature": self.signature}


def seal_entry(entry: AuditEntry, key: bytes) -> Seal:
    """The seal of the answer recorded in `entry` (whose body is its canonical JSON),
    signed with the audit `key`."""
    digest = sha256_text(entry.body)
    return Seal(entry.entry_id, digest, _signature(key, entry.entry_id, digest))


def split_seal(data: object) -> tuple[object, Seal | None]:
    """`data` (an answer JSON read from outside) without its seal, and the seal (None
    when it has none). Data that is not an object is returned as is, for the codec
    to refuse. Raises `ValueError` naming the field of a malformed seal
    (`seal.sha256: expected 64 hex digits`)."""
    if not isinstance(data, dict) or SEAL_KEY not in data:
        return data, None
    content = {key: value for key, value in data.items() if key != SEAL_KEY}
    return content, _read_seal(data[SEAL_KEY])


def _read_seal(value: object) -> Seal:
    if not isinstance(value, dict):
        raise ValueError(f"{SEAL_KEY}: expected an object")
    keys = ("audit_entry", "sha256", "signature")
    for name in value:
        if name not in keys:
            raise ValueError(f"{SEAL_KEY}: unknown field {name!r}")
    read = []
    for name in keys:
        item = value.get(name)
        if not isinstance(item, str) or not item:
            raise ValueError(f"{SEAL_KEY}.{name}: expected a non-empty string")
        if name != "audit_entry" and not _is_hex64(item):
            raise ValueError(f"{SEAL_KEY}.{name}: expected 64 hex digits")
        read.append(item)
    return Seal(*read)


def _is_hex64(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


@dataclass(frozen=True)
class SealCheck:
    """The verdict on an answer as a whole: `problems` (empty: unchanged since it
    was made, or unsealed) and `notes` (what was not checked). `sealed` is False for
    an answer without a seal."""

    sealed: bool
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def check_seal(
    content: Mapping[str, Any],
    seal: Seal | None,
    key: bytes | None,
    recorded: AuditEntry | None,
) -> SealCheck:
    """Check `content` (an answer JSON without its seal) against `seal`, with the
    audit `key` (None: the signature cannot be checked, a problem) and `recorded`,
    the audit entry the seal names (None: not in the log, or not visible).

    Problems: the content differs from the recorded answer (each differing key
    named, with both values), does not hash to the seal, or the seal's signature
    does not match. O(size of the answer)."""
    if seal is None:
        return SealCheck(False, notes=(UNSEALED,))
    problems: list[str] = []
    notes: list[str] = []
    text = canonical_json(content)
    if recorded is not None and text != recorded.body:
        problems += _changes(content, recorded)
    elif recorded is None:
        notes.append(
            f"audit entry {seal.audit_entry}, which the seal names, is not in this index's "
            "log (or not visible to this key): the answer was checked against its seal only"
        )
    if sha256_text(text) != seal.sha256:
        problems.append(
            "it was changed after it was sealed: its content no longer hashes to its seal"
        )
    if recorded is not None and sha256_text(recorded.body) != seal.sha256:
        problems.append(f"the seal does not hash audit entry {seal.audit_entry}, which it names")
    if key is None:
        problems.append("the seal's signature was not checked: the audit key is missing")
    elif not hmac.compare_digest(seal.signature, _signature(key, seal.audit_entry, seal.sha256)):
        problems.append(
            "the seal's signature does not match (made or changed without the audit key, "
            "or signed with another key)"
        )
    return SealCheck(True, tuple(problems), tuple(notes))


def _changes(content: Mapping[str, Any], recorded: AuditEntry) -> list[str]:
    """What differs between `content` and the answer recorded in `recorded`, at most
    `_SHOWN_DIFFERENCES` lines, then how many more."""
    try:
        original = json.loads(recorded.body)
    except ValueError:
        return [f"audit entry {recorded.entry_id} does not hold a readable answer"]
    where = f"audit entry {recorded.entry_id}"
    found = list(islice(_differences(content, original, "", where), _SHOWN_DIFFERENCES + 1))
    lines = found[:_SHOWN_DIFFERENCES]
    if len(found) > _SHOWN_DIFFERENCES:
        lines.append("and more differences")
    return lines


def _differences(saved: Any, original: Any, path: str, where: str) -> Iterator[str]:
    """Each place where `saved` differs from `original`, outermost first."""
    if isinstance(saved, dict) and isinstance(original, dict):
        for key in original:
            place = f"{path}.{key}" if path else key
            if key not in saved:
                yield f"{place} was removed: {where} recorded {_shown(original[key])}"
            else:
                yield from _differences(saved[key], original[key], place, where)
        for key in saved:
            if key not in original:
                place = f"{path}.{key}" if path else key
                yield f"{place} was added: {_shown(saved[key])} ({where} has no such key)"
    elif isinstance(saved, list) and isinstance(original, list):
        yield from _list_differences(saved, original, path, where)
    elif saved != original or type(saved) is not type(original):
        said, recorded = _shown_apart(saved, original)
        yield f"{path} differs: the answer says {said}, {where} recorded {recorded}"


def _list_differences(
    saved: list[Any], original: list[Any], path: str, where: str
) -> Iterator[str]:
    """The items of `saved` that differ from `original`: after their common start and
    end, items added or removed, or changed one by one when as many remain."""
    common = min(len(saved), len(original))
    head = next((n for n in range(common) if saved[n] != original[n]), common)
    tail = 0
    while tail < common - head and saved[-1 - tail] == original[-1 - tail]:
        tail += 1
    added, removed = saved[head : len(saved) - tail], original[head : len(original) - tail]
    if len(added) == len(removed):
        for offset, (item, before) in enumerate(zip(added, removed, strict=True)):
            yield from _differences(item, before, f"{path}[{head + offset}]", where)
        return
    for offset, item in enumerate(added):
        yield f"{path}[{head + offset}] was added: {_shown(item)}"
    for offset, item in enumerate(removed):
        yield f"{path}[{head + offset}] was removed: {where} recorded {_shown(item)}"


def _shown(value: Any, start: int = 0) -> str:
    """`value` as JSON, from character `start` on (an ellipsis for what goes before),
    cut to `_SHOWN_CHARS` characters."""
    text = json.dumps(value, ensure_ascii=False)
    head = "…" if start > 0 else ""
    text = head + text[start:]
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _shown_apart(saved: Any, original: Any) -> tuple[str, str]:
    """`saved` and `original` as `_shown` gives them, both from a little before the
    first character where their JSON differs, so that a change deep in a long text
    shows in both excerpts."""
    a, b = json.dumps(saved, ensure_ascii=False), json.dumps(original, ensure_ascii=False)
    first = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = first - _SHOWN_CHARS // 3 if first >= _SHOWN_CHARS // 2 else 0
    return _shown(saved, start), _shown(original, start)
