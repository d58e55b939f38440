"""The grader with the bundled SmolLM2 run in-process: under `grade_grammar()` its reply
is always a grade that parses (1-5, CORRECT or INCORRECT, a justification), whatever
it thinks of the answer; llama.cpp's own grammar engine allows nothing else."""

from __future__ import annotations

import pytest

from helpers.gbnf import GrammarChecker
from quoteproof import Index
from quoteproof.evaluation.grading import grade_answer, grade_grammar
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.llm.local import LocalBackend

QUESTION = "What should be done if signs of a hypersensitivity reaction to remdesivir occur?"
REFERENCE = "Stop the infusion at once and start appropriate treatment."


def test_llama_cpp_allows_only_a_grade_from_1_to_5() -> None:
    checker = GrammarChecker()
    grammar = grade_grammar()
    assert checker.parses(grammar)
    assert checker.accepts(grammar, "JUSTIFICATION: Same advice.\nGRADE: 5\nVERDICT: CORRECT")
    assert not checker.accepts(grammar, "JUSTIFICATION: Same advice.\nGRADE: 6\nVERDICT: CORRECT")
    assert not checker.accepts(grammar, "JUSTIFICATION: Same.\nGRADE: 4.5\nVERDICT: CORRECT")
    assert not checker.accepts(grammar, "JUSTIFICATION: Same.\nGRADE: 4\nVERDICT: PARTLY")
    # a justification that reads as an empty line is not allowed either
    for blank in (" ", "  ", "\t", "\u00a0", "\u3000"):
        assert not checker.accepts(grammar, f"JUSTIFICATION: {blank}\nGRADE: 4\nVERDICT: CORRECT")
    assert checker.accepts(grammar, "JUSTIFICATION: 9 mg.  \nGRADE: 4\nVERDICT: CORRECT")
    assert checker.accepts(grammar, "JUSTIFICATION: Même dose.\nGRADE: 4\nVERDICT: CORRECT")


@pytest.mark.parametrize("grammar", [True, False])
def test_smollm2_grades_an_answer(index: Index, grammar: bool) -> None:
    answer = index.ask(QUESTION, backend=ExtractiveBackend(), top_k=2)
    grader = LocalBackend(threads=1, grammar=grammar)
    grade = grade_answer(grader, QUESTION, REFERENCE, answer)
    if grammar:
        assert grade.status == "graded", grade
        assert grade.grade in range(1, 6) and grade.verdict in ("CORRECT", "INCORRECT")
        assert grade.justification and grade.model == grader.model
    else:  # unconstrained, whatever it writes is either read as it is or reported
        assert grade.status in ("graded", "malformed")
        assert (grade.grade is None) == (grade.status == "malformed")
