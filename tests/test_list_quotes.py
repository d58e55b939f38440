"""A quote that stops inside a list says so: `list_goes_on` is read from the source
text, recorded in the answer, read again from the index when a saved answer is shown,
and shown with the quote on every face."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from helpers.answers import as_recorded, make_answer
from quoteproof import Index
from quoteproof.codec import answer_from_dict, answer_to_dict
from quoteproof.llm.quotable import list_goes_on
from quoteproof.model import QuoteSegment
from quoteproof.receipts import check_quote, verify_recorded
from quoteproof.render.html import render_answer_html
from quoteproof.render.markdown import render_markdown
from quoteproof.render.terminal import render_text
from quoteproof.render.wording import LIST_GOES_ON_NOTE

LEAD_IN = "The following heaters are not part of this recall and can be used normally:"
ITEMS = (
    "- OFR-1500 and OFR-2000 radiators with batch codes outside the ranges in the table;",
    "- any radiator that has a green CHECKED sticker next to the rating label, which shows "
    "that it was inspected and reworked before it was sold to the public;",
    "- the OFR-700 compact radiator and every fan heater and convector heater of the brand;",
    "- radiators sold in the Republic of Ireland under the HomeGlow brand, which a separate "
    "notice issued by the Irish distributor covers in full.",
)
NOTICE = f"# Radiator recall\n\n## Products not affected\n\n{LEAD_IN}\n\n" + "\n".join(ITEMS) + "\n"


def span(text: str, first: str, last: str) -> tuple[int, int]:
    start = text.index(first)
    return start, text.index(last, start) + len(last)


NOTIFY = "Notify:\n\n(a) the nature;\n\n"
CASES = [
    (NOTICE, LEAD_IN, ITEMS[0], True),  # a bullet follows
    (NOTICE, LEAD_IN, ITEMS[2], True),
    (NOTICE, LEAD_IN, ITEMS[3], False),  # the whole list
    (NOTICE, LEAD_IN, "outside the ranges", False),  # stops inside an item
    (NOTICE, ITEMS[1], ITEMS[1], False),  # an item alone, without its lead-in
    (NOTIFY + "(b) the harm;\n\n(c) the measures.", "Notify", "(b) the harm;", True),
    (NOTIFY + "DPA v2 CONFIDENTIAL\n\nPage 3\n\n(b) the measures.", "Notify", "nature;", True),
    (NOTIFY + "The Processor acts alone.\n\n(b) the measures.", "Notify", "nature;", False),
    (NOTIFY + "(c) another list.", "Notify", "nature;", False),  # not the next item
    ("Fever is common.\n\n- a bullet that follows", "Fever", "common.", False),  # no item
    ("5. Confidentiality. Keep it.\n\n6. Security. Lock it.", "5.", "Keep it.", False),
    ("2. What you need to know\nDo not take it.\n\n3. How to take it", "2.", "it.", False),
    ("Bring:\n- a\n- b\nThen rest.\n- c", "Bring", "Then rest.", False),  # no item last
    ("Bring:\n- a hat and\n  gloves\n- a coat", "Bring", "gloves", True),  # a wrapped item
]
"""(text, the quote's first words, its last words, whether the list goes on after it):
a page's footer and header may stand between two items; a sentence ends the list;
numbered clauses and headings without a lead-in are no list."""


@pytest.mark.parametrize(("text", "first", "last", "goes_on"), CASES)
def test_a_list_goes_on_after_an_item_that_the_next_item_follows(
    text: str, first: str, last: str, goes_on: bool
) -> None:
    assert list_goes_on(text, *span(text, first, last)) is goes_on


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("lists")
    notice = root / "recall.md"
    notice.write_text(NOTICE, encoding="utf-8")
    with Index.open(root / "index", create=True) as opened:
        (result,) = opened.ingest([notice], embed=False)
        assert result.status == "added", result
        yield opened


def test_a_no_model_answer_cut_inside_a_list_says_the_list_goes_on(index: Index) -> None:
    """A newcomer's recall notice quoted the first of four "not affected" items under
    its lead-in, and the quote read as the whole list (it is longer than a quote shows
    whole): every face now says that the list goes on in the source."""
    answer = index.ask("Which green sticker shows that a radiator is not affected?")
    (quote,) = answer.quotes
    assert quote.text.startswith(LEAD_IN) and quote.text.endswith(ITEMS[1])
    assert quote.list_goes_on
    assert check_quote(quote, index.store).valid
    flat = " ".join(render_text(answer, width=100).split())
    assert f"↑ {LIST_GOES_ON_NOTE}" in flat
    assert LIST_GOES_ON_NOTE in render_markdown(answer)
    assert f'<span class="list">· {LIST_GOES_ON_NOTE}</span>' in render_answer_html(answer)
    assert answer_to_dict(answer)["quotes"][0]["list_goes_on"] is True
    assert answer_from_dict(answer_to_dict(answer)).quotes[0].list_goes_on


def test_a_whole_list_has_no_note_and_a_shown_note_is_the_index_s(index: Index) -> None:
    """The note is a reading of the source around the quote, not a claim the answer
    vouches for: a saved answer's quote shows the index's reading, whatever it says."""
    answer = index.ask("Which products are not part of this recall?")
    whole = next(q for q in answer.quotes if q.text.endswith(ITEMS[3]))
    assert not whole.list_goes_on
    assert LIST_GOES_ON_NOTE not in render_text(answer, width=100)
    cut = index.ask("Which green sticker shows that a radiator is not affected?").quotes[0]
    assert cut.list_goes_on
    for quote in (whole, cut):
        claimed = replace(quote, id="q1", list_goes_on=not quote.list_goes_on)
        assert check_quote(claimed, index.store).valid
        recorded = as_recorded(make_answer((QuoteSegment("q1"),), (claimed,)))
        assert verify_recorded(recorded, index.store).quotes[0].list_goes_on is quote.list_goes_on
