"""Which run of a claimed quote's sentences `longest_run` picks, and when it gives up."""

from __future__ import annotations

from quoteproof.quoting.partial import MAX_PARTIAL_SENTENCES, longest_run

S = [f"Sentence number {n} has a few more words in it." for n in range(1, 9)]


def test_the_longest_run_wins_and_the_earliest_of_equals() -> None:
    known = {" ".join(S[1:3]), S[0], S[3]}
    run = longest_run(" ".join(S[:4]), lambda words: words if words in known else None)
    assert run is not None and run.found == " ".join(S[1:3])
    assert run.rest == (S[0], S[3])
    single = longest_run(" ".join(S[:3]), lambda words: words if words in {S[0], S[2]} else None)
    assert single is not None and single.found == S[0] and single.rest == (" ".join(S[1:3]),)


def test_the_whole_quote_and_short_runs_are_never_tried() -> None:
    tried: list[str] = []
    claimed = f"{S[0]} Too short. {S[1]}"
    longest_run(claimed, lambda words: tried.append(words))
    assert claimed not in tried and "Too short." not in tried and tried


def test_one_sentence_or_too_many_are_not_split() -> None:
    assert longest_run(S[0], lambda words: words) is None
    many = " ".join(S[: MAX_PARTIAL_SENTENCES + 1])
    assert longest_run(many, lambda words: words) is None
