"""Text of a web page that is not its content: site chrome ("Top of Page", "Last
Reviewed: <date>") and author lists in headings."""

from __future__ import annotations

import re

from quoteproof.ingest.blocks import collapse_whitespace

CHROME_LINES = (
    r"error processing ssi file",
    r"\[an error occurred while processing this directive\]",
    r"(?:back to |return to )?top(?: of (?:the )?page)?",
    r"related (?:pages|links|content|articles|posts|topics|resources)",
    r"on this page",
    r"(?:page )?last (?:reviewed|updated|modified)(?: on)?:? .{1,40}",
    r"view (?:this )?page in:? .{0,80}",
    r"(?:download )?high[- ]resolution (?:jpe?g|png|tiff?|image|figure)(?: for print)?",
    r"(?:print|share|email) this page",
)
"""Whole-block texts (matched case-insensitively, whitespace collapsed) that are site
chrome, not content: server-side-include errors, "Top of Page", "Related Pages",
"Last Reviewed: <date>", "View Page In: PDF [593K]", figure download links."""

_DEGREE_AFTER_NAME = re.compile(
    r",\s*(?:PhD|MD|MPH|DrPH|MS|MSc|MSPH|MA|BA|BS|BSN|RN|MSN|DNP|MSW|MBChB|MBBS|MHS|RD"
    r"|ScD|MDiv|DO|DDS|DMD|PharmD|MBA|MEd|EdD|CPHQ|FACP)(?![A-Za-z])"
)
BYLINE_NAMES = 2
"""A heading naming this many people, each followed by an academic degree ("Jane Doe,
PhD1; John Roe, MPH2"), is an author list, not a section."""
_PERSON = re.compile(r"[^\W\d_][\w.'’-]*\s+[A-Z][\w'’-]*[a-z][\w'’-]*\Z")
"""The end of a person's name: a word, then a capitalised one ("E. Macomber", "Jack Jr")."""
_CHROME_LINE = re.compile("|".join(CHROME_LINES), re.IGNORECASE)


def is_byline(text: str) -> bool:
    """Whether a heading's text is an article's author list: `BYLINE_NAMES` or more
    people's names each followed by a degree after a comma ("Farid Shamo, MBChB, MSc,
    MPH1; Kathryn E. Macomber, MPH1"), or a link to the "author affiliations".
    Degrees alone name no one ("Prescribers: MD, DO, PharmD")."""
    if "author affiliations" in text.casefold():
        return True
    names = sum(
        _PERSON.search(text, 0, degree.start()) is not None
        for degree in _DEGREE_AFTER_NAME.finditer(text)
    )
    return names >= BYLINE_NAMES


def is_chrome_line(text: str) -> bool:
    """Whether a block's whole text is site chrome (one of `CHROME_LINES`)."""
    return _CHROME_LINE.fullmatch(collapse_whitespace(text)) is not None
