"""Fuzzing the answer-JSON decoder with hostile records (hypothesis, bounded).

The contract: reading any data (`answer_from_dict`) or any text (`answer_from_json`,
what `quoteproof verify` reads a saved answer with) gives either a `ValueError`
whose message starts with the path of the bad field, or a `RecordedAnswer` whose
quotes are only claims (`ClaimedQuote`, never a displayable `Quote`), every string
valid Unicode and every integer 64-bit. Checking such a record against a store never
raises, and every quote it then shows is the stored document's own text.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from helpers.answers import make_answer, make_data_result, make_quote
from helpers.fuzz import mutated
from quoteproof import Index
from quoteproof.cli import app
from quoteproof.codec import answer_from_dict, answer_from_json, answer_to_dict
from quoteproof.model import (
    ClaimedQuote,
    Document,
    LLMInfo,
    ProseSegment,
    Quote,
    QuoteSegment,
    RecordedAnswer,
    Statement,
    Usage,
    sha256_text,
)
from quoteproof.receipts import answer_as_recorded, verify_answer, verify_recorded
from quoteproof.store.base import Store

SOURCE = (
    "Alice was beginning to get very tired of sitting by her sister on the bank, "
    "and of having nothing to do.\n\nOnce or twice she had peeped into the book her "
    "sister was reading, but it had no pictures or conversations in it.\n"
)
ERROR_PATH = re.compile(r"^(?:\(top\)|[A-Za-z_][\w.\[\]]*): \S")
"""How every decoding error starts: the path of the bad field, then what is wrong."""


def fuzz(examples: int) -> settings:
    """`examples` inputs per test; no deadline: the inputs are small."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, Document]]:
    """A store holding one short text document (one chunk)."""
    root = tmp_path_factory.mktemp("fuzz-codec")
    (root / "alice.txt").write_text(SOURCE, encoding="utf-8")
    with Index.open(root / "index", create=True) as index:
        (result,) = index.ingest([root / "alice.txt"], embed=False)
        assert result.doc_id is not None and result.version is not None
        document = index.store.get_document(result.doc_id, result.version)
        assert document is not None
        yield index.store, document


def _base_answer(store: Store, document: Document) -> dict[str, Any]:
    """An answer quoting (and citing) the stored document truthfully, with every
    optional part filled in, as JSON data."""
    (chunk,) = store.chunks_of(document.doc_id, document.version)
    second = document.text.index("Once")

    def quote(quote_id: str, start: int, end: int) -> Quote:
        return make_quote(
            document.text,
            start,
            end,
            quote_id,
            ref=chunk.ref,
            label=chunk.label,
            doc_id=document.doc_id,
            doc_version=document.version,
            source_path=document.source_path,
            section=chunk.section,
        )

    answer = make_answer(
        (ProseSegment("She was tired.", (chunk.ref,)), QuoteSegment("q1"), QuoteSegment("q2")),
        (quote("q1", chunk.start, 38), quote("q2", second, chunk.end)),
        cited=(quote("c1", chunk.start, chunk.end),),
        mode="agent",
        statements=(Statement("s1", "Tired.", (chunk.ref,), "CORRECT-EXPLICIT", "Said."),),
        data=(make_data_result(),),
        llm=LLMInfo("openai", "m", "raw", server="http://127.0.0.1:1/v1"),
        usage=Usage(10, 2),
        notices=("a notice",),
    )
    data: dict[str, Any] = answer_to_dict(answer)
    return data


# --- hostile values and edits ---------------------------------------------------------

LONE_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
HOSTILE_TEXT = st.lists(
    st.sampled_from(["a", " ", "q1", "\x00", "\n", "é", "𝔸", "<quote>", "&amp;"]) | LONE_SURROGATES,
    max_size=6,
).map("".join)
HOSTILE_NUMBERS = (
    st.integers()
    | st.sampled_from([-1, 0, 2**63 - 1, 2**63, -(2**63) - 1, 10**400, -(10**400)])
    | st.floats()  # NaN and both infinities included
    | st.sampled_from([1e308, -0.0, 5e-324])
)
HOSTILE_VALUES = st.recursive(
    st.none() | st.booleans() | HOSTILE_NUMBERS | HOSTILE_TEXT,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(HOSTILE_TEXT, children, max_size=3)
    ),
    max_leaves=6,
)


def _nodes(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every value under `data` (not `data` itself)."""
    found: list[tuple[Any, ...]] = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += _nodes(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _nodes(value, (*prefix, index))
    return found


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        data = data[step]
    return data


@st.composite
def hostile_records(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """`base` after 1 to 4 edits: a value replaced by a hostile one, a key removed,
    an unknown key added, a list item repeated (duplicate ids), an item dropped."""
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(_nodes(data)))
        parent, last = _parent(data, path), path[-1]
        edit = draw(st.sampled_from(["replace", "remove", "add key", "repeat"]))
        if edit == "replace":
            parent[last] = draw(HOSTILE_VALUES)
        elif edit == "remove":
            del parent[last]
        elif edit == "add key" and isinstance(parent, dict):
            parent[draw(HOSTILE_TEXT)] = draw(HOSTILE_VALUES)
        elif edit == "repeat" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        if not _nodes(data):
            break
    return data


# --- the contract ---------------------------------------------------------------------


def check_record(record: RecordedAnswer, store: Store, document: Document) -> None:
    """A decoded record holds claims only, is storable, and checking it against the
    store never raises nor shows a quote that is not the document's own text."""
    claims = (*record.quotes, *record.cited)
    assert all(type(claim) is ClaimedQuote for claim in claims)
    assert record.without_quotes.quotes == () and record.without_quotes.cited == ()
    text = json.dumps(answer_to_dict(answer_as_recorded(record)), allow_nan=False)
    text.encode("utf-8")  # no lone surrogate
    verify_answer(record, store)
    shown = verify_recorded(record, store)
    for quote in (*shown.quotes, *shown.cited):
        assert type(quote) is Quote
        assert (quote.doc_id, quote.doc_version) == (document.doc_id, document.version)
        assert quote.text == document.text[quote.start : quote.end]


def check_decoding(data: object, store: Store, document: Document) -> None:
    try:
        record = answer_from_dict(data)
    except ValueError as exc:
        assert ERROR_PATH.match(str(exc)), str(exc)
        return
    check_record(record, store, document)


def test_base_answer_verifies(stored: tuple[Store, Document]) -> None:
    """The fuzzed records start from a true answer: all its quotes are shown."""
    store, document = stored
    shown = verify_recorded(answer_from_dict(_base_answer(store, document)), store)
    assert [q.id for q in shown.quotes] == ["q1", "q2"] and [q.id for q in shown.cited] == ["c1"]
    assert shown.rejected == ()


@fuzz(150)
@given(st.data())
def test_hostile_records(stored: tuple[Store, Document], data: st.DataObject) -> None:
    store, document = stored
    check_decoding(data.draw(hostile_records(_base_answer(store, document))), store, document)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("quotes", 0, "doc_id"), "a\udfff", "quotes[0].doc_id: expected valid Unicode, got a "),
        (("quotes", 0, "ref"), "\ud800", "quotes[0].ref: expected valid Unicode"),
        (("question",), "\udc80?", "question: expected valid Unicode"),
        (("data", 0, "value"), "\ud800", "data[0].value: expected valid Unicode"),
        (("quotes", 0, "doc_version"), 2**63, "quotes[0].doc_version: expected an integer of"),
        (("quotes", 0, "end"), 10**400, "quotes[0].end: expected an integer of at most 64 bits"),
        (("quotes", 0, "pages"), [-(2**70)], "quotes[0].pages[0]: expected an integer of"),
    ],
    ids=["doc_id", "ref", "question", "data value", "version", "end", "page"],
)
def test_values_a_store_cannot_take_are_refused(
    stored: tuple[Store, Document], path: tuple[Any, ...], value: Any, message: str
) -> None:
    """Found by the fuzzer: a lone surrogate or an integer over 64 bits was decoded,
    and then checking the answer against the store raised UnicodeEncodeError or
    OverflowError (`quoteproof verify` crashed)."""
    store, document = stored
    data = _base_answer(store, document)
    _parent(data, path)[path[-1]] = value
    with pytest.raises(ValueError) as info:
        answer_from_dict(data)
    assert str(info.value).startswith(message)


# --- fake quotes: claims that the store must refuse to show -------------------------------


@st.composite
def forged_quotes(draw: st.DrawFn, base: dict[str, Any], document: Document) -> dict[str, Any]:
    """`base` with one quote's claim changed in a well-typed way: other offsets or
    text (hashes recomputed to match, as a forger would), another ref, document or
    version, other pages."""
    data = copy.deepcopy(base)
    quote = draw(st.sampled_from([*data["quotes"], *data["cited"]]))
    size = len(document.text)
    for _ in range(draw(st.integers(1, 3))):
        field = draw(st.sampled_from(["start", "end", "text", "ref", "doc_id", "doc_version"]))
        if field in ("start", "end"):
            quote[field] = draw(st.integers(0, size + 2))
        elif field == "text":
            quote["text"] = draw(st.sampled_from([quote["text"].upper(), "no", ""]))
        elif field == "doc_version":
            quote["doc_version"] = draw(st.integers(-1, 3))
        else:
            quote[field] = draw(st.sampled_from([quote[field] + "x", ""]))
        quote["text_sha256"] = sha256_text(quote["text"])
    if draw(st.booleans()):
        quote["pages"] = draw(st.sampled_from([[1], [], None]))
    return data


@fuzz(100)
@given(st.data())
def test_forged_quotes_are_never_shown(stored: tuple[Store, Document], data: st.DataObject) -> None:
    store, document = stored
    record = data.draw(forged_quotes(_base_answer(store, document), document))
    check_decoding(record, store, document)


# --- JSON text, as `quoteproof verify` reads it ----------------------------------------------

# Fragments of JSON text that `json.dumps` never writes.
JSON_ODDITIES = ("NaN", "-Infinity", "1e999", "-0", '"\\ud800"', '"\\udc00x"', "[" * 3000)


@st.composite
def hostile_texts(draw: st.DrawFn, base: dict[str, Any]) -> str:
    """The JSON text of `base` with a fragment spliced in, or its bytes edited."""
    text = json.dumps(base)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(st.sampled_from(JSON_ODDITIES)) + text[at:]
    raw = draw(mutated(text.encode("utf-8")))
    return raw.decode("utf-8", "replace")


@fuzz(100)
@given(st.data())
def test_hostile_json_text(stored: tuple[Store, Document], data: st.DataObject) -> None:
    store, document = stored
    text = data.draw(hostile_texts(_base_answer(store, document)))
    try:
        record = answer_from_json(text)
    except ValueError as exc:
        assert ERROR_PATH.match(str(exc)) or isinstance(exc, json.JSONDecodeError), str(exc)
        return
    check_record(record, store, document)


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("[" * 100_000, "(top): nested too deeply"),
        ('{"schema": "quoteproof.answer/1", "question": "\\ud800"', "Expecting ',' delimiter"),
        ('{"question": NaN}', "question: expected a finite number, got nan"),
    ],
    ids=["deep", "truncated", "nan"],
)
def test_verify_command_refuses_hostile_files_in_one_line(
    tmp_path: Path, text: str, cause: str
) -> None:
    """`quoteproof verify` on a hostile file exits 2 with one line naming the file
    (a file nested too deeply used to end in a RecursionError traceback)."""
    saved = tmp_path / "hostile.json"
    saved.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["verify", str(saved), "--index", str(tmp_path)])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"error: {saved}: not a readable quoteproof answer: ") and cause in line
