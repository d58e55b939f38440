"""Ingesting into collections through `Index.ingest` and `IngestSettings`, on the
serial and the parallel path, and re-ingesting a retired document."""

from __future__ import annotations

from pathlib import Path

import pytest

from quoteproof import Index
from quoteproof.ingest.parsing import IngestSettings
from quoteproof.model import DEFAULT_COLLECTION


def write(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_text(f"{name}\n\nThe {name} policy covers leave and pay.\n")
    return folder


@pytest.mark.parametrize("jobs", [1, 2], ids=["serial", "parallel"])
def test_ingest_puts_documents_in_the_collection_asked(tmp_path: Path, jobs: int) -> None:
    hr = write(tmp_path / "hr", ["holidays.txt", "sickness.txt"])
    eng = write(tmp_path / "eng", ["deploys.txt"])
    with Index.open(tmp_path / "index", create=True) as index:
        added = index.ingest([hr], collection="hr", jobs=jobs, embed=False)
        assert [r.status for r in added] == ["added", "added"]
        index.ingest([eng], jobs=jobs, embed=False)
        listed = {Path(d.source_path).name: d.collection for d in index.store.list_documents()}
        assert listed == {"holidays.txt": "hr", "sickness.txt": "hr", "deploys.txt": "default"}
        for result in added:
            assert result.doc_id is not None
            document = index.store.get_document(result.doc_id)
            assert document is not None and document.collection == "hr"
        hits = index.store.search_bm25("policy leave", 10, ["hr"])
        assert {Path(h.chunk.source_path).name for h in hits} == {"holidays.txt", "sickness.txt"}


def test_settings_collection_and_its_validation(tmp_path: Path) -> None:
    assert IngestSettings().collection == DEFAULT_COLLECTION
    with pytest.raises(ValueError, match="collection name"):
        IngestSettings(collection="no spaces")
    folder = write(tmp_path / "docs", ["a.txt"])
    with Index.open(tmp_path / "index", create=True) as index:
        with pytest.raises(ValueError, match="collection name"):
            index.ingest([folder], collection="", embed=False)
        assert index.store.stats().versions == 0
        index.ingest(
            [folder], settings=IngestSettings(max_file_mb=1), collection="x.y-z_1", embed=False
        )
        assert [d.collection for d in index.store.list_documents()] == ["x.y-z_1"]


def test_a_retired_file_is_ingested_again_as_a_new_version(tmp_path: Path) -> None:
    folder = write(tmp_path / "docs", ["a.txt"])
    with Index.open(tmp_path / "index", create=True) as index:
        (first,) = index.ingest([folder], collection="old", embed=False)
        assert first.doc_id is not None and first.version == 1
        assert index.store.retire_document(first.doc_id)
        assert index.store.list_documents() == []
        (again,) = index.ingest([folder], collection="new", embed=False)
        assert (again.status, again.doc_id, again.version) == ("updated", first.doc_id, 2)
        (summary,) = index.store.list_documents()
        assert (summary.version, summary.collection) == (2, "new")
        old = index.store.get_document(first.doc_id, 1)
        assert old is not None and old.collection == "old"
        (unchanged,) = index.ingest([folder], collection="new", embed=False)
        assert unchanged.status == "unchanged"
