"""Tests of tabular ingest: CSV, TSV and JSON files as table documents."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from quoteproof.errors import IngestError
from quoteproof.index import Index
from quoteproof.ingest.files import discover, parse_file
from quoteproof.ingest.plain.tables import (
    JSON_BLOCK_CHARS,
    JSON_BLOCK_LINES,
    ROWS_PER_BLOCK,
    parse_csv,
    parse_json,
    read_csv,
    read_json,
)
from quoteproof.model import ParsedDocument


def block_texts(doc: ParsedDocument) -> list[str]:
    return [doc.text[b.start : b.end] for b in doc.blocks]


def assert_blocks_partition(doc: ParsedDocument) -> None:
    """Blocks are trimmed table blocks in order, not overlapping, covering all text."""
    assert doc.blocks
    previous_end = 0
    for block in doc.blocks:
        assert block.kind == "table" and block.section == (doc.title,)
        assert block.start < block.end
        text = doc.text[block.start : block.end]
        assert text == text.strip()
        assert not doc.text[previous_end : block.start].strip()
        previous_end = block.end
    assert not doc.text[previous_end:].strip()


def csv_bytes(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


# --- CSV --------------------------------------------------------------------------


def test_csv_text_is_the_file_and_title_is_the_stem() -> None:
    raw = b"date,amount\r\n2024-01-01,5\r\n2024-01-02,7\r\n"
    doc = parse_csv(raw, "/data/Sales 2024.csv")
    assert (doc.format, doc.title) == ("csv", "Sales 2024")
    assert doc.text == "date,amount\n2024-01-01,5\n2024-01-02,7\n"
    assert block_texts(doc) == ["date,amount\n2024-01-01,5\n2024-01-02,7"]
    assert_blocks_partition(doc)


def test_csv_blocks_hold_twenty_rows_and_the_first_the_header() -> None:
    rows = [["n", "square"]] + [[str(i), str(i * i)] for i in range(1, 46)]
    doc = parse_csv(csv_bytes(rows), "squares.csv")
    texts = block_texts(doc)
    assert len(texts) == 3  # 45 rows: 20 + 20 + 5
    assert texts[0].split("\n")[:2] == ["n,square", "1,1"]
    assert len(texts[0].split("\n")) == ROWS_PER_BLOCK + 1
    assert texts[1].split("\n")[0] == "21,441"
    assert len(texts[2].split("\n")) == 5
    assert_blocks_partition(doc)


def test_multi_line_quoted_cells_stay_in_one_row_and_one_block() -> None:
    rows = [["id", "note"]] + [[str(i), f"line one\nline two of {i}"] for i in range(1, 26)]
    raw = csv_bytes(rows)
    doc = parse_csv(raw, "notes.csv")
    data = read_csv(doc.text)
    assert data.columns == ("id", "note")
    assert data.rows[0] == ("1", "line one\nline two of 1")
    assert len(data.rows) == 25
    second = block_texts(doc)[1]
    assert second.startswith('21,"line one\n')
    assert_blocks_partition(doc)


def test_header_names_are_trimmed_bom_removed_and_blanks_named() -> None:
    doc = parse_csv("\ufeff id , ,name\n1,x,Ann\n".encode(), "t.csv")
    assert doc.text.startswith("\ufeff")  # the text is not changed
    assert read_csv(doc.text).columns == ("id", "column 2", "name")


def test_short_rows_are_padded_and_blank_records_skipped() -> None:
    data = read_csv("a,b,c\n1,2\n\n , \n4,5,6\n")
    assert data.rows == (("1", "2", None), ("4", "5", "6"))
    assert data.row_starts == (6, 15)


def test_semicolon_csv_and_tsv() -> None:
    assert read_csv("a;b\n1;2\n", ";").rows == (("1", "2"),)
    doc = parse_csv(b"a;b\n1;2\n", "semi.csv")
    assert doc.format == "csv"


def test_tsv_files_are_tab_delimited(tmp_path: Path) -> None:
    path = tmp_path / "people.tsv"
    path.write_bytes(b"name\tcity, country\nAnn\tParis, France\n")
    doc = parse_file(path)
    assert (doc.format, doc.title) == ("csv", "people")
    assert read_csv(doc.text, "\t").rows == (("Ann", "Paris, France"),)


def test_header_only_csv_is_an_empty_table() -> None:
    doc = parse_csv(b"a,b\n", "empty.csv")
    assert block_texts(doc) == ["a,b"]
    assert read_csv(doc.text).rows == ()


# --- JSON -------------------------------------------------------------------------


def test_json_array_of_objects() -> None:
    raw = b'[\n  {"a": 1.50, "b": "x"},\n  {"a": true, "c": {"n": [1, 2.0e3]}},\n  {"b": null}\n]\n'
    doc = parse_json(raw, "dir/things.json")
    assert (doc.format, doc.title, doc.text) == ("json", "things", raw.decode())
    data = read_json(doc.text)
    assert data.columns == ("a", "b", "c")
    assert data.rows == (
        ("1.50", "x", None),
        ("true", None, '{"n":[1,2.0e3]}'),
        (None, None, None),
    )
    assert [doc.text[s] for s in data.row_starts] == ["{", "{", "{"]
    assert block_texts(doc) == [raw.decode().strip()]
    assert_blocks_partition(doc)


def test_json_object_with_one_key_holding_the_table() -> None:
    text = '\ufeff{ "rows" : [ {"k": "v"} , {"k": "w", "n": -2} ] }'
    data = read_json(text)
    assert data.columns == ("k", "n") and data.rows == (("v", None), ("w", "-2"))
    assert [text[s : s + 5] for s in data.row_starts] == ['{"k":', '{"k":']


def test_json_blocks_are_groups_of_whole_items() -> None:
    items = [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(60)]
    text = json.dumps({"items": items}, indent=2)
    doc = parse_json(text.encode(), "items.json")
    texts = block_texts(doc)
    assert len(texts) > 1
    for block in texts:
        assert block.count("\n") < JSON_BLOCK_LINES + 10
    for block in texts[1:]:
        assert block.startswith("{")  # blocks start at an item
    assert texts[0].startswith('{\n  "items": [')
    assert_blocks_partition(doc)


def test_minified_json_is_cut_by_characters() -> None:
    items = [{"id": i, "text": "y" * 90} for i in range(200)]
    doc = parse_json(json.dumps(items).encode(), "min.json")
    assert len(doc.blocks) > 3
    assert all(b.end - b.start <= JSON_BLOCK_CHARS + 200 for b in doc.blocks)
    assert_blocks_partition(doc)


# --- through the index --------------------------------------------------------------


def test_discover_picks_up_table_files(tmp_path: Path) -> None:
    for name in ("a.csv", "b.TSV", "c.json", "d.txt", "e.xlsx"):
        (tmp_path / name).write_text("x\n")
    found = [path.name for path in discover([tmp_path])]
    assert found == ["a.csv", "b.TSV", "c.json", "d.txt"]


def test_chunks_are_whole_rows_of_the_file(tmp_path: Path) -> None:
    rows = [["date", "region", "amount", "comment"]] + [
        [f"2024-01-{i % 28 + 1:02d}", f"region {i % 5}", str(i), f"row number {i}, fine"]
        for i in range(200)
    ]
    raw = csv_bytes(rows)
    (tmp_path / "sales.csv").write_bytes(raw)
    (tmp_path / "small.json").write_text('[{"a": 1}, {"a": 2}]')
    with Index.open(tmp_path / "idx", create=True) as index:
        results = index.ingest([tmp_path / "sales.csv", tmp_path / "small.json"], embed=False)
        assert [r.status for r in results] == ["added", "added"]
        assert results[0].chunks > 1 and results[1].chunks == 1
        document = index.store.get_document(results[0].doc_id or "")
        assert document is not None and document.text == raw.decode()
        assert document.format == "csv" and document.title == "sales"
        chunks = index.store.chunks_of(document.doc_id, 1)
        line_starts = {0} | {i + 1 for i, c in enumerate(document.text) if c == "\n"}
        for chunk in chunks:
            assert chunk.text == document.text[chunk.start : chunk.end]
            assert chunk.start in line_starts  # never cut inside a row
            assert chunk.end + 1 in line_starts or chunk.end == len(document.text.rstrip())
            assert chunk.label.startswith("sales")
        assert chunks[0].text.startswith("date,region,amount,comment\n")
        assert "row number 199, fine" in chunks[-1].text
        assert index.store.search_bm25("region", 3)


BAD_FILES = [
    ("bytes.csv", b"a,b\n\xff\xfe,2\n", "not valid UTF-8 (byte offset 4: 0xFF, line 2)"),
    (
        "latin1.json",
        '[{"city": "Montréal"}]'.encode("latin-1"),
        "not valid UTF-8 (byte offset 16: 0xE9, line 1)",
    ),
    ("blank.csv", b"\n \n\n", "no header row"),
    ("zero.csv", b"", "empty file (0 bytes)"),
    ("wide.csv", b"a,b\n1,2\n3,4,5\n", "line 3 has 3 cells, more than the header's 2"),
    ("dupe.csv", b"a,b,a\n1,2,3\n", "duplicate column name 'a'"),
    ("quote.csv", b'a,b\n1,"never closed\n2,3\n', "CSV syntax error in the row at line 2"),
    ("syntax.json", b'[\n {"a": 1},\n {"a": 2,}\n]', "invalid JSON at line 3, column 10"),
    ("scalar.json", b'"just a string"', "expected an array of objects"),
    ("numbers.json", b"[1, 2, 3]", "item 1 of the array is a number"),
    ("mixed.json", b'[{"a": 1}, [2]]', "item 2 of the array is an array"),
    ("twokeys.json", b'{"a": [{"x": 1}], "b": []}', "got an object with keys 'a', 'b'"),
    ("empty.json", b"[]", "the array is empty"),
    ("nokeys.json", b"[{}, {}]", "no columns"),
    ("nan.json", b'[{"a": NaN}]', "NaN is not a JSON value"),
    ("pdf.csv", b"%PDF-1.7\n...", "named .csv but the content is a PDF"),
]


@pytest.mark.parametrize(("name", "raw", "cause"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_input_names_the_file_and_the_cause(
    tmp_path: Path, name: str, raw: bytes, cause: str
) -> None:
    path = tmp_path / name
    path.write_bytes(raw)
    with pytest.raises(IngestError) as info:
        parse_file(path)
    assert info.value.path == str(path)
    assert cause in info.value.cause
    assert str(info.value).startswith(f"{path}: ")


def test_a_bad_table_fails_alone_in_a_batch(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a_good.csv").write_text("x,y\n1,2\n")
    (folder / "b_bad.csv").write_text("x,y\n1,2\n3,4,5,6\n")
    (folder / "c_good.json").write_text('[{"x": 1}]')
    (folder / "d_notes.txt").write_text("Some notes.\n")
    with Index.open(tmp_path / "idx", create=True) as index:
        results = index.ingest([folder], embed=False)
        statuses = {Path(r.path).name: (r.status, r.error) for r in results}
        assert statuses == {
            "a_good.csv": ("added", None),
            "b_bad.csv": ("failed", "line 3 has 4 cells, more than the header's 2"),
            "c_good.json": ("added", None),
            "d_notes.txt": ("added", None),
        }
        listed = index.store.list_documents()
        assert [(Path(d.source_path).name, d.format) for d in listed] == [
            ("a_good.csv", "csv"),
            ("c_good.json", "json"),
            ("d_notes.txt", "text"),
        ]
