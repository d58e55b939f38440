"""Knowledge-graph triplets in both stores (SQLite and PostgreSQL): import replaces
a file's earlier import, retire keeps rows readable, scope by collection, entity
lookup, and the migration from schema 8."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.raw_sql import raw_execute
from quoteproof.store.base import Store
from quoteproof.store.kg import NewTriplet, entity_key
from quoteproof.store.open import open_store

ROWS = [
    NewTriplet("Remdesivir", "adverse_reaction", "transaminase elevations", 2),
    NewTriplet("transaminase elevations", "monitored_by", "liver function tests", 3),
    NewTriplet("Remdesivir", "has_dose", "200 mg on day 1", 4, page=3, quote="200 mg on day 1"),
]


@pytest.fixture
def store(location: str) -> Iterator[Store]:
    opened = open_store(location, create=True)
    yield opened
    opened.close()


def spo(store: Store, **kwargs: object) -> list[tuple[str, str, str]]:
    return [(t.subject, t.relation, t.object) for t in store.list_triplets(**kwargs)]  # type: ignore[arg-type]


def test_import_then_reimport_replaces_the_files_triplets(store: Store) -> None:
    first = store.import_triplets("default", "graph.csv", ROWS)
    assert (first.added, first.unchanged, first.retired) == (3, 0, 0)
    stored = store.list_triplets()
    assert [t.row for t in stored] == [2, 3, 4]
    assert stored[2].page == 3 and stored[2].quote == "200 mg on day 1"
    again = store.import_triplets("default", "graph.csv", ROWS[:1])
    assert (again.added, again.unchanged, again.retired) == (0, 1, 2)
    assert spo(store) == [("Remdesivir", "adverse_reaction", "transaminase elevations")]
    gone = next(t for t in stored if t.row == 3)
    kept = store.get_triplet(gone.triplet_id)
    assert kept is not None and not kept.is_current  # retired rows stay readable
    back = store.import_triplets("default", "graph.csv", ROWS)
    assert (back.added, back.unchanged, back.retired) == (2, 1, 0)
    assert [t.triplet_id for t in store.list_triplets()] == [t.triplet_id for t in stored]


def test_collections_scope_listing_and_entity_lookup(store: Store) -> None:
    store.import_triplets("pharma", "a.csv", ROWS[:1])
    store.import_triplets("legal", "a.csv", [NewTriplet("Contract", "signed_by", "Acme", 2)])
    assert spo(store, collections=["legal"]) == [("Contract", "signed_by", "Acme")]
    assert store.list_triplets(collections=[]) == []
    assert store.triplet_entities(["pharma"]) == ["remdesivir", "transaminase elevations"]
    assert "acme" not in store.triplet_entities(["pharma"])
    assert store.triplets_with_entities({"acme"}, ["pharma"]) == []
    found = store.triplets_with_entities({"acme"}, None)
    assert [t.collection for t in found] == ["legal"]


def test_retire_takes_triplets_out_of_listing_and_lookup(store: Store) -> None:
    store.import_triplets("default", "graph.csv", ROWS)
    first = store.list_triplets()[0]
    assert store.retire_triplets([first.triplet_id, "t-unknown"]) == 1
    assert store.retire_triplets([first.triplet_id]) == 0
    assert first.triplet_id not in {t.triplet_id for t in store.list_triplets()}
    keys = {entity_key(first.subject)}
    assert first.triplet_id not in {t.triplet_id for t in store.triplets_with_entities(keys)}


def test_entity_key_normalises_case_marks_and_spacing() -> None:
    assert entity_key("Remdesivir®") == entity_key("  remdesivir ") == "remdesivir"
    assert entity_key("Transaminase-Elevations") == "transaminase elevations"


def test_an_index_of_schema_8_gains_the_triplet_table(location: str) -> None:
    store = open_store(location, create=True)
    store.close()
    raw_execute(location, "DROP TABLE kg_triplets")
    raw_execute(location, "UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    store = open_store(location)
    try:
        assert store.list_triplets() == []
        store.import_triplets("default", "graph.csv", ROWS[:1])
        assert len(store.list_triplets()) == 1
    finally:
        store.close()
