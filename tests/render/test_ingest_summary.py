"""The ingest summary and the skipped-files table at 80 columns."""

from __future__ import annotations

from rich.console import Console

from quoteproof.ingest.pipeline import IngestResult
from quoteproof.render.ingest import MAX_FILES_SHOWN, ingested_table, skipped_table, summary_table
from quoteproof.retrieval.embed_index import EmbedReport
from quoteproof.retrieval.evidence import AUTOMATIC, Calibration
from quoteproof.store.base import IndexStats

LONG = "/scans/a-very-long-image-file-name-from-the-scanner-2024-11-29-final-version.png"


def shown(table: object) -> str:
    console = Console(width=80, record=True)
    console.print(table)
    return console.export_text()


def test_a_skipped_file_s_long_name_wraps_and_is_never_cut() -> None:
    table = skipped_table([IngestResult(LONG, "skipped", reason="unsupported file type '.png'")])
    text = shown(table)
    assert "…" not in text
    flat = "".join(line.split("│")[1].strip() for line in text.splitlines() if "│" in line)
    assert LONG in flat


def test_the_summary_counts_failures_above_and_the_time_when_no_page_was_read() -> None:
    results = [
        IngestResult("a.txt", "added", chunks=2),
        IngestResult("b.txt", "failed", error="not valid UTF-8"),
    ]
    text = shown(summary_table(results, 0.6, "idx", IndexStats(1, 2, 0)))
    assert "1 added · 0 updated · 0 unchanged · 1 failed (above) · 0 skipped" in text
    assert "pages" not in text and "0.6 s" in text
    assert all(len(line) <= 80 for line in text.splitlines())


def test_the_time_is_the_whole_run_s_and_the_pages_are_said_to_be_of_paged_files() -> None:
    """A newcomer read "pages 4 in 0.8 s" for four files, one a 4-page PDF, and could
    not tell what was counted: the time is the run's, the pages those of the files
    named (another read "2 pages in PDF and Word files" when its Word file had none)."""
    results = [
        IngestResult("a.pdf", "added", chunks=9, pages=4),
        IngestResult("b.md", "added"),
        IngestResult("c.docx", "added", chunks=2),
    ]
    text = shown(summary_table(results, 0.8, "idx", IndexStats(3, 11, 11)))
    assert "│ time    │ 0.8 s · 4 pages in 1 PDF file (5 pages/s)" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    both = [*results, IngestResult("d.DOCX", "updated", chunks=3, pages=2)]
    text = shown(summary_table(both, 0.8, "idx", IndexStats(4, 14, 14)))
    assert "│ time    │ 0.8 s · 6 pages in 2 PDF and Word (.docx) files (8 pages/s)" in text


def test_more_vectors_than_chunks_are_explained_within_80_columns() -> None:
    """An ingest of 448 chunks reported 920 vectors with no word on why (a chunk longer
    than the model reads has one per passage); as many as the chunks need no word."""
    results = [IngestResult(f"{n}.htm", "added", chunks=28) for n in range(16)]
    stats = IndexStats(16, 448, 448)
    model = "sentence-transformers/all-MiniLM-L6-v2"
    text = shown(
        summary_table(results, 1.6, "idx", stats, EmbedReport(920, 30.5, model, None, 448))
    )
    (vectors,) = [line for line in text.splitlines() if "vectors" in line and "computed" in line]
    assert "920 computed in 30.5 s (30/s) for 448 chunks (a long chunk has one" in vectors
    assert "│ per part)" in text  # the row goes on, wrapped
    assert all(len(line) <= 80 for line in text.splitlines())
    one_each = EmbedReport(448, 15.0, model, None, 448)
    assert "for 448 chunks" not in shown(summary_table(results, 1.6, "idx", stats, one_each))
    # chunks left without vectors by an earlier run are embedded now, one vector each
    unchanged = [IngestResult("a.md", "unchanged", chunks=1)]
    earlier = shown(
        summary_table(
            unchanged, 0.2, "idx", IndexStats(1, 1, 1), EmbedReport(1, 0.1, model, None, 1)
        )
    )
    assert "for 1 chunks" not in earlier and "1 computed" in earlier


def test_the_summary_says_which_refusal_threshold_applies() -> None:
    # a newcomer's small collection refused a quarter of its questions at the automatic
    # threshold, and nothing at ingest said there was one, or how to fit it; it is
    # printed as the refusals print it (a newcomer read "0.55" there and "0.547" in one)
    results = [IngestResult("a.md", "added", chunks=4)]
    stats = IndexStats(1, 4, 4)
    automatic = Calibration("sentence", 0.3512, 0, 57, 0, 0, AUTOMATIC, "fp")
    drawn = shown(summary_table(results, 1.0, "idx", stats, None, automatic))
    assert all(len(line) <= 80 for line in drawn.splitlines())
    text = " ".join(drawn.replace("│", " ").split())
    assert "threshold 0.351, estimated from 57 off-topic questions" in text
    assert "quoteproof calibrate" in text
    calibrated = Calibration("sentence", 0.52, 30, 10, 1, 2)
    text = " ".join(shown(summary_table(results, 1.0, "idx", stats, None, calibrated)).split())
    assert "threshold 0.520, calibrated with 40 of your questions" in text
    text = " ".join(shown(summary_table(results, 1.0, "idx", stats)).split())
    assert "no threshold: questions are screened for their key terms only" in text


def test_the_files_a_run_ingested_are_named_with_their_chunks() -> None:
    """A folder's stray notes file was indexed with no word of it: the summary only
    counted files."""
    results = [
        IngestResult("policy.md", "added", chunks=9),
        IngestResult("notes/questions.txt", "added", chunks=2),
        IngestResult("faq.html", "updated", chunks=12),
        IngestResult("old.md", "unchanged", chunks=3),
        IngestResult("bad.txt", "failed", error="not valid UTF-8"),
        IngestResult("list.jsonl", "skipped", reason="unsupported file type '.jsonl'"),
    ]
    rows = [line for line in shown(ingested_table(results)).splitlines() if "│" in line]
    named = [line.split("│")[1].strip() for line in rows]
    assert named == ["policy.md", "notes/questions.txt", "faq.html"]
    assert "updated" in rows[2] and "12" in rows[2]
    many = [IngestResult(f"doc-{n}.md", "added", chunks=1) for n in range(MAX_FILES_SHOWN + 3)]
    text = shown(ingested_table(many))
    assert f"doc-{MAX_FILES_SHOWN - 1}.md" in text and f"doc-{MAX_FILES_SHOWN}.md" not in text
    assert "… and 3 more (all with --format json)" in text
    assert ingested_table(results[3:]) is None
