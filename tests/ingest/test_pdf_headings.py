"""PDF headings from fonts: what is a heading, and how far a caption's section reaches
(built PDFs only; the shared documents are in test_pdf.py)."""

from __future__ import annotations

import pytest

from helpers import pdfs as build
from quoteproof.ingest.pdf.headings import _is_heading_text, _numbering_depth
from quoteproof.ingest.pdf.parse import parse_pdf
from quoteproof.model import ParsedDocument


@pytest.fixture(scope="module")
def panel() -> ParsedDocument:
    return parse_pdf(build.label_panel_pdf(), "panel.pdf")


def headings(document: ParsedDocument) -> list[str]:
    return [document.text[b.start : b.end] for b in document.blocks if b.kind == "heading"]


def section_of(document: ParsedDocument, needle: str) -> tuple[str, ...]:
    """The section path of the block holding the last `needle`, under the title's heading
    (the parent of everything in a document this short)."""
    start = document.text.rindex(needle)
    (block,) = [b for b in document.blocks if b.start <= start < b.end]
    assert block.section[0] == " ".join(build.PANEL_TITLE)
    return block.section[1:]


def test_fragments_styled_like_headings_are_no_headings(panel: ParsedDocument) -> None:
    found = headings(panel)
    for fragment in build.PANEL_FRAGMENTS:
        assert not any(heading.startswith(fragment) for heading in found), fragment
        assert section_of(panel, fragment) == (build.PANEL_SECTION,)


def test_a_long_table_caption_is_the_section_of_its_table_only(panel: ParsedDocument) -> None:
    caption = " ".join(build.PANEL_CAPTION)
    assert caption in headings(panel)
    assert section_of(panel, "cell 11") == (build.PANEL_SECTION, caption)
    assert section_of(panel, "Values are for one vial") == (build.PANEL_SECTION, caption)
    assert section_of(panel, build.PANEL_AFTER_TABLE) == (build.PANEL_SECTION,)


def test_a_title_naming_two_forms_is_said_once(panel: ParsedDocument) -> None:
    assert panel.title == build.PANEL_TITLE[0]


@pytest.mark.parametrize(
    ("text", "following"),
    [
        ("Vitamin A", None),
        ("Appendix A", None),
        ("Hepatitis A", "Hepatitis A is a liver infection."),
        ("Who Is It For", None),
        ("β-Blockers", None),
        ("eGFR Thresholds", None),
        ("pH and Stability", None),
        ("mRNA Vaccines", None),
        ("Dosage", "mL per kg of body weight, given once."),
        ("Storage", "iPhone users can scan the code on the carton."),
        ("Dosage", "mg per dose are listed below."),
        ("WARNINGS", "THE DRUG MAY CAUSE DROWSINESS."),
    ],
)
def test_real_headings_are_headings(text: str, following: str | None) -> None:
    assert _is_heading_text([text], large=False, following=following)


@pytest.mark.parametrize(
    ("text", "following"),
    [
        ("100 mg/vial", None),
        ("100 mL/vial", None),
        ("(remdesivir) injection", None),
        ("Must be reconstituted and", None),
        ("Must be given for", None),
        ("Store vials at room temperature,", None),
        ("MUST BE RECONSTITUTED AND", None),
        ("Must be reconstituted", "and further diluted prior to use"),
        ("KEEP OUT OF THE REACH", "OF CHILDREN"),
    ],
)
def test_fragments_are_no_headings(text: str, following: str | None) -> None:
    assert not _is_heading_text([text], large=False, following=following)


def test_a_schedule_after_numbered_clauses_is_no_sub_section_of_the_last() -> None:
    """A contract's "Schedule 1", set like its numbered clause headings after "11.
    Governing Law", was that clause's sub-section; a division's name is top-level."""
    document = parse_pdf(build.clauses_and_schedule_pdf(), "contract.pdf")
    under_law = section_of_block(document, "governed by the law of England")
    under_schedule = section_of_block(document, "subject matter of the processing")
    assert under_law[-1] == "11. Governing Law"
    assert under_schedule[-1] == "Schedule 1: Details of Processing"
    assert "11. Governing Law" not in under_schedule
    assert section_of_block(document, "Sub-processors may")[-1] == "2.1 Approval"
    assert _numbering_depth("Schedule a follow-up visit") == _numbering_depth("Purpose") > 1


def section_of_block(document: ParsedDocument, needle: str) -> tuple[str, ...]:
    """The section path of the block holding `needle`."""
    start = document.text.index(needle)
    (block,) = [b for b in document.blocks if b.start <= start < b.end]
    return block.section
