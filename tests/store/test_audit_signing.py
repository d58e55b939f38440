"""Once the audit key has signed an index's log, an unsigned entry or head fails
`audit verify`, on both stores: removing every signature and re-hashing the chain
does not pass the log off as one written before entries were signed."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from helpers.answers import make_answer
from helpers.cli import Ran, cli
from helpers.raw_sql import raw_execute, sql_text
from quoteproof import Index
from quoteproof.audit import record_answer
from quoteproof.audit_key import audit_key_path
from quoteproof.signing_record import first_signed, record_path
from quoteproof.store.audit_chain import AUDIT_HEAD_SETTING, GENESIS_HASH, audit_hash
from quoteproof.store.base import setting_key
from quoteproof.store.open import is_postgres_url, open_store

QUESTIONS = ("What is the dose?", "Who may not take it?", "How is it stored?")


def answered(location: str) -> None:
    """An index at `location` whose log holds three signed answers."""
    with Index.open(location, create=True) as index:
        for question in QUESTIONS:
            answer = make_answer((), (), question=question)
            record_answer(index, answer, user="ann", collections=None)


def unguard(location: str) -> None:
    """Take away the store's append-only guard, as a database writer can."""
    if is_postgres_url(location):
        raw_execute(location, "ALTER TABLE audit_log DISABLE TRIGGER USER")
        return
    for event in ("update", "delete"):
        raw_execute(location, f"DROP TRIGGER IF EXISTS audit_log_no_{event}")


def strip_and_rewrite(location: str) -> None:
    """The attack: every signature set to NULL, entry 2's question edited, the chain
    re-hashed (the hash is public) and an unsigned head written."""
    with closing(open_store(location)) as store:
        entries = store.audit_entries()
    unguard(location)
    previous = GENESIS_HASH
    for entry in entries:
        body = entry.body.replace("Who may not", "Who may") if entry.seq == 2 else entry.body
        fields = (entry.seq, entry.entry_id, entry.time, entry.user, entry.collections, body)
        digest = audit_hash(previous, *fields)
        raw_execute(
            location,
            f"UPDATE audit_log SET body = {sql_text(body)}, prev_hash = '{previous}', "
            f"hash = '{digest}', signature = NULL WHERE seq = {entry.seq}",
        )
        previous = digest
    head = f"{entries[-1].seq}:{previous}"
    raw_execute(
        location,
        f"UPDATE meta SET value = '{head}' WHERE key = '{setting_key(AUDIT_HEAD_SETTING)}'",
    )


def audit_verify(location: str) -> Ran:
    return cli("audit", "verify", "--index", location)


def test_the_first_signed_entry_is_recorded_beside_the_key(location: str) -> None:
    answered(location)
    assert first_signed(audit_key_path(), location) == 1
    assert record_path(audit_key_path()).stat().st_mode & 0o077 == 0


def test_stripping_every_signature_and_rehashing_is_detected(location: str, tmp_path: Path) -> None:
    """It used to pass: `audit verify` exited 0 ("3 entries, chain intact"), taking
    the log for one written before signing, and `audit head --export` witnessed the
    forged head."""
    answered(location)
    assert audit_verify(location).returncode == 0
    strip_and_rewrite(location)
    result = audit_verify(location)
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    for seq in (1, 2, 3):
        assert any(
            line.startswith(f"INVALID entry {seq} (")
            and "not signed, though the audit key has signed this log since entry 1" in line
            for line in lines
        ), result.stdout
    assert "content was changed" not in result.stdout  # the chain itself is sound
    assert any("recorded head is not signed" in line for line in lines)
    assert "chain intact" not in result.stdout
    witness = tmp_path / "witness.jsonl"
    exported = cli("audit", "head", "--export", str(witness), "--index", location)
    assert exported.returncode == 1 and "no head exported" in exported.stdout
    assert not witness.exists()


def test_a_log_deleted_below_its_first_signed_entry_is_detected(location: str) -> None:
    answered(location)
    unguard(location)
    raw_execute(location, "DELETE FROM audit_log")
    raw_execute(location, f"DELETE FROM meta WHERE key = '{setting_key(AUDIT_HEAD_SETTING)}'")
    result = audit_verify(location)
    assert result.returncode == 1, result.stdout
    assert (
        "INVALID entry 1, the first the audit key signed in this log (its signing record "
        "says so), is missing (entries deleted or cut off)"
    ) in result.stdout
