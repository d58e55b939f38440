"""A quote that stops inside a list says so: `list_goes_on` is read from the source
text, recorded in the answer, re-checked by a receipt and shown under the quote."""

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


@pytest.mark.parametrize(
    ("text", "first", "last", "goes_on"),
    [
        (NOTICE, LEAD_IN, ITEMS[0], True),  # a bullet follows
        (NOTICE, LEAD_IN, ITEMS[2], True),
        (NOTICE, ITEMS[1], ITEMS[1], True),  # one item alone, more after it
        (NOTICE, LEAD_IN, ITEMS[3], False),  # the whole list
        (NOTICE, LEAD_IN, "outside the ranges", False),  # stops inside an item
        (
            "Notify:\n\n(a) the nature;\n\n(b) the consequences;\n\n(c) the measures.",
            "Notify",
            "(b) the consequences;",
            True,
        ),
        (
            "(a) the nature;\n\nDPA v2 CONFIDENTIAL\n\nPage 3\n\n(b) the measures.",
            "(a)",
            "the nature;",
            True,
        ),  # a page's footer and header between the items
        (
            "(a) the nature;\n\nThe Processor acts alone.\n\n(b) the measures.",
            "(a)",
            "the nature;",
            False,
        ),  # a sentence between: the list ended
        ("(c) the nature;\n\n(a) another list.", "(c)", "the nature;", False),  # not the next
        ("Fever is common.\n\n- a bullet that follows", "Fever", "common.", False),  # no item
    ],
)
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


def test_a_whole_list_has_no_note_and_a_forged_note_fails_its_receipt(index: Index) -> None:
    answer = index.ask("Which products are not part of this recall?")
    whole = next(q for q in answer.quotes if q.text.endswith(ITEMS[3]))
    assert not whole.list_goes_on
    assert LIST_GOES_ON_NOTE not in render_text(answer, width=100)
    (problem,) = check_quote(replace(whole, list_goes_on=True), index.store).problems
    assert problem == "list_goes_on differs: the answer says true, the index says false"
    recorded = as_recorded(make_answer((QuoteSegment("q1"),), (replace(whole, id="q1"),)))
    assert not verify_recorded(recorded, index.store).quotes[0].list_goes_on
