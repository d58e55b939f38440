"""Grading answers against reference answers with a model (`quoteproof eval --grader`).

The grader is a backend of its own (any of the registry's, usually a stronger model
than the one that answered). For each question with a `gold_answer` it is shown the
question, the reference answer and the answer as a reader sees it (generated
sentences, the quotes' verbatim text, rationale statements), and replies with three
lines, in this order:

    JUSTIFICATION: one or two sentences
    GRADE: a whole number from 1 to 5
    VERDICT: CORRECT or INCORRECT

The scale (`SCALE`) and the prompt (`GRADER_SYSTEM`) are documented in
docs/grading.md. A backend that can constrain its output (`Capability.CONSTRAINED`,
e.g. `--grader-llm local`) is given `grade_grammar()`, so that it can write nothing
else (every reply it allows parses as a grade: the justification starts with a
character that is not a space, and the token budget covers its longest reply). The
reply is parsed strictly (`parse_grade`): a missing or empty line, a grade that is
not a whole number from 1 to 5 or a verdict other than CORRECT / INCORRECT makes the
whole grade `malformed`, with the reason and the raw reply kept; nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from quoteproof.errors import BackendError
from quoteproof.llm.base import Backend, Capability, CompletionRequest
from quoteproof.llm.gbnf import literal
from quoteproof.model import Answer, Message, ProseSegment, QuoteSegment

__all__ = [
    "GRADER_SYSTEM",
    "SCALE",
    "Grade",
    "GradeStatus",
    "GradingSummary",
    "answer_for_grading",
    "grade_answer",
    "grade_grammar",
    "grade_prompt",
    "grade_text",
    "grammar_max_tokens",
    "parse_grade",
    "summarize_grades",
]

GradeStatus = Literal["graded", "malformed", "error"]
Verdict = Literal["CORRECT", "INCORRECT"]

SCALE: tuple[tuple[int, str], ...] = (
    (5, "fully agrees with the reference answer, and its explanation is relevant and "
        "grounded in what it quotes or cites"),
    (4, "agrees with the reference answer; the explanation has minor gaps or "
        "includes something not needed"),
    (3, "partly agrees with the reference answer, or agrees but with a weak or "
        "poorly grounded explanation"),
    (2, "mostly disagrees with the reference answer, or gives no usable explanation"),
    (1, "contradicts the reference answer, does not answer the question, or declines "
        "to answer a question that has one"),
)  # fmt: skip
"""The grades, from best to worst, as the grader is told them."""

JUSTIFICATION_CHARS = 400
"""Most characters of a justification under the grammar."""
GRADE_MAX_TOKENS = 256
"""The token budget of a grader's reply without a grammar."""
SPACE_CLASS = r"\x09-\x0d\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""Every character Python counts as white space (`str.isspace`), as the inside of
a GBNF character class: a justification may not start with one (it would read as an
empty line)."""

GRADER_SYSTEM = (
    "You are a strict teacher grading an answer to a question against the reference "
    "answer. Judge two things: whether the answer agrees with the reference answer, "
    "and whether its explanation is relevant to the question and grounded in the "
    "passages it quotes or cites.\n\nThe grades:\n"
    + "\n".join(f"{grade}: {text}" for grade, text in SCALE)
    + "\n\nThe verdict is CORRECT when the answer reaches the same conclusion as the "
    "reference answer, else INCORRECT.\n\nReply with exactly three lines and nothing "
    "else:\nJUSTIFICATION: one or two sentences\nGRADE: a whole number from 1 to 5\n"
    "VERDICT: CORRECT or INCORRECT"
)
"""The grader's system prompt (documented in docs/grading.md)."""

_SPACE = r"[^\S\n]*"  # white space within one line
_LINE = re.compile(
    rf"^{_SPACE}\**{_SPACE}(JUSTIFICATION|GRADE|VERDICT){_SPACE}\**{_SPACE}:{_SPACE}(.*?){_SPACE}$",
    re.I | re.M,
)


@dataclass(frozen=True)
class Grade:
    """The grader's judgement of one answer. `status` `graded`: `grade` (1-5),
    `verdict` and `justification` are the grader's; `malformed`: the reply could not
    be read as a grade (`problem` says why, `raw` is the reply); `error`: the grader
    could not be asked (`problem` is the error). `model` is the grader's model."""

    status: GradeStatus
    grade: int | None = None
    verdict: Verdict | None = None
    justification: str | None = None
    problem: str | None = None
    raw: str | None = None
    model: str | None = None

    @property
    def correct(self) -> bool | None:
        """True for CORRECT, False for INCORRECT, None when not graded."""
        return None if self.verdict is None else self.verdict == "CORRECT"


def grade_grammar() -> str:
    """The GBNF grammar of a grader's reply: the three lines, the grade a digit 1-5,
    the verdict CORRECT or INCORRECT, the justification one line of at most
    `JUSTIFICATION_CHARS` characters whose first is not white space."""
    return (
        f'root ::= {literal("JUSTIFICATION: ")} why "\\n" {literal("GRADE: ")} [1-5] "\\n" '
        f"{literal('VERDICT: ')} verdict\n"
        f"why ::= [^{SPACE_CLASS}] [^\\n]{{0,{JUSTIFICATION_CHARS - 1}}}\n"
        f"verdict ::= {literal('CORRECT')} | {literal('INCORRECT')}\n"
    )


def grammar_max_tokens() -> int:
    """The token budget of a reply under `grade_grammar()`: its longest reply in UTF-8
    bytes (every token the grammar allows is at least one byte), so that a reply is
    never cut short before its verdict."""
    fixed = "JUSTIFICATION: \nGRADE: 5\nVERDICT: INCORRECT"
    return len(fixed.encode("utf-8")) + 4 * JUSTIFICATION_CHARS


def answer_for_grading(answer: Answer) -> str:
    """The answer as a reader sees it, in plain text: each generated sentence, each
    quote's verbatim text in double quotes, then the rationale statements used; a
    refusal as `(declined to answer: REASON)`."""
    if answer.status == "refused":
        return f"(declined to answer: {answer.refusal_reason or 'no reason given'})"
    quotes = {quote.id: quote for quote in answer.quotes}
    parts = []
    for segment in answer.segments:
        if isinstance(segment, ProseSegment):
            parts.append(segment.text)
        elif isinstance(segment, QuoteSegment) and segment.quote_id in quotes:
            parts.append(f'"{quotes[segment.quote_id].text}"')
    parts += [f"- {statement.text}" for statement in answer.statements]
    return "\n".join(part.strip() for part in parts if part.strip()) or "(empty answer)"


def grade_prompt(question: str, reference: str, answer_text: str) -> str:
    """The grader's user message for one answer."""
    return (
        f"Question: {question}\n\nReference answer: {reference}\n\n"
        f"Answer to grade:\n{answer_text}\n\nGrade the answer."
    )


def parse_grade(reply: str, model: str | None = None) -> Grade:
    """Read a grader's reply. Its first JUSTIFICATION, GRADE and VERDICT lines are
    taken (in any order and case, markdown bold allowed; each label and its value on
    one line); none may be empty, the grade must be a whole number from 1 to 5 and
    the verdict CORRECT or INCORRECT. Anything else gives a `malformed` grade naming
    the first problem, never a guessed one."""
    found: dict[str, str] = {}
    for match in _LINE.finditer(reply):
        found.setdefault(match.group(1).upper(), match.group(2))

    def malformed(problem: str) -> Grade:
        return Grade("malformed", problem=problem, raw=reply, model=model)

    for key in ("GRADE", "VERDICT", "JUSTIFICATION"):
        if key not in found:
            return malformed(f"no {key} line")
        if not found[key]:
            return malformed(f"the {key} line is empty")
    grade_text = found["GRADE"]
    if not re.fullmatch(r"[+-]?\d+", grade_text):
        return malformed(f"grade {grade_text!r} is not a whole number from 1 to 5")
    grade = int(grade_text)
    if not 1 <= grade <= 5:
        return malformed(f"grade {grade} is outside 1 to 5")
    verdict = found["VERDICT"].strip(" .*").upper()
    if verdict not in ("CORRECT", "INCORRECT"):
        return malformed(f"verdict {found['VERDICT']!r} is neither CORRECT nor INCORRECT")
    return Grade(
        "graded",
        grade=grade,
        verdict="CORRECT" if verdict == "CORRECT" else "INCORRECT",
        justification=found["JUSTIFICATION"],
        raw=reply,
        model=model,
    )


def grade_text(grader: Backend, question: str, reference: str, answer_text: str) -> Grade:
    """Ask `grader` to grade `answer_text` (an answer in plain text) to `question`
    against `reference`, under `grade_grammar()` when it can constrain its output.
    A `BackendError` gives an `error` grade; the reply is read with `parse_grade`."""
    constrained = Capability.CONSTRAINED in grader.capabilities
    request = CompletionRequest(
        messages=(
            Message("system", GRADER_SYSTEM),
            Message("user", grade_prompt(question, reference, answer_text)),
        ),
        question=question,
        sources=(),
        max_tokens=grammar_max_tokens() if constrained else GRADE_MAX_TOKENS,
        grammar=grade_grammar() if constrained else None,
    )
    try:
        completion = grader.complete(request)
    except BackendError as exc:
        return Grade("error", problem=str(exc), model=grader.model)
    return parse_grade(completion.text, completion.model or grader.model)


def grade_answer(grader: Backend, question: str, reference: str, answer: Answer) -> Grade:
    """`grade_text` of `answer` as a reader sees it (`answer_for_grading`)."""
    return grade_text(grader, question, reference, answer_for_grading(answer))


@dataclass(frozen=True)
class GradingSummary:
    """The grades of a run: how many questions had a reference answer (`gradable`),
    how many were graded, malformed or failed, the CORRECT count, the mean grade and
    accuracy (both over the graded ones; None without any), and the count of each
    grade 1-5."""

    gradable: int
    graded: int
    malformed: int
    errors: int
    correct: int
    mean_grade: float | None
    accuracy: float | None
    distribution: dict[int, int]


def summarize_grades(grades: Sequence[Grade]) -> GradingSummary:
    """Summarize the grades of the questions that had a reference answer. O(n)."""
    graded = [g for g in grades if g.status == "graded" and g.grade is not None]
    correct = sum(g.verdict == "CORRECT" for g in graded)
    distribution = {n: 0 for n in range(1, 6)}
    for g in graded:
        assert g.grade is not None
        distribution[g.grade] += 1
    count = len(graded)
    return GradingSummary(
        gradable=len(grades),
        graded=count,
        malformed=sum(g.status == "malformed" for g in grades),
        errors=sum(g.status == "error" for g in grades),
        correct=correct,
        mean_grade=sum(g.grade or 0 for g in graded) / count if count else None,
        accuracy=correct / count if count else None,
        distribution=distribution,
    )
