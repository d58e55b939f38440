"""Building `Quote` and `Answer` values directly, and hostile ones for hypothesis."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from quoteproof.model import (
    Answer,
    LLMInfo,
    ProseSegment,
    Quote,
    QuoteSegment,
    Rejected,
    Segment,
    sha256_text,
)


def make_quote(source: str, start: int, end: int, quote_id: str = "q1", **extra: Any) -> Quote:
    """A quote of `source[start:end]` with a correct receipt; `extra` overrides fields."""
    fields: dict[str, Any] = {
        "id": quote_id,
        "ref": "doc-1",
        "label": "Doc › Section › ¶1",
        "doc_id": "doc",
        "doc_version": 1,
        "source_path": "corpus/doc.txt",
        "start": start,
        "end": end,
        "text": source[start:end],
        "claimed_text": None,
        "match": "ref",
        "score": 100.0,
        "doc_sha256": sha256_text(source),
        "text_sha256": sha256_text(source[start:end]),
        "section": ("Section",),
        "pages": None,
        "differs": None,
    }
    fields.update(extra)
    return Quote(**fields)


def make_answer(segments: tuple[Segment, ...], quotes: tuple[Quote, ...], **extra: Any) -> Answer:
    """An answered `Answer` with these segments and quotes; `extra` overrides fields."""
    fields: dict[str, Any] = {
        "question": "How does it begin?",
        "status": "answered",
        "segments": segments,
        "quotes": quotes,
        "rejected": (),
        "llm": LLMInfo("test", None, ""),
    }
    fields.update(extra)
    return Answer(**fields)


def shown_segments(answer: Answer) -> tuple[Segment, ...]:
    """The segments a renderer draws: none for a refusal (it prints the fixed sentence)."""
    return answer.segments if answer.status == "answered" else ()


def hostile_answers(attack_text: st.SearchStrategy[str]) -> st.SearchStrategy[Answer]:
    """Answers whose every string (quote text, labels, prose, reasons) is `attack_text`."""

    @st.composite
    def build(draw: st.DrawFn) -> Answer:
        quote_list = []
        for i in range(draw(st.integers(0, 3))):
            source = draw(attack_text)
            start = draw(st.integers(0, len(source)))
            end = draw(st.integers(start, len(source)))
            quote_list.append(
                make_quote(
                    source,
                    start,
                    end,
                    f"q{i}",
                    label=draw(attack_text),
                    differs=draw(st.none() | attack_text),
                )
            )
        prose = st.builds(ProseSegment, attack_text, st.lists(attack_text, max_size=2).map(tuple))
        ids = [q.id for q in quote_list]
        segment: st.SearchStrategy[Segment] = (
            prose | st.sampled_from(ids).map(QuoteSegment) if ids else prose
        )
        return make_answer(
            tuple(draw(st.lists(segment, max_size=5))),
            tuple(quote_list),
            status=draw(st.sampled_from(["answered", "refused"])),
            refusal_reason=draw(st.none() | attack_text),
            rejected=tuple(
                draw(st.lists(st.builds(Rejected, attack_text, attack_text), max_size=2))
            ),
        )

    return build()
