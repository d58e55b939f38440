"""Tests for quoteproof.render.layout: every format shows the same blocks, in the
same order and in the same words."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from helpers.answers import make_answer, make_data_result, make_quote
from quoteproof.model import (
    REFUSAL_TEXT,
    Answer,
    ClaimVerdict,
    DataSegment,
    Fact,
    Faithfulness,
    LLMInfo,
    ProseSegment,
    Quote,
    QuoteSegment,
    Rejected,
    Statement,
    Usage,
)
from quoteproof.render import layout, wording
from quoteproof.render.html import render_answer_html
from quoteproof.render.markdown import render_markdown
from quoteproof.render.provenance import NO_MODEL_FACTS_NOTICE
from quoteproof.render.terminal import render_text

SOURCE = "Aspirin thins the blood. Take it with water. Ask a pharmacist first."
MODEL = LLMInfo("openai", "gpt-test", "", server="http://127.0.0.1:8080/v1")


def _quote(start: int, end: int, quote_id: str, ref: str, **extra: object) -> Quote:
    return make_quote(SOURCE, start, end, quote_id, ref=ref, label=f"Leaflet › {ref}", **extra)


FIRST = _quote(0, 24, "q1", "doc-1", pages=(3,))
SECOND = _quote(25, 44, "c1", "doc-2", differs="water → milk", ocr=True)
STATEMENTS = (
    Statement("s1", "Aspirin thins blood.", ("doc-1",), "CORRECT-EXPLICIT", "Line one."),
    Statement("s2", "Take it with milk.", ("doc-2",), "INCORRECT-FALSE_INFO", None, "With tea."),
    Statement("s3", "It is safe.", (), None, None),
)
FACTS = (
    Fact("TID-1", "Aspirin", "thins", "the <b>blood</b>", "imported", "t1", "g.csv", 3, None, "q1"),
    Fact("TID-2", "Aspirin", "taken_with", "water", "generated", ref="doc-2", quote_id="gone"),
)
REJECTED = (Rejected('<quote ref="x9">made up</quote>', "unknown ref 'x9'"),)

ANSWERS: dict[str, Answer] = {
    "answered": make_answer(
        (
            ProseSegment("Aspirin thins the blood.", ("doc-1", "doc-2")),
            QuoteSegment("q1"),
            DataSegment("r1"),
            QuoteSegment("ghost"),
            DataSegment("nope"),
        ),
        (FIRST,),
        question="What does aspirin do?",
        cited=(SECOND,),
        data=(make_data_result(),),
        llm=MODEL,
        usage=Usage(120, 34),
    ),
    "partial": make_answer(
        (ProseSegment("Take it with water.", ("doc-2",)),),
        (),
        question="How is it taken?",
        partial=True,
        cited=(SECOND,),
        notices=("Some passages did not fit the model's context window.",),
        removed_sentences=(Rejected("It costs $9 <b>now</b> [doc-2].", '"$9" is not in [doc-2]'),),
        llm=LLMInfo("extractive", None, ""),
    ),
    "refused": make_answer(
        (ProseSegment("Never shown."),),
        (),
        question="Who discovered it?",
        status="refused",
        refusal_reason="no passage passed the threshold",
        rejected=REJECTED,
        llm=MODEL,
        mode="cite",
    ),
    "escalated": make_answer(
        (ProseSegment("Ask first."), QuoteSegment("q1")),
        (FIRST,),
        question="Can a child take it?",
        escalation="The leaflet does not cover children.",
        statements=STATEMENTS,
        rejected=REJECTED,
        llm=MODEL,
        mode="rationale",
        facts=FACTS,
        faithfulness=Faithfulness(
            "model",
            0.0,
            (ClaimVerdict(0, ("doc-1",), False, "the <b>leaflet</b> is silent", "deterministic"),),
            removed=1,
        ),
    ),
    "facts-without-a-model": make_answer(
        (),
        (FIRST,),
        question="What does aspirin do?",
        llm=LLMInfo("extractive", None, ""),
        facts=FACTS[:1],
        context="triplets",
    ),
}

_TAG = re.compile(r"<[^>]+>")
_GUTTER = re.compile(r"^(┆ |! |▦ |  ✗ |│ ?)|│$", re.MULTILINE)


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def _page_text(fragment: str) -> str:
    """What a reader sees of an HTML fragment: its text, whitespace collapsed."""
    return _collapsed(html.unescape(_TAG.sub(" ", fragment)))


def shown_text(answer: Answer, output: str) -> str:
    """What a reader of one format sees, as one line of text."""
    if output == "terminal":
        return _collapsed(_GUTTER.sub("", render_text(answer, width=500, show_cited=True)))
    if output == "markdown":
        md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
        return _page_text(md.render(render_markdown(answer, show_cited=True)))
    return _page_text(render_answer_html(answer, show_cited=True))


def _refs(refs: tuple[str, ...]) -> str:
    return " ".join(f"[{ref}]" for ref in refs)


def markers(block: layout.Block) -> list[str]:
    """The texts a block shows in every format, in order (the quoteproof wording)."""
    if isinstance(block, layout.Question):
        return [f"{wording.QUESTION_LABEL}: {block.text}"]
    if isinstance(block, layout.Refusal):
        return [f"{wording.REFUSED_LABEL}: {REFUSAL_TEXT} ({block.reason})"]
    if isinstance(block, layout.Notice):
        return [f"{block.label}: {block.text}"]
    if isinstance(block, layout.Escalation):
        return [f"{wording.ESCALATION_HEADING}. {wording.ESCALATION_LABEL} {block.reason}"]
    if isinstance(block, layout.Prose):
        return [wording.GENERATED_LABEL, f"{block.text} {_refs(block.citations)}".strip()]
    if isinstance(block, layout.QuoteBox):
        return [block.text]
    if isinstance(block, layout.DataBox):
        fields = [text for field in block.fields for text in field]  # HTML: a <dl>, no ":"
        return [
            f"{wording.DATA_LABEL} {block.source} — {wording.NOT_A_QUOTE}",
            *fields,
            block.row_count,
        ]
    if isinstance(block, layout.Missing):
        return [f"Missing {block.what} {block.item_id} — not shown."]
    if isinstance(block, layout.Statements):
        shown = [wording.STATEMENTS_LABEL]
        for item in block.items:
            shown.append(
                f"{item.id} · {item.verdict}" + (f" · {wording.REFINED_FLAG}" * item.refined)
            )
            shown.append(f"{item.text} {_refs(item.refs)}".strip())
            if item.justification is not None:
                shown.append(f"{wording.JUSTIFICATION_LABEL}: {item.justification}")
            if item.original is not None:
                shown.append(f"{wording.REFINED_FROM_LABEL}: {item.original}")
        return shown
    if isinstance(block, layout.Facts):
        shown = [block.label]
        for fact in block.items:
            shown += [f"{fact.id} · {fact.origin} — {wording.NOT_A_QUOTE}", fact.text]
            shown.append(f"From: {fact.provenance}")
            if fact.note is not None:
                shown.append(f"{wording.NOTE_LABEL}: {fact.note}")
            if fact.source is not None:
                shown += [f"{wording.FACT_SOURCE_LABEL}:", fact.source.text]
        return shown
    if isinstance(block, layout.FaithfulnessView):
        shown = [f"{wording.FAITHFULNESS_LABEL}: {block.summary} — {block.method}"]
        return shown + [f"{text} — {why}" for text, why in block.unsupported]
    if isinstance(block, layout.Removed):
        return [wording.REJECTED_HEADING, *(f"{item.raw} — {item.reason}" for item in block.items)]
    assert isinstance(block, layout.Footer)
    return list(block.lines)


@pytest.mark.parametrize("name", sorted(ANSWERS))
@pytest.mark.parametrize("output", ["terminal", "markdown", "html"])
def test_every_format_shows_the_same_blocks_in_the_same_order(name: str, output: str) -> None:
    answer = ANSWERS[name]
    blocks = layout.answer_layout(answer, show_cited=True)
    text = shown_text(answer, output)
    position = 0
    for block in blocks:
        for marker in markers(block):
            found = text.find(_collapsed(marker), position)
            assert found >= 0, f"{output}: {marker!r} not found after {text[position:]!r}"
            position = found + len(_collapsed(marker))
    boxes = sum(isinstance(block, layout.QuoteBox) for block in blocks)
    boxes += sum(
        fact.source is not None
        for block in blocks
        if isinstance(block, layout.Facts)
        for fact in block.items
    )
    assert text.count(wording.VERBATIM_LABEL) == boxes


def test_the_answers_cover_every_kind_of_block() -> None:
    kinds = {type(b) for a in ANSWERS.values() for b in layout.answer_layout(a, show_cited=True)}
    assert kinds == set(layout.Block.__args__)  # type: ignore[attr-defined]
    notices = {
        b.kind
        for a in ANSWERS.values()
        for b in layout.answer_layout(a)
        if isinstance(b, layout.Notice)
    }
    assert notices == {"partial", "no-model", "notice"}


def test_layout_order_and_wording() -> None:
    blocks = layout.answer_layout(ANSWERS["answered"], show_cited=True)
    assert [type(b).__name__ for b in blocks] == [
        "Question",
        "Prose",
        "QuoteBox",
        "QuoteBox",
        "DataBox",
        "Missing",
        "Missing",
        "Footer",
    ]
    cited, first = blocks[2], blocks[3]
    assert isinstance(cited, layout.QuoteBox) and isinstance(first, layout.QuoteBox)
    assert cited.cited and not first.cited  # doc-1 is not in `cited`: only doc-2 is shown
    assert cited.notes == (
        ("ocr", "OCR text: check against the page"),
        ("differs", "the model's words differed: water → milk"),
    )
    assert first.notes == () and first.where == "doc.txt, chars 0–24"
    assert first.label.endswith(" › p. 3") and first.label.count("p. 3") == 1
    footer = blocks[-1]
    assert isinstance(footer, layout.Footer) and footer.lines == (
        "tokens: 120 prompt · 34 completion",
        "model: gpt-test (openai) · server: http://127.0.0.1:8080/v1",
    )
    partial = layout.answer_layout(ANSWERS["partial"])
    assert isinstance(partial[1], layout.Notice) and partial[1].label == wording.PARTIAL_LABEL


def test_refused_answers_show_no_segments_and_line_breaks_are_one_notion() -> None:
    refused = layout.answer_layout(ANSWERS["refused"])
    assert not any(isinstance(b, layout.Prose | layout.QuoteBox) for b in refused)
    answer = make_answer((ProseSegment("a\r\nb\rc\x85d\u2028e\u2029f"),), ())
    (prose,) = [b for b in layout.answer_layout(answer) if isinstance(b, layout.Prose)]
    assert prose.text == "a\nb\nc\nd\ne\nf"
    empty = make_answer((ProseSegment("  "),), (), escalation=" ")
    blocks = layout.answer_layout(empty)
    assert not any(isinstance(b, layout.Prose) for b in blocks)
    assert layout.Escalation("(no reason given)") in blocks


def test_the_removed_sentences_notice_counts_and_names_them() -> None:
    one = (Rejected("Most patients recover.", "sentence cites no retrieved source"),)
    assert layout.removed_notice(one) == (
        '1 generated sentence was removed: "Most patients recover." '
        "(sentence cites no retrieved source)"
    )
    many = tuple(Rejected(f"Sentence {n} " + "word " * 30, "why") for n in range(12))
    notice = layout.removed_notice(many)
    assert notice.startswith('12 generated sentences were removed: "Sentence 0 word')
    assert notice.count("(why)") == layout.REMOVED_SHOWN and notice.endswith("; and 2 more")
    assert "…" in notice
    blocks = layout.answer_layout(ANSWERS["partial"])
    assert blocks[4] == layout.Notice(
        "notice", wording.NOTE_LABEL, layout.removed_notice(ANSWERS["partial"].removed_sentences)
    )


def test_facts_without_a_model_are_found_not_cited_and_the_note_says_how() -> None:
    found = layout.answer_layout(ANSWERS["facts-without-a-model"], show_cited=True)
    cited = layout.answer_layout(ANSWERS["escalated"], show_cited=True)
    assert [b.label for b in found if isinstance(b, layout.Facts)] == [wording.FACTS_FOUND_LABEL]
    assert [b.label for b in cited if isinstance(b, layout.Facts)] == [wording.FACTS_LABEL]
    notes = [b.text for b in found if isinstance(b, layout.Notice) and b.kind == "no-model"]
    assert notes == [NO_MODEL_FACTS_NOTICE]
    for output in ("terminal", "markdown", "html"):
        text = shown_text(ANSWERS["facts-without-a-model"], output)
        assert wording.FACTS_FOUND_LABEL in text and NO_MODEL_FACTS_NOTICE in text
        assert wording.FACTS_LABEL not in text


def test_the_faithfulness_line_follows_the_prose_and_names_what_is_unsupported() -> None:
    blocks = layout.answer_layout(ANSWERS["escalated"])
    kinds = [type(b).__name__ for b in blocks]
    assert kinds.index("FaithfulnessView") == kinds.index("QuoteBox") + 1
    (view,) = [b for b in blocks if isinstance(b, layout.FaithfulnessView)]
    assert view.summary == "0 of 2 claims supported (0%); 1 removed counts as unsupported"
    assert view.method == "judged by the model"
    assert view.unsupported == (
        (
            "Ask first.",
            "the <b>leaflet</b> is silent (deterministic checks: numbers, units, dates, "
            "names, negation)",
        ),
    )
    html_text = render_answer_html(ANSWERS["escalated"])
    assert "&lt;b&gt;leaflet&lt;/b&gt;" in html_text and "<b>leaflet" not in html_text
    assert not any(
        isinstance(b, layout.FaithfulnessView) for b in layout.answer_layout(ANSWERS["answered"])
    )
