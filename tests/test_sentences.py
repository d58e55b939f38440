"""Sentence bounds in linear time: sentencex is never given more than a window of
text, and on text of ordinary sentences the sentences are sentencex's own."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import sentencex
from hypothesis import given, settings
from hypothesis import strategies as st

from quoteproof import sentences
from quoteproof.ingest.parse_limits import ParseLimits
from quoteproof.ingest.parsing import IngestSettings
from quoteproof.ingest.pipeline import ingest_files
from quoteproof.sentences import WINDOW, runs_on, sentence_bounds
from quoteproof.store.open import open_store

QUOTE_RUNS = ("'a''", "`a``", "«a", "'a'' ")
"""Runs on which sentencex's work grows with the square of their length."""


def trimmed(text: str, bounds: list[tuple[int, int]]) -> list[str]:
    return [piece for start, end in bounds if (piece := text[start:end].strip())]


class CountingSentencex:
    """sentencex, recording the length of every text it is given."""

    def __init__(self) -> None:
        self.lengths: list[int] = []

    def get_sentence_boundaries(self, language: str, text: str) -> Any:
        self.lengths.append(len(text))
        return sentencex.get_sentence_boundaries(language, text)


@pytest.mark.parametrize("run", QUOTE_RUNS)
def test_sentencex_reads_at_most_twice_the_text_a_window_at_a_time(
    run: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    counting = CountingSentencex()
    monkeypatch.setattr(sentences, "sentencex", counting)
    text = run * (200_000 // len(run))
    bounds = sentence_bounds("en", text)
    assert max(counting.lengths) <= WINDOW
    assert sum(counting.lengths) <= 2 * len(text) + WINDOW
    assert bounds[0][0] == 0 and bounds[-1][1] == len(text)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(bounds))


SENTENCES = st.lists(
    st.builds(
        lambda words, end: " ".join(words).capitalize() + end,
        st.lists(
            st.sampled_from(["wash", "hands", "Dr.", "soap", "e.g.", "5 mg", "«x»"]),
            min_size=1,
            max_size=40,
        ),
        st.sampled_from([".", "?", "!", ".\n\n", "\n"]),
    ),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(SENTENCES, st.sampled_from([" ", "\n", "  "]))
def test_ordinary_text_gets_sentencex_s_own_sentences(parts: list[str], separator: str) -> None:
    text = separator.join(parts)
    own = [
        (b["start_index"], b["end_index"]) for b in sentencex.get_sentence_boundaries("en", text)
    ]
    assert trimmed(text, sentence_bounds("en", text)) == trimmed(text, own)


def test_a_sentence_longer_than_half_a_window_is_cut_at_whitespace() -> None:
    text = "Short one. " + "word " * WINDOW + "End."
    pieces = trimmed(text, sentence_bounds("en", text))
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")
    assert all(len(piece) <= WINDOW for piece in pieces)
    assert pieces[0] == "Short one." and all(p.startswith("word") for p in pieces[1:-1])


def test_megabyte_runs_of_quote_marks_ingest_within_a_small_cpu_budget(tmp_path: Path) -> None:
    # 160 KB of "'a''" took 14 s to split, 1 MB about 9 minutes: with 30 s of CPU
    # time per file, these fail unless splitting is linear.
    files = []
    for number, run in enumerate(QUOTE_RUNS):
        files.append(tmp_path / f"run{number}.txt")
        files[-1].write_text(run * (1_000_000 // len(run)))
    settings = IngestSettings(limits=ParseLimits(seconds=30, seconds_per_mb=0))
    store = open_store(str(tmp_path / "idx"), create=True)
    try:
        results = list(ingest_files(store, files, settings, jobs=2))
    finally:
        store.close()
    assert [(r.status, r.error) for r in results] == [("added", None)] * len(QUOTE_RUNS)


def test_a_line_runs_on_only_from_a_sentence_left_open_into_its_next_words() -> None:
    assert runs_on("The FAA has determined that", "revising the MEL takes 90 hours.")
    assert runs_on("the average total cost per operator to be", "$7,650 (90 work-hours).")
    assert runs_on("Mark BA, Harless DW. Nurse", "staffing and adverse events.")
    assert runs_on("were 18.5%, 23.6% and 29.3%", "for catheter-associated infections.")
    assert not runs_on("The MEL is revised.", "then the flight is made.")  # a sentence ended
    assert not runs_on("REFERENCES", "improving hand hygiene compliance")  # capitals
    assert not runs_on("Cover mouths when coughing,", "iii. Use and dispose of tissues,")
    assert not runs_on("the total for 2020 was", "Higher than expected.")
