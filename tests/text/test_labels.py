"""Labels: title, section and page; unique across duplicates, revisions and titles."""

from __future__ import annotations

import pytest

from quoteproof.text.labels import (
    LABEL_PART_CHARS,
    display_title,
    fit_label,
    make_label,
    number_duplicates,
    page_part,
    repeats_title,
    restates_title,
    shorten,
    with_pages,
)

VEKLURY = "VEKLURY® (remdesivir) for injection, for intravenous use"
DEEP = (
    f"{VEKLURY} › 6 ADVERSE REACTIONS › 6.1 Clinical Trials Experience"
    " › Table 5 Summary of Adverse Reaction Rates › p. 9"
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


def test_labels_keep_titles_and_sections_whole() -> None:
    long = "A very long section title that goes on and on and on forever"
    assert make_label("T", (long,), (3,)) == f"T › {long} › p. 3"
    assert display_title(long, "/a/x.pdf", 1, []) == long
    runaway = "word " * 100
    assert len(shorten(runaway)) == LABEL_PART_CHARS and shorten(runaway).endswith("…")
    assert page_part(()) is None


def test_sections_repeating_the_title_are_left_out() -> None:
    title = "Guide to Infection Prevention For Outpatient Settings: Minimum Expectations"
    cover = ("GUIDE TO INFECTION PREVENTION FOR OUTPATIENT SETTINGS", "MINIMUM EXPECTATIONS")
    assert make_label(title, (*cover, "Scope"), (1,)) == f"{title} › Scope › p. 1"
    assert repeats_title("guide to infection-prevention", title)
    # only leading sections, and only runs long enough to mean something
    later = make_label(title, ("Notes", "Minimum Expectations"))
    assert later.endswith("Notes › Minimum Expectations")
    assert not repeats_title("Guide", title) and not repeats_title("Outpatient", title)


@pytest.mark.parametrize(
    ("section", "repeats"),
    [
        ("Hypertension", False),
        ("Adults", False),
        ("Management", False),
        ("Diagnosis", False),
        ("Hypertension in Adults", True),
        ("HYPERTENSION IN ADULTS: DIAGNOSIS AND MANAGEMENT", True),
        ("Diagnosis and Management", True),
    ],
)
def test_a_topic_word_of_the_title_is_no_repeat(section: str, repeats: bool) -> None:
    title = "Hypertension in Adults: Diagnosis and Management"
    assert repeats_title(section, title) is repeats
    label = make_label(title, (section, "Blood Pressure"), (2,))
    kept = "" if repeats else f" › {section}"
    assert label == f"{title}{kept} › Blood Pressure › p. 2"


def test_fit_label_shortens_from_the_middle_keeping_title_start_deepest_and_page() -> None:
    assert fit_label(DEEP, None) == DEEP and fit_label(DEEP, len(DEEP)) == DEEP
    shortened = [fit_label(DEEP, width) for width in (150, 100, 80, 60, 45)]
    for width, label in zip((150, 100, 80, 60, 45), shortened, strict=True):
        assert len(label) <= width
        assert label.startswith("VEKLURY") and label.endswith(" › p. 9")
        assert "6 ADVERSE REACTIONS" not in label and " › … › " in label
    assert shortened[0] == (
        f"{VEKLURY} › … › 6.1 Clinical Trials Experience"
        " › Table 5 Summary of Adverse Reaction Rates › p. 9"
    )
    assert shortened[1].endswith("… › … › Table 5 Summary of Adverse Reaction Rates › p. 9")
    assert shortened[2] == (
        "VEKLURY® (remdesivir)… › … › Table 5 Summary of Adverse Reaction Rates › p. 9"
    )
    assert "Table 5 Summary" in shortened[3] and shortened[4].endswith("… › … › p. 9")
    assert fit_label("Title only, rather long › p. 4", 22) == "Title only… › p. 4"
    assert fit_label(DEEP, 8) == "VEKLURY…"


def test_with_pages_names_the_quote_pages_once() -> None:
    assert with_pages("T › S › pp. 16–17 (2/3)", (17,)) == "T › S › p. 17"
    assert with_pages("T › S (2/3)", (4, 5)) == "T › S › pp. 4–5"
    assert with_pages("T › S › p. 3", None) == "T › S › p. 3"
    assert with_pages("T › p. 2 › S", (7,)) == "T › p. 2 › S › p. 7"


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


def test_fit_label_never_exceeds_the_width_and_keeps_the_page_when_it_can() -> None:
    labels = [DEEP, "T › S › p. 3 (2/3)", "Only a title without page", "A › B"]
    for label in labels:
        for width in range(0, len(label) + 2):
            fitted = fit_label(label, width)
            assert len(fitted) <= width
            if width >= 40 and "p. " in label:
                assert fitted.endswith(label[label.rindex(" › ") :])


def test_a_section_that_restates_the_whole_title_is_left_out_wherever_it_stands() -> None:
    """A school's policy labelled "Term Dates and Attendance Policy 2025-26 ›
    Ashcombe Primary School › Term Dates and Attendance Policy 2025–26 › ..." named
    its title twice; a title part under another section still stands."""
    title = "Term Dates and Attendance Policy 2025-26"
    section = ("Ashcombe Primary School", "Term Dates and Attendance Policy 2025–26", "Absence")
    assert make_label(title, section) == f"{title} › Ashcombe Primary School › Absence"
    recall = "Product Safety Recall: BrewMate KT-17 Electric Kettles"
    h1 = "Product Safety Recall: BrewMate KT-17 Cordless Electric Kettles"
    assert make_label(recall, (h1, "FAQ")) == f"{recall} › FAQ"
    assert restates_title(h1, recall) and not restates_title("Attendance Policy", title)
    other = "BrewMate KT-19 Electric Kettle Recall"  # another model: a section of its own
    assert not restates_title(other, "BrewMate KT-17 Electric Kettle Recall")
    assert not restates_title("Annual Report 2022 Financial Statements", "Annual Report 2023")
