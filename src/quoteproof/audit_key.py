"""The operator's audit key: the secret that signs audit log entries, kept outside the
index.

Whoever can write the index's database can rewrite its hash chain (the hash is
public), but without this key cannot sign what they wrote (`store.audit_chain`).
The key is a file holding 32 random bytes as hex, made on first use with
permissions 0600 (owner only). Its place is, in this order: the path given, the
environment variable `AUDIT_KEY_VARIABLE`, or `audit.key` in the user's
configuration folder (`$XDG_CONFIG_HOME/quoteproof`, else `~/.config/quoteproof`;
`%APPDATA%\\quoteproof` on Windows). It is never kept inside an index directory.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from pathlib import Path

from quoteproof.errors import StoreError

__all__ = ["AUDIT_KEY_VARIABLE", "audit_key_path", "read_audit_key", "signing_key"]

AUDIT_KEY_VARIABLE = "QUOTEPROOF_AUDIT_KEY"
"""The environment variable naming the key file when no path is given."""

_KEY_BYTES = 32


def _config_folder() -> Path:
    """The user's configuration folder (XDG on POSIX, APPDATA on Windows)."""
    base = os.environ.get("APPDATA") if os.name == "nt" else os.environ.get("XDG_CONFIG_HOME")
    return Path(base) if base else Path.home() / ".config"


def audit_key_path(path: str | Path | None = None) -> Path:
    """Where the audit key is: `path` when given, else `$QUOTEPROOF_AUDIT_KEY`, else
    `audit.key` in the user's configuration folder (see the module docstring)."""
    chosen = path if path is not None else os.environ.get(AUDIT_KEY_VARIABLE)
    if chosen:
        return Path(chosen).expanduser()
    return _config_folder() / "quoteproof" / "audit.key"


def read_audit_key(path: Path) -> bytes | None:
    """The key in the file at `path`, or None when there is no such file.

    Raises StoreError when the file cannot be read, does not hold a key, or can be
    read by other users (a key others can read signs nothing they could not sign).
    """
    try:
        info = path.stat()
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read the audit key {path}: {exc}") from exc
    if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise StoreError(
            f"the audit key {path} can be read by other users "
            f"(mode {stat.S_IMODE(info.st_mode):04o}); make it 0600"
        )
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != _KEY_BYTES:
        raise StoreError(f"{path} does not hold an audit key ({2 * _KEY_BYTES} hex digits)")
    return key


def signing_key(path: Path, index_location: str) -> bytes:
    """The key at `path`, made there first when there is none (0600, its folder
    0700 when new); several processes making it at once all get the same one.

    Raises StoreError when `path` lies inside the index directory `index_location`
    (someone who can rewrite the index could read it there), or when the key cannot
    be read or made.
    """
    _check_outside(path, index_location)
    key = read_audit_key(path)
    if key is not None:
        return key
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".audit-key-")
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as file:
                file.write(secrets.token_hex(_KEY_BYTES) + "\n")
            os.chmod(temporary, 0o600)
            os.link(temporary, path)  # fails when another process made it first
        except FileExistsError:
            pass
        finally:
            os.unlink(temporary)
    except OSError as exc:
        raise StoreError(f"cannot make the audit key {path}: {exc}") from exc
    made = read_audit_key(path)
    if made is None:
        raise StoreError(f"cannot make the audit key {path}: it disappeared once written")
    return made


def _check_outside(path: Path, index_location: str) -> None:
    """Raise StoreError when `path` is inside the index directory `index_location`."""
    index = Path(index_location)
    if not index.is_dir():
        return  # a PostgreSQL URL, or an index not made yet
    if path.resolve().is_relative_to(index.resolve()):
        raise StoreError(
            f"the audit key {path} must be kept outside the index {index_location}: "
            "anyone who can rewrite the index could read it there"
        )
