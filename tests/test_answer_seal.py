"""A saved answer cannot be edited unnoticed: `quoteproof verify` compares every
field the index fixes next to a quote (label, section, pages, source path, document,
table rows) with the index's value, and checks the answer as a whole against its
seal (a hash of its canonical JSON, signed with the audit key) and the audit entry
the seal names. An answer without a seal (saved before answers were sealed) still
verifies its quotes, and verify says plainly that nothing else was checked."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.cli import Ran, cli
from helpers.llm_servers import ScriptedOpenAIServer
from helpers.table_docs import ingest_table_docs
from quoteproof import Index
from quoteproof.codec import answer_from_dict, answer_to_dict
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.llm.openai import OpenAIBackend
from quoteproof.model import sha256_text
from quoteproof.receipts import verify_recorded, verify_saved
from quoteproof.seal import canonical_json
from quoteproof.service import AnswerOptions, Principal, ScopedIndex

FORGED_LABEL = "FDA VEKLURY® label › 5 WARNINGS (p. 2)"
FORGED_PATH = "/official/fda/veklury_label.pdf"
UNSEALED_NOTE = "note: the answer as a whole is unsealed"


@dataclass(frozen=True)
class Recorded:
    """An index of the table documents and an answer recorded there, as JSON with its
    seal: prose citing the HTML table (a cited passage with table rows) and a quote of
    a PDF table row (pages, boxes, table rows)."""

    index: Path
    answer: dict[str, Any]


@pytest.fixture(scope="module")
def recorded(
    tmp_path_factory: pytest.TempPathFactory, shared_openai_server: ScriptedOpenAIServer
) -> Recorded:
    root = tmp_path_factory.mktemp("sealed")
    location = root / "index"
    ingest_table_docs(location, root / "docs")
    with Index.open(location) as index:
        hits = index.search("Major bleeding stopping treatment", top_k=10)
        pdf = next(hit.chunk for hit in hits if hit.chunk.source_path.endswith(".pdf"))
        html = next(hit.chunk for hit in hits if hit.chunk.source_path.endswith(".html"))
        shared_openai_server.script = [
            f"Bleeding was the most common reason for stopping treatment [{html.ref}]. "
            f'<quote ref="{pdf.ref}">Major bleeding 327 (2.13) 462 (3.09)</quote>'
        ]
        backend = OpenAIBackend(model="m", base_url=shared_openai_server.base_url, max_retries=0)
        view = ScopedIndex(index, Principal("tester", None))
        asked = view.ask("Which bleeding events are listed?", backend, AnswerOptions("cite"))
        answer = view.sealed_answer(asked)
    (quote,) = answer["quotes"]
    assert quote["pages"] == [1] and quote["boxes"] and quote["tables"]
    assert answer["cited"][0]["tables"] and answer["segments"][0]["type"] == "prose"
    return Recorded(location, answer)


@pytest.fixture(scope="module")
def index(recorded: Recorded) -> Iterator[Index]:
    with Index.open(recorded.index) as opened:
        yield opened


def saved(tmp_path: Path, answer: dict[str, Any]) -> Path:
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(answer, ensure_ascii=False), encoding="utf-8")
    return path


def verify(path: Path, index: Path, *options: str) -> Ran:
    return cli("verify", str(path), "--index", str(index), *options)


def unsealed(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "seal"}


def test_an_untouched_answer_verifies_whole(recorded: Recorded, tmp_path: Path) -> None:
    result = verify(saved(tmp_path, recorded.answer), recorded.index)
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-2:] == [
        "ok      answer: sealed, unchanged since it was made",
        "2 of 2 quotes verified; the answer is sealed and unchanged",
    ]


@pytest.mark.parametrize(
    ("field", "forged", "shown"),
    [
        ("label", FORGED_LABEL, json.dumps(FORGED_LABEL, ensure_ascii=False)),
        ("source_path", FORGED_PATH, json.dumps(FORGED_PATH)),
        ("section", ["5 WARNINGS"], '"5 WARNINGS"'),
        ("pages", [2], "page 2"),
    ],
)
def test_a_forged_attribution_names_the_field_and_the_index_value(
    recorded: Recorded, tmp_path: Path, field: str, forged: object, shown: str
) -> None:
    """It used to verify ("2 of 2 quotes verified", exit 0): only the text, offsets,
    version and pages were compared."""
    answer = copy.deepcopy(recorded.answer)
    quote = answer["quotes"][0]
    truth = {
        "label": json.dumps(quote["label"], ensure_ascii=False),
        "source_path": json.dumps(quote["source_path"]),
        "section": json.dumps(" › ".join(quote["section"])),
        "pages": "page 1",
    }[field]
    quote[field] = forged
    verb = "differ" if field.endswith("s") else "differs"
    expected = (
        f"INVALID q1 [{quote['ref']}]: {field} {verb}: the answer says {shown}, "
        f"the index says {truth}"
    )
    for answer_json in (answer, unsealed(answer)):  # with its seal, and with it removed
        result = verify(saved(tmp_path, answer_json), recorded.index)
        assert result.returncode == 1, result.stdout
        assert expected in result.stdout.splitlines()
    sealed = verify(saved(tmp_path, answer), recorded.index).stdout
    entry = answer["seal"]["audit_entry"]
    assert f"INVALID answer: quotes[0].{field}" in sealed and f"audit entry {entry}" in sealed


def test_edited_prose_and_question_are_named_against_the_audit_entry(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Both used to verify ("1 of 1 quotes verified", exit 0)."""
    answer = copy.deepcopy(recorded.answer)
    added = {"type": "prose", "text": "Remdesivir is safe for everyone.", "citations": []}
    answer["segments"].insert(0, added)
    answer["question"] = "Is remdesivir safe?"
    result = verify(saved(tmp_path, answer), recorded.index)
    assert result.returncode == 1, result.stdout
    entry = answer["seal"]["audit_entry"]
    lines = result.stdout.splitlines()
    assert (
        'INVALID answer: question differs: the answer says "Is remdesivir safe?", '
        f'audit entry {entry} recorded "Which bleeding events are listed?"'
    ) in lines
    assert f"INVALID answer: segments[0] was added: {json.dumps(added)}" in lines
    assert (
        "INVALID answer: it was changed after it was sealed: its content no longer hashes "
        "to its seal"
    ) in lines
    assert lines[-1] == "2 of 2 quotes verified; the answer is sealed and changed since it was made"


def test_a_change_deep_in_a_long_text_shows_in_both_excerpts(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Both excerpts of a long text used to stop at the same 120 characters, before a
    change further on, and read the same."""
    answer = copy.deepcopy(recorded.answer)
    original = answer["calls"][0]["messages"][1]["content"]
    assert len(original) > 400
    at = len(original) - 100
    answer["calls"][0]["messages"][1]["content"] = original[:at] + "CHANGED" + original[at:]
    result = verify(saved(tmp_path, answer), recorded.index)
    assert result.returncode == 1, result.stdout
    (line,) = [x for x in result.stdout.splitlines() if "calls[0].messages[1].content" in x]
    said, recorded_text = line.split(", audit entry ")
    assert "CHANGED" in said and "CHANGED" not in recorded_text
    assert said.split("says ")[1][0] == recorded_text.split("recorded ")[1][0] == "…"


def test_a_seal_remade_without_the_key_does_not_verify(recorded: Recorded, tmp_path: Path) -> None:
    answer = copy.deepcopy(recorded.answer)
    answer["question"] = "Is remdesivir safe?"
    answer["seal"]["sha256"] = sha256_text(canonical_json(unsealed(answer)))
    answer["seal"]["audit_entry"] = "not-an-entry"
    result = verify(saved(tmp_path, answer), recorded.index)
    assert result.returncode == 1, result.stdout
    assert "INVALID answer: it was changed" not in result.stdout  # the hash was remade
    assert "INVALID answer: the seal's signature does not match" in result.stdout
    assert "note: audit entry not-an-entry, which the seal names, is not in" in result.stdout


def test_a_seal_needs_the_audit_key(recorded: Recorded, tmp_path: Path) -> None:
    path = saved(tmp_path, recorded.answer)
    absent = tmp_path / "keys" / "absent.key"
    result = verify(path, recorded.index, "--audit-key", str(absent))
    assert result.returncode == 1, result.stdout
    assert "INVALID answer: the seal's signature was not checked: the audit key is missing" in (
        result.stdout
    )
    assert f"note: no audit key at {absent} (--audit-key)" in result.stdout
    other = tmp_path / "other.key"
    other.write_text("ab" * 32 + "\n")
    other.chmod(0o600)
    result = verify(path, recorded.index, "--audit-key", str(other))
    assert result.returncode == 1 and "the seal's signature does not match" in result.stdout


def test_an_unsealed_answer_verifies_its_quotes_and_says_the_rest_is_unchecked(
    index_dir: Path, tmp_path: Path
) -> None:
    """An answer saved before answers were sealed still loads and verifies."""
    with Index.open(index_dir) as index:
        answer = answer_to_dict(index.ask("recommended dose", backend=ExtractiveBackend()))
    result = verify(saved(tmp_path, answer), index_dir)
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert any(line.startswith(UNSEALED_NOTE) for line in lines)
    assert "only its quotes were checked; its question, prose" in result.stdout
    assert lines[-1].endswith(" quotes verified; the answer is unsealed")


def test_a_quote_of_a_superseded_or_retired_version_is_noted(
    index_dir: Path, corpus: Path, tmp_path: Path
) -> None:
    asked = cli("ask", "recommended dose", "--index", str(index_dir), "--format", "json")
    assert asked.returncode == 0, asked.stderr
    path = saved(tmp_path, json.loads(asked.stdout))
    dosing = corpus / "dosing.txt"
    dosing.write_text(dosing.read_text(encoding="utf-8") + "\nStore below 30 °C.\n")
    with Index.open(index_dir) as index:
        assert [r.status for r in index.ingest([dosing], embed=False)] == ["updated"]
    result = verify(path, index_dir)
    assert result.returncode == 0, result.stdout  # old receipts still verify
    source = dosing.resolve()
    assert f"note: q1 is from version 1 of {source}, since superseded by version 2" in (
        result.stdout.splitlines()
    )
    with Index.open(index_dir) as index:
        doc_id = json.loads(asked.stdout)["quotes"][0]["doc_id"]
        assert index.store.retire_document(doc_id)
    result = verify(path, index_dir)
    assert result.returncode == 0, result.stdout
    assert f"note: q1 is from version 1 of {source}, since retired from the index" in (
        result.stdout
    )


# --- every field, one at a time ---------------------------------------------------------

Path_ = tuple[str | int, ...]


def field_paths(data: Any, path: Path_ = ()) -> Iterator[Path_]:
    """The path of every value under `data` (objects and lists included), but the
    answer itself and its seal as a whole (removing the seal makes an unsealed
    answer, which verify says is not checked: see the test above)."""
    if path and path != ("seal",):
        yield path
    if isinstance(data, dict):
        for key, value in data.items():
            yield from field_paths(value, (*path, key))
    elif isinstance(data, list):
        for number, value in enumerate(data):
            yield from field_paths(value, (*path, number))


def at(data: Any, path: Path_) -> Any:
    for step in path:
        data = data[step]
    return data


@st.composite
def changed(draw: st.DrawFn, value: Any) -> Any:
    """A value of the same JSON kind as `value` (an object or list: one item
    dropped, or a key or item added) that differs from it."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + draw(st.integers(1, 1000)) * draw(st.sampled_from([1, -1]))
    if isinstance(value, float):
        return draw(st.floats(-1e6, 1e6).filter(lambda number: number != value))
    if isinstance(value, str):
        return draw(st.text(max_size=30).filter(lambda text: text != value))
    if value is None:
        return draw(st.one_of(st.text(max_size=10), st.integers(0, 9), st.just([])))
    if isinstance(value, list):
        if value and draw(st.booleans()):
            del value[draw(st.integers(0, len(value) - 1))]
        else:
            value.append(copy.deepcopy(value[-1]) if value else draw(st.text(max_size=5)))
        return value
    if value and draw(st.booleans()):
        del value[draw(st.sampled_from(sorted(value)))]
    else:
        value[draw(st.text(min_size=1, max_size=8).filter(lambda key: key not in value))] = 0
    return value


@st.composite
def mutated(draw: st.DrawFn, answer: dict[str, Any], paths: list[Path_]) -> dict[str, Any]:
    """`answer` with the value at one of `paths` changed."""
    data = copy.deepcopy(answer)
    path = draw(st.sampled_from(paths))
    parent = at(data, path[:-1])
    parent[path[-1]] = draw(changed(parent[path[-1]]))
    return data


def fails(data: dict[str, Any], index: Index) -> bool:
    """True when `verify` refuses `data`: not an answer (exit 2), or a problem (exit 1)."""
    try:
        key = index.verification_key()
        check = verify_saved(data, index.store, key, index.store.get_audit_entry)
    except ValueError:
        return True
    return not check.valid


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_field_changed_in_a_sealed_answer_fails(
    recorded: Recorded, index: Index, data: st.DataObject
) -> None:
    answer = recorded.answer
    assert not fails(answer, index)
    paths = list(field_paths(answer))
    assert len(paths) > 200  # quotes with boxes and table cells, calls, sources, ...
    assert fails(data.draw(mutated(answer, paths)), index)


def test_every_field_changed_in_turn_fails(recorded: Recorded, index: Index) -> None:
    """The sweep behind the property: each path once, its value changed."""
    for path in field_paths(recorded.answer):
        data = copy.deepcopy(recorded.answer)
        parent = at(data, path[:-1])
        value = parent[path[-1]]
        parent[path[-1]] = (
            {**value, "added": 1} if isinstance(value, dict)
            else [*value, None] if isinstance(value, list)
            else (not value) if isinstance(value, bool)
            else value + 1 if isinstance(value, int | float)
            else (value or "") + "x"
        )  # fmt: skip
        assert fails(data, index), path


INDEX_FIELDS = (
    "ref", "label", "doc_id", "doc_version", "source_path", "start", "end", "text",
    "doc_sha256", "text_sha256", "section", "pages", "boxes", "ocr", "tables",
)  # fmt: skip
"""The fields of a quote the index fixes (docs/answer-json.md)."""


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_an_unsealed_quote_field_changed_fails_or_shows_the_index_value(
    recorded: Recorded, index: Index, data: st.DataObject
) -> None:
    """Without its seal, an answer's quotes are still checked: a changed field the
    index fixes fails verify, or (boxes, and ocr or table rows the answer does not
    record) the answer is drawn with the index's value, never the changed one."""
    answer = unsealed(recorded.answer)
    paths = [
        path
        for path in field_paths(answer)
        if path[0] in ("quotes", "cited") and len(path) > 2 and path[2] in INDEX_FIELDS
    ]
    changed_answer = data.draw(mutated(answer, paths))
    if fails(changed_answer, index):
        return
    drawn = verify_recorded(answer_from_dict(changed_answer), index.store)
    assert drawn == verify_recorded(answer_from_dict(answer), index.store)
