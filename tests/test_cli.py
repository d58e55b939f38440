"""The `quoteproof` command as a user runs it: real processes, real exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from quoteproof.model import sha256_text


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quoteproof", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_ingest_reports_failures_and_exit_code(tmp_path: Path, corpus: Path) -> None:
    (corpus / "bad.html").write_bytes(b'<meta charset="utf-8"><p>caf\xe9</p>')
    result = run("ingest", str(corpus), "--index", str(tmp_path / "idx"))
    assert result.returncode == 1
    assert f"failed: {corpus / 'bad.html'}: not valid UTF-8" in " ".join(result.stderr.split())
    summary = " ".join(result.stderr.split())
    assert "Ingest summary" in summary
    assert "5 computed" in summary and "3 documents, 5 chunks, 5 with vectors" in summary
    again = run("ingest", str(corpus / "shingles.md"), "--index", str(tmp_path / "idx"))
    assert again.returncode == 0


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    missing = run("search", "anything", "--index", str(tmp_path / "absent"))
    assert missing.returncode == 2 and "no index" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    assert run("ask").returncode == 2
    assert run("ingest", str(tmp_path / "nope"), "--index", str(tmp_path)).returncode == 2
    assert run("frobnicate").returncode == 2


def test_search_text_and_json(session_index_dir: Path) -> None:
    text = run("search", "shingles rash", "--index", str(session_index_dir))
    assert text.returncode == 0 and "Shingles" in text.stdout
    data = json.loads(
        run(
            "search", "blood pressure", "--index", str(session_index_dir), "--format", "json"
        ).stdout
    )
    assert data["hits"] and data["hits"][0]["source_path"].endswith("pressure.html")
    assert {"ref", "doc_id", "source_path", "score", "label", "text"} <= set(data["hits"][0])


def test_batch_search_jsonl(session_index_dir: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": "a", "text": "antiviral medicines"}\n{"id": 7, "text": "zzzz qqqq"}\n'
    )
    result = run(
        "search", "--queries", str(queries), "--format", "jsonl", "--top-k", "2",
        "--index", str(session_index_dir),
    )  # fmt: skip
    assert result.returncode == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["a", 7]
    assert 1 <= len(lines[0]["hits"]) <= 2 and lines[1]["hits"] == []
    assert set(lines[0]["hits"][0]) == {"ref", "doc_id", "source_path", "score"}
    for bad_line in ('{"id": 1}', "[" * 100_000):  # no text; nested past the parser's depth
        queries.write_text(bad_line + "\n")
        bad = run("search", "--queries", str(queries), "--index", str(session_index_dir))
        assert bad.returncode == 2 and "q.jsonl:1: bad query line" in bad.stderr
        assert "Traceback" not in bad.stderr


def ask_json(index: Path, server: Any, question: str) -> subprocess.CompletedProcess[str]:
    return run(
        "ask", question, "--index", str(index), "--llm", "openai",
        "--base-url", server.base_url, "--model", "scripted", "--format", "json",
    )  # fmt: skip


def test_ask_json_contract_and_verify(
    index_dir: Path, openai_server: Any, tmp_path: Path, corpus: Path
) -> None:
    hits = json.loads(
        run("search", "recommended dose", "--index", str(index_dir), "--format", "json").stdout
    )["hits"]
    ref = hits[0]["ref"]
    openai_server.script = [
        f"Dosing is stated [{ref}]. "
        f'<quote ref="{ref}">the recommended dose is 200 mg on day 1</quote>'
    ]
    result = ask_json(index_dir, openai_server, "What is the recommended dose?")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["schema"] == "quoteproof.answer/1" and answer["status"] == "answered"
    assert [s["type"] for s in answer["segments"]] == ["prose", "quote"]
    assert answer["segments"][0]["citations"] == [ref]
    (quote,) = answer["quotes"]
    canonical = (corpus / "dosing.txt").read_bytes().decode("utf-8")
    canonical = canonical.replace("\r\n", "\n").replace("\r", "\n")
    assert quote["text"] == canonical[quote["start"] : quote["end"]]
    assert quote["text"].startswith("The recommended dose is 200 mg on day 1")
    # the model's words lie inside the no-model answer's quote, which is shown instead
    assert quote["match"] in {"exact", "normalized", "fuzzy"}
    assert quote["claimed_text"].lower().startswith("the recommended dose is 200 mg on day 1")
    assert quote["source_path"] == str((corpus / "dosing.txt").resolve())
    assert quote["text_sha256"] == sha256_text(quote["text"])
    assert quote["doc_sha256"] == sha256_text(canonical)
    assert quote["pages"] is None and answer["llm"]["backend"] == "openai"
    assert answer["llm"]["raw_output"] == openai_server.script[0]

    saved = tmp_path / "a.json"
    saved.write_text(result.stdout)
    ok = run("verify", str(saved), "--index", str(index_dir))
    # the quote and the passage its prose cites (c1) both verify
    assert ok.returncode == 0 and "2 of 2 quotes verified" in ok.stdout
    assert "ok      c1" in ok.stdout


@pytest.mark.parametrize(
    "tamper",
    [
        lambda q: q.update(text=q["text"].replace("200", "300")),
        lambda q: q.update(start=q["start"] + 1),
        lambda q: q.update(end=q["end"] - 1),
        lambda q: q.update(text_sha256="0" * 64),
        lambda q: q.update(doc_sha256="0" * 64),
        lambda q: q.update(pages=[3]),
    ],
    ids=["text", "start", "end", "text_sha256", "doc_sha256", "pages"],
)
def test_verify_detects_tampering(
    index_dir: Path, openai_server: Any, tmp_path: Path, tamper: Any
) -> None:
    openai_server.script = ["<quote>The recommended dose is 200 mg on day 1</quote>"]
    answer = json.loads(ask_json(index_dir, openai_server, "recommended dose").stdout)
    tamper(answer["quotes"][0])
    saved = tmp_path / "tampered.json"
    saved.write_text(json.dumps(answer))
    result = run("verify", str(saved), "--index", str(index_dir))
    assert result.returncode == 1
    assert "INVALID q1" in result.stdout


def test_verify_rejects_a_malformed_file(index_dir: Path, tmp_path: Path) -> None:
    saved = tmp_path / "junk.json"
    saved.write_text('{"schema": "something else"}')
    result = run("verify", str(saved), "--index", str(index_dir))
    assert result.returncode == 2 and "junk.json" in result.stderr


@pytest.mark.parametrize(
    ("field", "literal", "problem"),
    [
        ("doc_id", '"\\ud83d"', 'quotes[0].doc_id: holds a lone surrogate "\\ud83d"'),
        ("ref", '"x\\udc00"', 'quotes[0].ref: holds a lone surrogate "\\udc00"'),
        ("id", '"\\ud83d"', 'quotes[0].id: holds a lone surrogate "\\ud83d"'),
        ("start", "1e309", "quotes[0].start: expected a finite number, got inf"),
        ("end", "NaN", "quotes[0].end: expected a finite number, got nan"),
        ("text", "-Infinity", "quotes[0].text: expected a finite number, got -inf"),
    ],
)
def test_verify_names_a_value_json_cannot_carry_in_one_line(
    index_dir: Path, tmp_path: Path, field: str, literal: str, problem: str
) -> None:
    from quoteproof import Index
    from quoteproof.codec import answer_to_dict
    from quoteproof.llm.extractive import ExtractiveBackend

    with Index.open(index_dir) as index:
        answer = answer_to_dict(index.ask("recommended dose", backend=ExtractiveBackend()))
    answer["quotes"][0][field] = "@@"
    saved = tmp_path / "odd.json"
    saved.write_text(json.dumps(answer).replace('"@@"', literal, 1), encoding="utf-8")
    result = run("verify", str(saved), "--index", str(index_dir))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(f"error: {saved}: ") and problem in result.stderr


def test_unreachable_model_server_exits_2(index_dir: Path, dead_server_url: str) -> None:
    result = run(
        "ask", "shingles rash", "--index", str(index_dir), "--llm", "openai",
        "--base-url", dead_server_url, "--model", "m", "--timeout", "2",
    )  # fmt: skip
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if not line.startswith("note: ")]
    assert len(errors) == 1 and "cannot reach the model server" in errors[0]


def test_openai_without_model_is_a_usage_error(index_dir: Path) -> None:
    result = run("ask", "shingles", "--index", str(index_dir), "--llm", "openai")
    assert result.returncode == 2 and "--model" in result.stderr


def test_ask_markdown_and_text_formats(session_index_dir: Path) -> None:
    markdown = run(
        "ask", "first sign of shingles", "--index", str(session_index_dir), "--format", "markdown"
    )  # fmt: skip
    assert markdown.returncode == 0 and "**Verbatim from source**" in markdown.stdout
    text = run("ask", "first sign of shingles", "--index", str(session_index_dir))
    assert "Verbatim from source" in text.stdout
    refused = run("ask", "zzzz qqqq", "--index", str(session_index_dir))
    assert refused.returncode == 0 and "no answer to this question" in refused.stdout


def test_show_prints_a_chunk_with_its_metadata(session_index_dir: Path) -> None:
    search = run("search", "shingles", "--index", str(session_index_dir), "--format", "json")
    ref = json.loads(search.stdout)["hits"][0]["ref"]
    data = json.loads(
        run("show", ref, "--index", str(session_index_dir), "--format", "json").stdout
    )
    assert data["ref"] == ref and data["current"] is True and data["format"] == "markdown"
    assert data["source_uri"].startswith("file:///") and data["pages"] is None
    assert data["parent_section"] == data["section"][:-1]
    assert "shingles" in data["text"]
    line = run("show", ref, "--index", str(session_index_dir), "--format", "jsonl").stdout
    assert len(line.splitlines()) == 1 and json.loads(line) == data  # JSON Lines: one line
    text = run("show", ref, "--index", str(session_index_dir))
    assert text.returncode == 0
    assert "ref" in text.stdout and ref in text.stdout and "section" in text.stdout
    missing = run("show", "zzzzzz.9", "--index", str(session_index_dir))
    assert missing.returncode == 2
    assert "no chunk with reference 'zzzzzz.9'" in missing.stderr


def test_ingest_size_limit_and_summary(tmp_path: Path, corpus: Path) -> None:
    (corpus / "big.txt").write_text("word " * 300_000)  # 1.5 MB
    result = run(
        "ingest", "--no-embed", str(corpus), "--index", str(tmp_path / "idx"), "--max-file-mb", "1"
    )
    assert result.returncode == 1
    stderr = " ".join(result.stderr.split())
    assert f"failed: {corpus / 'big.txt'}: file is 1.5 MB, over the 1 MB limit" in stderr
    assert "Ingest summary" in stderr and "1 failed (above)" in stderr
    summary = stderr.split("Ingest summary")[1]
    assert "pages" not in summary and " time " in summary  # no PDF: no page count
    assert "0 added · 0 updated · 0 unchanged · 1 failed" not in stderr
    assert "3 added · 0 updated · 0 unchanged · 1 failed" in stderr
    ok = run(
        "ingest", "--no-embed", str(corpus), "--index", str(tmp_path / "idx"), "--max-file-mb", "2"
    )
    assert ok.returncode == 0 and "0 failed ·" in " ".join(ok.stderr.split())
