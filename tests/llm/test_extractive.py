"""The extractive backend: quotes only, the sentences that answer best."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from quoteproof.llm.base import CompletionRequest
from quoteproof.llm.extractive import ExtractiveBackend, extract_answer
from quoteproof.llm.quotable import quotable_units
from quoteproof.model import Chunk
from quoteproof.quoting.parse import QuoteItem, parse_output
from quoteproof.quoting.prompt import build_messages
from quoteproof.store.base import Vectors

FLU = (
    "Influenza\n\n"
    "Influenza spreads by droplets when people cough. Vaccination every year is the best "
    "protection against influenza. Antiviral drugs can shorten the illness when started early."
    "\n\nTable 3 Influenza vaccination rates by age group and season\n\n"
    "8.1 Pregnancy 8.2 Lactation 8.4 Pediatric Use\n\n"
    "Vaccination works."
)


def chunk(ref: str, text: str, section: tuple[str, ...] = ()) -> Chunk:
    return Chunk(ref, ref, 1, 1, 0, len(text), text, section, "L", f"/{ref}.txt")


def quoted(reply: str) -> list[tuple[str, str | None]]:
    return [(i.ref, i.claimed) for i in parse_output(reply).items if isinstance(i, QuoteItem)]


def test_quotes_the_answering_sentence_not_headings_captions_or_contents() -> None:
    reply = extract_answer("How does vaccination protect against influenza?", (chunk("d", FLU),))
    assert quoted(reply) == [
        ("d", "Vaccination every year is the best protection against influenza.")
    ]


def test_no_shared_word_means_no_answer_without_a_model() -> None:
    assert extract_answer("rattlesnake antivenom", (chunk("d", FLU),)) == "<no-answer/>"


def test_a_list_item_is_quoted_with_its_lead_in() -> None:
    text = (
        "Unhealthy habits can raise your risk for high blood pressure, and they include:\n\n"
        "Eating too much sodium\n\nLack of physical activity\n\nDrinking too much alcohol"
    )
    reply = extract_answer(
        "Which habits raise the risk of high blood pressure?", (chunk("h", text),)
    )
    assert quoted(reply) == [("h", text)]


def fake_embed(vectors: dict[str, Sequence[float]]) -> object:
    """An embedding that knows a few texts (others get a far-away vector)."""

    def embed(texts: Sequence[str]) -> Vectors:
        rows = [np.asarray(vectors.get(t, (0.0, 0.0, 1.0)), dtype=np.float32) for t in texts]
        return np.stack([row / np.linalg.norm(row) for row in rows])

    return embed


def test_the_embedding_ranks_sentences_best_first_and_drops_weak_ones() -> None:
    question = "Who should get a flu shot?"
    text = (
        "Everyone six months and older should be vaccinated each season. "
        "Shots are given in the arm by a nurse at the clinic. "
        "The clinic opens at nine in the morning on weekdays."
    )
    sentences = [s.strip() + "." for s in text.split(".") if s.strip()]
    embed = fake_embed({question: (1, 0, 0), sentences[0]: (1, 0.1, 0), sentences[1]: (0.2, 1, 0)})
    reply = extract_answer(question, (chunk("c", text),), embed)  # type: ignore[arg-type]
    assert quoted(reply) == [("c", sentences[0])]


def test_adjacent_chosen_sentences_are_joined_into_one_quote() -> None:
    text = "Shingles causes a painful rash. The shingles rash often forms a stripe of blisters."
    reply = extract_answer("What is the shingles rash like?", (chunk("s", text),))
    assert quoted(reply) == [("s", text)]


def test_backend_reads_the_request_not_the_prompt() -> None:
    sources = (chunk("d", FLU),)
    request = CompletionRequest(
        build_messages("vaccination?", sources, {}), "vaccination?", sources
    )
    completion = ExtractiveBackend().complete(request)
    assert quoted(completion.text)[0][0] == "d" and completion.model is None


def test_stream_hands_over_the_whole_reply_once() -> None:
    sources = (chunk("d", FLU),)
    request = CompletionRequest(
        build_messages("vaccination?", sources, {}), "vaccination?", sources
    )
    pieces: list[str] = []
    completion = ExtractiveBackend().stream(request, pieces.append)
    assert pieces == [completion.text]
    assert completion == ExtractiveBackend().complete(request)


TABLE = (
    "Table 2 lists adverse reactions.\n\n"
    "Adverse reaction | ELIQUIS | Warfarin\n"
    "Major bleeding | 327 (2.13) | 462 (3.09)\n"
    "Intracranial hemorrhage | 52 (0.33) | 125 (0.82)"
)


def row_spans(text: str) -> list[tuple[int, int]]:
    """The body rows of `TABLE` (every line of its table but the header)."""
    start = text.index("Major")
    second = text.index("\n", start)
    return [(start, second), (second + 1, len(text))]


def test_a_table_row_is_its_own_quotable_unit() -> None:
    spans = [(u.start, u.end) for u in quotable_units(TABLE, row_spans(TABLE))]
    assert [TABLE[lo:hi] for lo, hi in spans] == TABLE.split("\n")[3:]


def test_the_no_model_answer_quotes_the_matching_table_row_only() -> None:
    source = chunk("t", TABLE)
    rows = lambda c: row_spans(c.text)  # noqa: E731
    reply = extract_answer("intracranial hemorrhage rate", (source,), table_rows=rows)
    assert quoted(reply) == [("t", "Intracranial hemorrhage | 52 (0.33) | 125 (0.82)")]
