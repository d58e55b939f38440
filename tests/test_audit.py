"""The audit log and API keys through the CLI: every answer is recorded, and any
edited, added, deleted or cut-off entry is detected, also when whoever did it could
write the database (signatures with a key kept outside it, and a witness file)."""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import Ran, cli
from quoteproof import Index
from quoteproof.audit import answer_of, list_entries, record_answer, verify_log, visible_to
from quoteproof.audit_key import audit_key_path, read_audit_key
from quoteproof.keys import authenticate, create_key
from quoteproof.store.audit_chain import GENESIS_HASH, audit_hash, head_signature
from quoteproof.store.base import NewEntry
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
    said = " ".join(check.stdout.split())  # the note names what to run for a witness
    assert "not checked against a witness file" in said
    assert "`audit head --export FILE`" in said and "`audit verify --witness FILE`" in said
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
        assert verify_log(index.store, index.signing_key()).intact


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


# --- tamper evidence against someone who can write the database ------------------------

HEAD_KEY = "setting:audit_head"


def rows(index_dir: Path) -> list[sqlite3.Row]:
    db = sqlite3.connect(index_dir / DB_FILENAME)
    db.row_factory = sqlite3.Row
    found = db.execute("SELECT * FROM audit_log ORDER BY seq").fetchall()
    db.close()
    return found


def head_setting(index_dir: Path) -> str:
    db = sqlite3.connect(index_dir / DB_FILENAME)
    (value,) = db.execute("SELECT value FROM meta WHERE key = ?", (HEAD_KEY,)).fetchone()
    db.close()
    return str(value)


def chained(prev_hash: str, row: sqlite3.Row, **changes: object) -> tuple[str, dict[str, object]]:
    """The public hash of `row` with `changes`, as anyone can recompute it."""
    fields: dict[str, object] = {**dict(row), **changes, "prev_hash": prev_hash}
    collections = tuple(json.loads(str(fields["collections"])))
    digest = audit_hash(
        prev_hash,
        int(str(fields["seq"])),
        str(fields["entry_id"]),
        str(fields["time"]),
        fields["user"] if fields["user"] is None else str(fields["user"]),
        collections,
        str(fields["body"]),
    )
    return digest, fields


@pytest.fixture
def witnessed(logged_index: Path, tmp_path: Path) -> tuple[Path, Path, str]:
    """The logged index, a witness file holding its head (exported with the CLI),
    and the head setting as it was after the second entry (seen by a snoop then)."""
    with Index.open(logged_index) as index:
        entries = index.store.audit_entries()
    assert [e.signature is not None for e in entries] == [True, True, True]
    second_head = f"2:{entries[1].hash}:{head_signature(read_key(), 2, entries[1].hash)}"
    witness = tmp_path / "elsewhere" / "witness.jsonl"
    witness.parent.mkdir()
    exported = cli("audit", "head", "--export", str(witness), "--index", str(logged_index))
    assert exported.returncode == 0, exported.stdout + exported.stderr
    assert exported.stdout.splitlines()[-1] == f"3 {entries[2].hash}"
    return logged_index, witness, second_head


def read_key() -> bytes:
    key = read_audit_key(audit_key_path())
    assert key is not None
    return key


def verify(index_dir: Path, *options: str) -> Ran:
    return cli("audit", "verify", "--index", str(index_dir), *options)


def test_an_untouched_signed_log_verifies_with_its_witness(
    witnessed: tuple[Path, Path, str],
) -> None:
    index_dir, witness, _ = witnessed
    result = verify(index_dir, "--witness", str(witness))
    assert result.returncode == 0, result.stdout
    assert "3 entries, chain intact" in result.stdout and "INVALID" not in result.stdout
    assert "checked against 1 exported head(s), the latest at entry 3" in result.stdout


def test_deleting_the_last_entry_and_rewriting_the_head_is_detected(
    witnessed: tuple[Path, Path, str],
) -> None:
    index_dir, witness, second_head = witnessed
    entry_2 = rows(index_dir)[1]
    tamper(index_dir, "DELETE FROM audit_log WHERE seq = 3")
    tamper(index_dir, f"UPDATE meta SET value = '2:{entry_2['hash']}' WHERE key = '{HEAD_KEY}'")
    result = verify(index_dir)  # a head without its signature shows even without a witness
    assert result.returncode == 1 and "recorded head is not signed" in result.stdout
    # With the signed head a snoop saw earlier, only the witness shows the cut.
    tamper(index_dir, f"UPDATE meta SET value = '{second_head}' WHERE key = '{HEAD_KEY}'")
    assert verify(index_dir).returncode == 0
    result = verify(index_dir, "--witness", str(witness))
    assert result.returncode == 1, result.stdout
    assert "INVALID entry 3, the head exported to the witness at" in result.stdout
    assert "is missing (entries deleted or cut off)" in result.stdout


def test_editing_a_body_and_rehashing_every_later_entry_is_detected(
    witnessed: tuple[Path, Path, str],
) -> None:
    index_dir, witness, _ = witnessed
    previous = GENESIS_HASH
    for row in rows(index_dir):  # what anyone can do: the hash is public
        body = str(row["body"]).replace("shingles", "measles") if row["seq"] == 1 else row["body"]
        digest, _ = chained(previous, row, body=body)
        tamper(
            index_dir,
            f"UPDATE audit_log SET body = {sql_text(body)}, prev_hash = '{previous}', "
            f"hash = '{digest}' WHERE seq = {row['seq']}",
        )
        previous = digest
    tamper(index_dir, f"UPDATE meta SET value = '3:{previous}' WHERE key = '{HEAD_KEY}'")
    for options in ((), ("--witness", str(witness))):
        result = verify(index_dir, *options)
        assert result.returncode == 1, result.stdout
        assert "content was changed" not in result.stdout  # the chain itself is sound
        assert "entry 1 " in result.stdout and "the signature does not match" in result.stdout
    assert "is not the one exported to the witness" in result.stdout


def sql_text(value: object) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def test_deleting_the_whole_log_is_detected_by_the_witness(
    witnessed: tuple[Path, Path, str],
) -> None:
    index_dir, witness, _ = witnessed
    tamper(index_dir, "DELETE FROM audit_log")
    tamper(index_dir, f"DELETE FROM meta WHERE key = '{HEAD_KEY}'")
    result = verify(index_dir, "--witness", str(witness))
    assert result.returncode == 1, result.stdout
    assert "INVALID entry 3, the head exported to the witness at" in result.stdout
    assert "0 entries" in result.stdout


def test_appending_a_forged_entry_is_detected(witnessed: tuple[Path, Path, str]) -> None:
    index_dir, witness, _ = witnessed
    last = rows(index_dir)[-1]
    forged, fields = chained(
        str(last["hash"]), last, seq=4, entry_id="forged", user=None, body='{"q": "forged"}'
    )
    for signature in ("NULL", sql_text("0" * 64)):
        tamper(index_dir, "DELETE FROM audit_log WHERE seq = 4")
        tamper(
            index_dir,
            "INSERT INTO audit_log VALUES (4, 'forged', "
            f"{sql_text(fields['time'])}, NULL, {sql_text(fields['collections'])}, "
            f"{sql_text(fields['body'])}, {sql_text(last['hash'])}, '{forged}', {signature})",
        )
        tamper(index_dir, f"UPDATE meta SET value = '4:{forged}' WHERE key = '{HEAD_KEY}'")
        result = verify(index_dir, "--witness", str(witness))
        assert result.returncode == 1, result.stdout
        assert "content was changed" not in result.stdout  # the chain itself is sound
        assert "INVALID entry 4 (forged): " in result.stdout
        assert "not signed" in result.stdout or "signature does not match" in result.stdout
        assert "recorded head is not signed" in result.stdout


def test_a_tampered_log_gets_no_new_witness_head(witnessed: tuple[Path, Path, str]) -> None:
    index_dir, witness, _ = witnessed
    tamper(index_dir, "UPDATE audit_log SET user = 'someone else' WHERE seq = 2")
    before = witness.read_text()
    result = cli("audit", "head", "--export", str(witness), "--index", str(index_dir))
    assert result.returncode == 1 and "no head exported" in result.stdout
    assert witness.read_text() == before


def test_the_key_is_made_private_outside_the_index(index_dir: Path, tmp_path: Path) -> None:
    key = tmp_path / "keys" / "audit.key"
    ask = ("ask", QUESTIONS[0], "--index", str(index_dir), "--format", "json")
    assert cli(*ask, "--audit-key", str(key)).returncode == 0
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_text().strip()) == 64
    assert verify(index_dir, "--audit-key", str(key)).returncode == 0
    other = verify(index_dir, "--audit-key", str(tmp_path / "other.key"))
    assert other.returncode == 1 and "the audit key is missing" in other.stdout
    inside = cli(*ask, "--audit-key", str(index_dir / "audit.key"))
    assert inside.returncode == 2 and "must be kept outside the index" in inside.stderr
    assert not (index_dir / "audit.key").exists()
    key.chmod(0o644)
    readable = cli(*ask, "--audit-key", str(key))
    assert readable.returncode == 2 and "can be read by other users" in readable.stderr


def test_a_log_signed_with_another_key_does_not_verify(logged_index: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.key"
    other.write_text("ab" * 32 + "\n")
    other.chmod(0o600)
    result = verify(logged_index, "--audit-key", str(other))
    assert result.returncode == 1 and result.stdout.count("the signature does not match") == 3


def test_unsigned_entries_written_before_signing_are_named(index_dir: Path) -> None:
    with Index.open(index_dir) as index:
        for number in (1, 2):  # as an index of schema 4 holds them
            index.store.append_audit(
                NewEntry(f"old{number}", f"2026-01-0{number}T00:00:00+00:00", None, ("*",), "{}")
            )
    result = verify(index_dir)
    assert result.returncode == 0, result.stdout
    assert "none of the 2 entries is signed" in result.stdout
    assert cli("ask", QUESTIONS[0], "--index", str(index_dir), "--format", "json").returncode == 0
    result = verify(index_dir)
    assert result.returncode == 0, result.stdout
    assert "entries 1..2 are unsigned" in result.stdout and "entry 3 covers them" in result.stdout
