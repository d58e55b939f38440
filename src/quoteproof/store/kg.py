"""Knowledge-graph triplets in the SQL store (`kg_triplets`): imported per collection
and scoped like documents, replaced whole when their graph file is imported again,
retired (never deleted, so that recorded answers that cite them still verify).

`TripletStore` is a mixin of `sql_store.SQLStore`: it uses only the store's `_run`
and `_write`, so both dialects share it. Entities are matched on `entity_key`, their
normalised form (NFKC, case folded, runs of anything but letters and digits as one
space), kept beside the written form.
"""

from __future__ import annotations

import re
import unicodedata
from abc import abstractmethod
from collections.abc import Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from quoteproof.model import NewTriplet, Triplet, sha256_text
from quoteproof.store.base import check_collection_name
from quoteproof.store.sql import Cursor
from quoteproof.store.sql_records import record

__all__ = ["ImportOutcome", "NewTriplet", "TripletStore", "entity_key", "triplet_id"]

_NOT_WORD = re.compile(r"[\W_]+")

_COLUMNS = (
    "triplet_id, collection, subject, relation, object, graph_file, file_row, "
    "doc_id, page, quote, is_current"
)


def entity_key(name: str) -> str:
    """`name` normalised for matching: NFKC, case folded, every run of characters
    that are not letters or digits one space, stripped ("Remdesivir®" and
    "remdesivir" give the same key)."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return _NOT_WORD.sub(" ", folded).strip()


@dataclass(frozen=True)
class ImportOutcome:
    """What an import did: triplets added (new or made current again), kept
    unchanged from the file's previous import, and retired (in that import, not in
    this one)."""

    added: int
    unchanged: int
    retired: int


def triplet_id(collection: str, graph_file: str, new: NewTriplet) -> str:
    """The stable id of `new` from `graph_file` in `collection`: `t` and 16 hex
    digits of the SHA-256 of all of them (the same row imported again keeps it)."""
    parts = (collection, graph_file, str(new.row), new.subject, new.relation, new.object)
    extra = (new.doc_id or "", "" if new.page is None else str(new.page), new.quote or "")
    return "t" + sha256_text("\x1f".join((*parts, *extra)))[:16]


class TripletStore:
    """The triplet methods of a SQL store (see the module docstring)."""

    @abstractmethod
    def _run(self, sql: str, params: Sequence[Any] = (), /) -> Cursor:
        """Run `sql` (with `?` marks) with `params`."""

    @abstractmethod
    def _write(self) -> AbstractContextManager[None]:
        """One write transaction."""

    def _triplet(self, row: Any) -> Triplet:
        """The triplet of a row of `_COLUMNS`."""
        return record(Triplet, row, row=row["file_row"], is_current=bool(row["is_current"]))

    def import_triplets(
        self, collection: str, graph_file: str, triplets: Sequence[NewTriplet]
    ) -> ImportOutcome:
        """Make `triplets` the current triplets of `graph_file` (a file name) in
        `collection`, in one transaction: rows of its previous import that are not
        among them are retired, rows already stored are kept (a retired one made
        current again). Each `doc_id` must already be checked to name a document of
        the collection. Raises ValueError for an invalid collection name."""
        check_collection_name(collection)
        ids = {triplet_id(collection, graph_file, new): new for new in triplets}
        added = unchanged = 0
        with self._write():
            rows = self._run(
                "SELECT triplet_id, is_current FROM kg_triplets "
                "WHERE collection = ? AND graph_file = ?",
                (collection, graph_file),
            ).fetchall()
            stored = {row["triplet_id"]: bool(row["is_current"]) for row in rows}
            retired = [tid for tid, current in stored.items() if current and tid not in ids]
            for tid in retired:
                self._run("UPDATE kg_triplets SET is_current = FALSE WHERE triplet_id = ?", (tid,))
            for tid, new in ids.items():
                if stored.get(tid):
                    unchanged += 1
                    continue
                added += 1
                if tid in stored:
                    self._run(
                        "UPDATE kg_triplets SET is_current = TRUE WHERE triplet_id = ?", (tid,)
                    )
                    continue
                self._run(
                    "INSERT INTO kg_triplets (triplet_id, collection, subject, relation, object, "
                    "subject_key, object_key, graph_file, file_row, doc_id, page, quote, "
                    "is_current) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,TRUE)",
                    (
                        tid,
                        collection,
                        new.subject,
                        new.relation,
                        new.object,
                        entity_key(new.subject),
                        entity_key(new.object),
                        graph_file,
                        new.row,
                        new.doc_id,
                        new.page,
                        new.quote,
                    ),
                )
        return ImportOutcome(added, unchanged, len(retired))

    def list_triplets(
        self, collections: Iterable[str] | None = None, graph_file: str | None = None
    ) -> list[Triplet]:
        """The current triplets (of `collections` only, when given; of `graph_file`
        only, when given), by collection, graph file and row."""
        sql = f"SELECT {_COLUMNS} FROM kg_triplets WHERE is_current = TRUE"
        params: list[Any] = []
        if collections is not None:
            wanted = list(collections)
            if not wanted:
                return []
            sql += f" AND collection IN ({','.join('?' * len(wanted))})"
            params += wanted
        if graph_file is not None:
            sql += " AND graph_file = ?"
            params.append(graph_file)
        rows = self._run(sql + " ORDER BY collection, graph_file, file_row", params)
        return [self._triplet(row) for row in rows.fetchall()]

    def get_triplet(self, triplet_id: str) -> Triplet | None:
        """The triplet with `triplet_id`, current or retired, or None."""
        row = self._run(
            f"SELECT {_COLUMNS} FROM kg_triplets WHERE triplet_id = ?", (triplet_id,)
        ).fetchone()
        return self._triplet(row) if row is not None else None

    def retire_triplets(self, triplet_ids: Collection[str]) -> int:
        """Retire the current triplets among `triplet_ids`; return how many were."""
        count = 0
        with self._write():
            for tid in dict.fromkeys(triplet_ids):
                cursor = self._run(
                    "UPDATE kg_triplets SET is_current = FALSE "
                    "WHERE triplet_id = ? AND is_current = TRUE",
                    (tid,),
                )
                count += max(cursor.rowcount, 0)
        return count

    def triplet_entities(self, collections: Iterable[str] | None = None) -> list[str]:
        """The distinct entity keys (subjects and objects) of current triplets of
        `collections` (all when None), in code-point order."""
        where, params = self._scope(collections)
        if where is None:
            return []
        rows = self._run(
            f"SELECT subject_key AS k FROM kg_triplets WHERE {where} "
            f"UNION SELECT object_key AS k FROM kg_triplets WHERE {where}",
            params + params,
        ).fetchall()
        return sorted({row["k"] for row in rows})

    def triplets_with_entities(
        self, keys: Collection[str], collections: Iterable[str] | None = None
    ) -> list[Triplet]:
        """The current triplets of `collections` (all when None) whose subject or
        object has one of the entity `keys`, by collection, graph file and row."""
        where, params = self._scope(collections)
        wanted = sorted(set(keys))
        if where is None or not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        rows = self._run(
            f"SELECT {_COLUMNS} FROM kg_triplets WHERE {where} "
            f"AND (subject_key IN ({marks}) OR object_key IN ({marks})) "
            "ORDER BY collection, graph_file, file_row",
            [*params, *wanted, *wanted],
        ).fetchall()
        return [self._triplet(row) for row in rows]

    @staticmethod
    def _scope(collections: Iterable[str] | None) -> tuple[str | None, list[Any]]:
        """The WHERE condition of current triplets of `collections` and its
        parameters; None when `collections` is empty (nothing is in scope)."""
        if collections is None:
            return "is_current = TRUE", []
        wanted = list(collections)
        if not wanted:
            return None, []
        return f"is_current = TRUE AND collection IN ({','.join('?' * len(wanted))})", wanted
