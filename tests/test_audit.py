"""The audit log and API keys through the CLI: every answer is recorded, and any
edited, deleted or cut-off entry is detected."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from quoteproof import Index
from quoteproof.audit import answer_of, list_entries, record_answer, verify_log, visible_to
from quoteproof.keys import authenticate, create_key
from quoteproof.store.sqlite import DB_FILENAME

QUESTIONS = ["What is the first sign of shingles?", "What is the remdesivir dose?"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quoteproof", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def logged_index(index_dir: Path) -> Path:
    """The small index with three answers in its audit log."""
    with Index.open(index_dir) as index:
        for question in [*QUESTIONS, "Normal blood pressure?"]:
            answer = index.ask(question)
            record_answer(index, answer, user="tester", collections=None)
    return index_dir


def tamper(index_dir: Path, sql: str) -> None:
    """What someone with write access to the file could do: drop the guard, edit."""
    db = sqlite3.connect(index_dir / DB_FILENAME)
    with db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='trigger'")]
        for name in names:
            if "audit" in name:
                db.execute(f'DROP TRIGGER "{name}"')
        db.execute(sql)
    db.close()


def audit_table(index_dir: Path) -> str:
    db = sqlite3.connect(index_dir / DB_FILENAME)
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    db.close()
    return next(name for name in names if "audit" in name)


def test_cli_ask_records_every_answer_and_the_chain_verifies(index_dir: Path) -> None:
    for question in QUESTIONS:
        assert run("ask", question, "--index", str(index_dir), "--format", "json").returncode == 0
    check = run("audit", "verify", "--index", str(index_dir))
    assert check.returncode == 0, check.stdout + check.stderr
    assert "2 entries, chain intact" in check.stdout
    lines = run("audit", "export", "--index", str(index_dir)).stdout.splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["answer"]["question"] for r in records] == QUESTIONS
    assert [r["seq"] for r in records] == [1, 2]
    assert records[1]["prev_hash"] == records[0]["hash"]
    assert records[0]["collections"] == ["*"] and records[0]["user"]
    with Index.open(index_dir) as index:
        entry = index.store.get_audit_entry(records[0]["id"])
        assert entry is not None
        answer = answer_of(entry)
        assert answer.without_quotes.question == QUESTIONS[0]
        assert all(check.valid for check in index.verify(answer))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("UPDATE {t} SET body = replace(body, 'shingles', 'measles') WHERE seq = 1", "changed"),
        ("UPDATE {t} SET user = 'someone else' WHERE seq = 2", "changed"),
        ("DELETE FROM {t} WHERE seq = 2", "missing"),
        ("DELETE FROM {t} WHERE seq = 3", "cut off"),
    ],
)
def test_an_edited_or_deleted_entry_is_detected(
    logged_index: Path, change: str, message: str
) -> None:
    tamper(logged_index, change.format(t=audit_table(logged_index)))
    result = run("audit", "verify", "--index", str(logged_index))
    assert result.returncode == 1
    assert message in result.stdout


def test_the_store_refuses_to_edit_the_log(logged_index: Path) -> None:
    db = sqlite3.connect(logged_index / DB_FILENAME)
    table = audit_table(logged_index)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute(f"UPDATE {table} SET user = 'x' WHERE seq = 1")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute(f"DELETE FROM {table} WHERE seq = 1")
    db.close()
    with Index.open(logged_index) as index:
        assert verify_log(index.store).intact


def test_entries_are_visible_only_within_their_scope(index_dir: Path) -> None:
    with Index.open(index_dir) as index:
        answer = index.ask(QUESTIONS[0])
        scoped = record_answer(index, answer, user="a", collections=["alpha"])
        unscoped = record_answer(index, answer, user="b", collections=None)
        assert visible_to(scoped, ["alpha", "beta"]) and not visible_to(scoped, ["beta"])
        assert not visible_to(unscoped, ["alpha"]) and visible_to(unscoped, None)
        assert [e.entry_id for e in list_entries(index.store, ["alpha"])] == [scoped.entry_id]
        assert [e.entry_id for e in list_entries(index.store, None)] == [
            unscoped.entry_id,
            scoped.entry_id,
        ]


def test_keys_create_list_revoke(index_dir: Path) -> None:
    created = run("keys", "create", "--collection", "alpha", "--name", "desk", "--index",
                  str(index_dir))  # fmt: skip
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("qp_") and "cannot be shown again" in created.stderr
    with Index.open(index_dir) as index:
        key = authenticate(index.store, token)
        assert key is not None and key.collections == ("alpha",) and key.name == "desk"
        assert authenticate(index.store, token[:-1] + ("A" if token[-1] != "A" else "B")) is None
        assert authenticate(index.store, "qp_nonsense") is None
    listed = run("keys", "list", "--index", str(index_dir)).stdout
    assert key.key_id in listed and "active" in listed and token.split("_")[-1] not in listed
    assert run("keys", "revoke", key.key_id, "--index", str(index_dir)).returncode == 0
    with Index.open(index_dir) as index:
        assert authenticate(index.store, token) is None
    assert run("keys", "revoke", "nope", "--index", str(index_dir)).returncode == 2


def test_a_key_needs_a_valid_collection(index_dir: Path) -> None:
    with Index.open(index_dir) as index:
        with pytest.raises(ValueError, match="collection"):
            create_key(index.store, "x", [])
        with pytest.raises(ValueError):
            create_key(index.store, "x", ["../etc"])
