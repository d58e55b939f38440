"""Labels: title, section and page; unique across duplicates, revisions and titles."""

from __future__ import annotations

from quoteproof.ingest.labels import (
    display_title,
    make_label,
    number_duplicates,
    page_part,
    shorten,
)


def test_make_label_with_pages_and_sections() -> None:
    assert (
        make_label("Veklury label", ("5 Warnings", "5.1 Hypersensitivity"), (4,))
        == "Veklury label › 5 Warnings › 5.1 Hypersensitivity › p. 4"
    )
    assert make_label("T", ("S",), (4, 5, 6)) == "T › S › pp. 4–6"
    assert make_label("T", ("T", "Dosage"), None) == "T › Dosage"
    assert make_label("", ("S",)) == "S"
    assert make_label("", ()) == "(untitled)"
    assert make_label("T", ("S",), (2,), shown_title="T v2") == "T v2 › S › p. 2"


def test_long_parts_are_shortened() -> None:
    long = "A very long section title that goes on and on and on forever"
    assert shorten(long).endswith("…") and len(shorten(long)) == 48
    assert make_label("T", (long,)) == f"T › {shorten(long)}"
    assert page_part(()) is None


def test_repeated_labels_in_one_document_are_numbered() -> None:
    labels = ["T › Introduction", "T › Methods", "T › Introduction", "T › Introduction"]
    assert number_duplicates(labels) == [
        "T › Introduction (1/3)",
        "T › Methods",
        "T › Introduction (2/3)",
        "T › Introduction (3/3)",
    ]


def test_display_title_disambiguates_titles_and_versions() -> None:
    assert display_title("Guide", "/a/guide.pdf", 1, []) == "Guide"
    assert display_title("Guide", "/a/guide.pdf", 1, ["/a/guide.pdf"]) == "Guide"
    assert display_title("Guide", "/a/guide.pdf", 1, ["/b/other.pdf"]) == "Guide (guide.pdf)"
    assert (
        display_title("Guide", "/2016/guide.pdf", 1, ["/2020/guide.pdf"])
        == "Guide (2016/guide.pdf)"
    )
    assert display_title("Guide", "/a/guide.pdf", 3, []) == "Guide v3"
    assert display_title("", "/a/notes.txt", 1, []) == "notes.txt"
