"""`quoteproof kg import|list|retire` as a user runs them: a graph file with
provenance imported into a collection, listed and retired; bad graph files (bad
CSV, missing columns, a 1 GB file, bytes that are not UTF-8, an unknown document)
fail naming the file and the line, and store nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import cli
from quoteproof import Index
from quoteproof.render.hits import FACT_FIELDS

HEADER = "subject,relation,object,document,page,quote\n"
GOOD = (
    HEADER + "remdesivir,has_dose,200 mg on day 1,dosing.txt,,The recommended dose is 200 mg\n"
    'remdesivir,contraindicated_in,"known hypersensitivity",,,\n'
)


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def listed(index: Path) -> list[dict[str, object]]:
    ran = cli("kg", "list", "--index", str(index), "--json")
    assert ran.returncode == 0, ran.stderr
    triplets: list[dict[str, object]] = json.loads(ran.stdout)["triplets"]
    return triplets


def test_import_list_and_retire(index_dir: Path, tmp_path: Path) -> None:
    graph = write(tmp_path, "graph.csv", GOOD)
    ran = cli("kg", "import", str(graph), "--index", str(index_dir))
    assert ran.returncode == 0, ran.stderr
    assert "imported 2 triplet(s) from graph.csv into 'default': 2 added" in ran.stdout
    triplets = listed(index_dir)
    assert [(t["subject"], t["relation"], t["object"], t["row"]) for t in triplets] == [
        ("remdesivir", "has_dose", "200 mg on day 1", 2),
        ("remdesivir", "contraindicated_in", "known hypersensitivity", 3),
    ]
    with Index.open(index_dir) as index:
        dosing = next(
            d for d in index.store.list_documents() if d.source_path.endswith("dosing.txt")
        )
    assert triplets[0]["doc_id"] == dosing.doc_id and triplets[1]["doc_id"] is None
    text = cli("kg", "list", "--index", str(index_dir))
    assert "graph.csv:2  remdesivir | has_dose | 200 mg on day 1" in text.stdout
    retired = cli("kg", "retire", str(triplets[0]["triplet_id"]), "--index", str(index_dir))
    assert retired.returncode == 0 and "retired 1 triplet(s)" in retired.stdout
    assert [t["row"] for t in listed(index_dir)] == [3]
    again = cli("kg", "retire", str(triplets[0]["triplet_id"]), "--index", str(index_dir))
    assert again.returncode == 2 and "no current triplet matches" in again.stderr
    by_file = cli("kg", "retire", "--file", "graph.csv", "--index", str(index_dir))
    assert by_file.returncode == 0 and listed(index_dir) == []


def test_collections_keep_their_own_triplets(index_dir: Path, tmp_path: Path) -> None:
    graph = write(tmp_path, "g.jsonl", '{"subject": "Acme", "relation": "signed", "object": "X"}\n')
    ran = cli("kg", "import", str(graph), "--index", str(index_dir), "--collection", "legal")
    assert ran.returncode == 0, ran.stderr
    only = cli("kg", "list", "--index", str(index_dir), "--collection", "default", "--json")
    assert json.loads(only.stdout) == {"triplets": []}
    assert [t["collection"] for t in listed(index_dir)] == ["legal"]


BAD_FILES = {
    "unclosed quote": (
        "bad.csv",
        HEADER + 'remdesivir,has_dose,"200 mg\n',
        "not valid CSV",
    ),
    "missing columns": (
        "cols.csv",
        "subject,object\nremdesivir,rash\n",
        "missing column(s) relation",
    ),
    "more fields than the header": (
        "wide.csv",
        HEADER + "a,b,c,,,,extra\n",
        "line 2: 7 fields, but the header has 6",
    ),
    "an empty object": (
        "empty.csv",
        HEADER + "remdesivir,has_dose,,,,\n",
        "line 2: 'object' is empty",
    ),
    "not UTF-8": (
        "latin1.csv",
        (HEADER + "remdesivir,causes,naus\xe9e\n").encode("latin-1"),
        "line 2 is not UTF-8 (byte 0xe9",
    ),
    "a bad page": (
        "page.csv",
        HEADER + "remdesivir,has_dose,200 mg,dosing.txt,zero,\n",
        "line 2: 'page' must be a whole number from 1",
    ),
    "an unknown document": (
        "doc.csv",
        HEADER + "remdesivir,has_dose,200 mg,no-such-file.pdf,,\n",
        "line 2: 'document' 'no-such-file.pdf' names no current document",
    ),
    "a JSON line that is not an object": (
        "list.jsonl",
        '{"subject": "a", "relation": "b", "object": "c"}\n[1, 2]\n',
        "line 2: expected a JSON object, got list",
    ),
    "not a graph file": ("graph.xlsx", "x", "a graph file must be one of"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_graph_file_is_named_and_nothing_is_stored(
    case: str, index_dir: Path, tmp_path: Path
) -> None:
    name, content, message = BAD_FILES[case]
    # a good first row: a file that fails further down stores none of its rows
    if isinstance(content, str) and name.endswith(".csv") and content.startswith(HEADER):
        content = HEADER + "remdesivir,treats,COVID-19,,,\n" + content[len(HEADER) :]
        message = message.replace("line 2", "line 3")
    path = write(tmp_path, name, content)
    ran = cli("kg", "import", str(path), "--index", str(index_dir))
    assert ran.returncode == 2, ran.stdout
    assert f"{path}: " in ran.stderr and message in ran.stderr, ran.stderr
    assert listed(index_dir) == []


def test_a_1_gb_graph_file_is_refused_before_it_is_read(index_dir: Path, tmp_path: Path) -> None:
    huge = tmp_path / "huge.csv"
    with huge.open("wb") as sparse:  # 1 GB on paper, no disk used
        sparse.truncate(1_000_000_000)
    ran = cli("kg", "import", str(huge), "--index", str(index_dir))
    assert ran.returncode == 2
    assert "the file is 1,000.0 MB, over the limit of 200 MB (--max-file-mb)" in ran.stderr
    assert listed(index_dir) == []


def test_a_failed_reimport_keeps_the_earlier_triplets(index_dir: Path, tmp_path: Path) -> None:
    graph = write(tmp_path, "graph.csv", GOOD)
    assert cli("kg", "import", str(graph), "--index", str(index_dir)).returncode == 0
    before = listed(index_dir)
    graph.write_bytes(HEADER.encode() + b"remdesivir,causes,\xff\n")
    assert cli("kg", "import", str(graph), "--index", str(index_dir)).returncode == 2
    assert listed(index_dir) == before


def test_verify_rechecks_a_cited_triplet_and_its_quote(index_dir: Path, tmp_path: Path) -> None:
    graph = write(tmp_path, "graph.csv", GOOD)
    assert cli("kg", "import", str(graph), "--index", str(index_dir)).returncode == 0
    asked = cli(
        "ask", "What is the remdesivir dose?", "--context", "triplets", "--format", "json",
        "--index", str(index_dir),
    )  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["context"] == "triplets"
    assert [(f["id"], f["origin"], f["quote_id"]) for f in answer["facts"]] == [
        ("TID-1", "imported", "f1"),
        ("TID-2", "imported", None),
    ]
    saved = write(tmp_path, "answer.json", json.dumps(answer))
    ok = cli("verify", str(saved), "--index", str(index_dir))
    assert ok.returncode == 0, ok.stdout
    tid = answer["facts"][0]["triplet_id"]
    assert f"ok      TID-1 [{tid}]" in ok.stdout and "ok      f1 [" in ok.stdout
    assert cli("kg", "retire", tid, "--index", str(index_dir)).returncode == 0
    retired = cli("verify", str(saved), "--index", str(index_dir))
    assert retired.returncode == 0
    assert "note: TID-1 is from a triplet since retired from the graph" in retired.stdout
    answer["facts"][0]["object"] = "2000 mg on day 1"
    tampered = cli(
        "verify", str(write(tmp_path, "t.json", json.dumps(answer))), "--index", str(index_dir)
    )
    assert tampered.returncode == 1
    assert (
        f"INVALID TID-1 [{tid}]: the answer's triplet remdesivir | has_dose | 2000 mg"
        in tampered.stdout
    )


def test_context_options_a_mode_cannot_take_are_named_as_options(index_dir: Path) -> None:
    where = ("--index", str(index_dir))
    for args, message in [
        (("--document", "x"), "--document applies only to --context whole"),
        (("--mode", "agent", "--context", "both", "--model", "m"), "--context applies to the"),
        (("--mode", "rationale", "--context", "triplets", "--model", "m"), "use --context both"),
    ]:
        ran = cli("ask", "What is the remdesivir dose?", *args, *where)
        assert ran.returncode == 2 and message in ran.stderr, ran.stderr


def test_search_shows_the_triplets_it_matches_as_facts(index_dir: Path, tmp_path: Path) -> None:
    where = ("--index", str(index_dir))
    before = cli("search", "remdesivir dose", "--format", "json", *where)
    assert before.returncode == 0 and json.loads(before.stdout)["facts"] == []
    plain = cli("search", "remdesivir dose", *where)
    assert "Facts:" not in plain.stdout
    graph = write(tmp_path, "graph.csv", GOOD)
    assert cli("kg", "import", str(graph), *where).returncode == 0
    shown = cli("search", "remdesivir dose", *where)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert text.index("Search: remdesivir dose") < text.index(
        "Facts: knowledge-graph triplets (imported, not quotes)"
    )
    facts = text[text.index("Facts:") :]
    assert "remdesivir | has_dose |" in facts and "known hypersensitivity" in facts
    assert "graph.csv, line 2" in facts and "Verbatim" not in text
    found = json.loads(cli("search", "remdesivir dose", "--format", "json", *where).stdout)
    (first, second) = found["facts"]
    assert (first["rank"], first["match"], first["entity"]) == (1, "exact", "remdesivir")
    assert (first["subject"], first["relation"], first["object"]) == (
        "remdesivir",
        "has_dose",
        "200 mg on day 1",
    )
    assert (first["graph_file"], first["row"], second["row"]) == ("graph.csv", 2, 3)
    assert list(first) == list(FACT_FIELDS) and first["origin"] == "imported"
    assert first["claimed_quote"] == "The recommended dose is 200 mg"  # the file's claim
    elsewhere = cli(
        "search", "remdesivir dose", "--collection", "other", "--format", "json", *where
    )
    assert json.loads(elsewhere.stdout)["facts"] == []  # scoped like passages
