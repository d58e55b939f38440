"""Short, stable keys: document ids and chunk refs (pure functions)."""

from __future__ import annotations

import hashlib

# Lower-case letters and digits without look-alikes (i, l, o, u) so keys read aloud well.
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
DOC_ID_LENGTH = 6


def doc_id_candidates(source_path: str) -> list[str]:
    """Return the ids `source_path` may get, shortest first (longer ones resolve clashes).

    The ids are a base-32 rendering of the SHA-256 of the path, so the same path
    always proposes the same ids.
    """
    digest = int.from_bytes(hashlib.sha256(source_path.encode("utf-8")).digest(), "big")
    chars = []
    for _ in range(24):
        digest, rem = divmod(digest, 32)
        chars.append(_ALPHABET[rem])
    key = "".join(chars)
    return [key[:n] for n in range(DOC_ID_LENGTH, len(key) + 1)]


def chunk_ref(doc_id: str, version: int, ordinal: int) -> str:
    """Return the ref of chunk `ordinal` (1-based) of a document version.

    Version 1 gives `docid.N`; later versions `docid.V.N`, so refs never clash
    across versions and stay short for the common case.
    """
    if version == 1:
        return f"{doc_id}.{ordinal}"
    return f"{doc_id}.{version}.{ordinal}"
