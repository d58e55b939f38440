"""The `rationale` strategy: generate, verify, refine, then answer.

Four model calls, each recorded in `Answer.calls` under its stage name:

1. `generate`: from the sources and the question, the model writes one rationale
   statement per relevant source, one per line (`S1: statement text [REF]`).
   Citation markers are taken out of the text; refs that name no retrieved source
   are dropped and reported, and a statement left with no valid ref is dropped.
   `<no-answer/>`, or no statement left, is a refusal.
2. `verify`: the model labels every statement (`StatementLabel`) with a one-sentence
   justification (`S1: LABEL — why`). A statement it does not label keeps
   `label=None`: shown as unverified, never used for the answer.
3. `refine` (only when some statement is `INCORRECT-*`): the model rewrites each
   incorrect statement from its label and justification. A rewrite with a valid ref
   replaces the statement's text (the first text kept as `original`, the verifier's
   label kept); a missing rewrite, or one with no valid ref, leaves the statement
   incorrect and unused. Rewrites are not verified again.

   Then a statement the answer would use (`CORRECT-*`, or refined) whose numbers,
   dates, names or negation are not in the passages it cites (`quoting.support`)
   is taken out and listed in `Answer.removed_sentences`, whatever its label: no
   statement shown as correct says what its passages do not.
4. `answer` (streamed): from the sources and only the usable statements (`CORRECT-*`
   and refined ones), the model writes the final answer in the default protocol
   (cited prose, `<quote>`s, `<no-answer/>`), resolved by `answer_from_reply`. No
   usable statement is a refusal without this call.

Statements are model-written text: they are carried in `Answer.statements` (and on
every refusal), their refs are added to the cited passages, and they never become a
`Quote`. Quotes come only from the resolver, in stage 4.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import cast, get_args

from quoteproof.model import Answer, Chunk, Message, Rejected, Statement, StatementLabel
from quoteproof.quoting.grammar import cite_grammar, statement_grammar, verdict_grammar
from quoteproof.quoting.parse import parse_output, split_citations
from quoteproof.quoting.prompt import QUOTE_RULE, SOURCES_RULE, format_sources
from quoteproof.quoting.support import chunk_passage, support_problem
from quoteproof.quoting.units import SourceUnits, source_units
from quoteproof.strategies.facts import fact_passages
from quoteproof.strategies.quote import answer_from_reply
from quoteproof.strategies.session import MODEL_NO_ANSWER, NOTHING_VERIFIABLE, AnswerSession

__all__ = [
    "ANSWER_SYSTEM_PROMPT",
    "GENERATE_SYSTEM_PROMPT",
    "REFINE_SYSTEM_PROMPT",
    "VERIFY_SYSTEM_PROMPT",
    "StatementLine",
    "Verdict",
    "answer_messages",
    "answer_rationale",
    "apply_rewrites",
    "apply_verdicts",
    "drop_unsupported",
    "format_statements",
    "generate_messages",
    "is_usable",
    "parse_statement_lines",
    "parse_verdicts",
    "refine_messages",
    "statements_from_reply",
    "verify_messages",
]

GENERATE_SYSTEM_PROMPT = """\
You write the rationale for answering a question from the sources you are given. \
Each source is wrapped in <source ref="REF"> ... </source>.

Rules for your reply:
1. For each source that is relevant to the question, write one statement saying what \
that source contributes to the answer. End the statement with the ref of the source \
it relies on, like [REF]; a statement that relies on several sources ends with all \
their refs, like [REF1][REF2].
2. Write one statement per line, numbered S1, S2, ... in this form:
S1: statement text [REF]
3. Use only refs that appear in the sources below. State only what the sources \
support. Skip the sources that are not relevant.
4. Write nothing else: no introduction, no final answer.
5. If no source is relevant to the question, reply with exactly <no-answer/> and nothing else.
"""

VERIFY_SYSTEM_PROMPT = """\
You check rationale statements against the sources they cite. Each source is \
wrapped in <source ref="REF"> ... </source>. Each statement is numbered (S1, S2, ...) \
and ends with the refs of the sources it cites.

Label EVERY statement with exactly one of these labels:
- CORRECT-EXPLICIT: the cited source states it.
- CORRECT-IMPLICIT: it follows from what the cited source states.
- CORRECT-ADDITIONAL_INFO: it is correct, but adds information that is not in the cited source.
- INCORRECT-FALSE_INFO: it contradicts the cited source.
- INCORRECT-DEVIATING_INFO: it does not address the question or the cited source.
- INCORRECT-ILLOGICAL: its reasoning does not hold.

Reply with one line per statement, in order, each with the label and one sentence \
saying why, and nothing else:
S1: LABEL — justification
"""

REFINE_SYSTEM_PROMPT = """\
You correct rationale statements that a checker found incorrect. Each source is \
wrapped in <source ref="REF"> ... </source>. Each statement is given with the \
checker's label and reason.

Rules for your reply:
1. Rewrite each statement so that it is correct, addresses the question and states \
only what its sources support, taking the checker's reason into account. End it with \
the refs of the sources it relies on, like [REF] or [REF1][REF2].
2. Keep each statement's number. Write one statement per line in this form:
S2: corrected statement text [REF]
3. Use only refs that appear in the sources below.
4. Leave out a statement that cannot be corrected from the sources. Write nothing else.
"""

ANSWER_SYSTEM_PROMPT = f"""\
You answer a question from checked statements and the sources they cite. \
{SOURCES_RULE}

Rules for your reply:
1. Answer in a few short sentences, using only what the checked statements below \
say. End EVERY sentence with the refs of the sources that support it, like [REF] or \
[REF1][REF2], before the full stop. Cite source refs, never statement numbers.
2. Use only refs that appear in the sources below.
3. You may quote a source. {QUOTE_RULE}
4. If the statements do not answer the question, reply with exactly <no-answer/> and \
nothing else.
"""

_LABELS: dict[str, StatementLabel] = {
    name: cast(StatementLabel, name) for name in get_args(StatementLabel)
}
_EMPHASIS = re.compile(r"\*\*|__|`")
# `S1: text`, `- S1. text`, `1. S1 - text`, `[S1] text`, `Statement 1: text`.
_LINE = re.compile(
    r"""\A\s*
    (?:(?:[-*+•·]|\d{1,3}[.)])\s*)?
    [\[(]?\s*(?:statement\s*|s\s*)(?P<num>\d{1,4})
    (?:\s*[:.)\]=|–—-]+|\s)
    \s*(?P<body>.*?)\s*\Z""",
    re.IGNORECASE | re.VERBOSE,
)
# `CORRECT-EXPLICIT — why`, `incorrect_false_info: why`, `[Correct - Implicit] why`.
_VERDICT = re.compile(
    r"""\A[\s\[("'*]*
    (?:(?:label|verdict)\s*[:=]?\s*)?
    (?P<negation>in)?correct\s*[-_–—:]?\s*
    (?P<kind>explicit|implicit|illogical
      |(?:additional|false|deviating)[\s_-]*info(?:rmation)?)\b
    [\])"'*]*\s*(?:[-–—:|,;.]+\s*)?
    (?P<why>.*?)\s*\Z""",
    re.IGNORECASE | re.VERBOSE,
)


@dataclass(frozen=True)
class StatementLine:
    """One numbered statement line as the model wrote it: `id` normalised (`S1`),
    `text` with the citation markers taken out, the cited `refs` (unchecked, in
    order, without repeats) and the line as written (`raw`)."""

    id: str
    text: str
    refs: tuple[str, ...]
    raw: str


@dataclass(frozen=True)
class Verdict:
    """The verifier's verdict on one statement; `justification` None when it gave none."""

    label: StatementLabel
    justification: str | None


def _numbered(line: str) -> tuple[str, str] | None:
    """Return (`S<n>`, rest of the line) for a numbered statement line, else None."""
    m = _LINE.match(_EMPHASIS.sub("", line))
    if m is None:
        return None
    return f"S{int(m.group('num'))}", m.group("body")


def parse_statement_lines(text: str) -> list[StatementLine]:
    """Return the numbered statement lines of `text`, in order.

    Tolerates surrounding whitespace, bullets and list numbers, `S1:`, `S1.`,
    `S1 -`, `S1)`, `[S1]`, `Statement 1:`, any case, and Markdown bold or code marks
    (removed). Lines that are not numbered statements are ignored; a line whose
    text and refs are both empty is ignored. Never raises; O(len(text)).
    """
    lines: list[StatementLine] = []
    for raw in text.splitlines():
        numbered = _numbered(raw)
        if numbered is None:
            continue
        key, body = numbered
        item = split_citations(body)
        if item is None:
            continue
        lines.append(StatementLine(key, item.text, tuple(dict.fromkeys(item.citations)), raw))
    return lines


def parse_verdicts(text: str) -> dict[str, Verdict]:
    """Return the verifier's verdicts in `text`, by statement id (`S1`).

    A line is `S1: LABEL — justification`; tolerated: the prefixes of
    `parse_statement_lines`, labels in any case with `-`, `_`, space or nothing
    between their parts (`INFORMATION` for `INFO`), brackets or quotes around the
    label, `—`, `-`, `:` or no separator before the justification, or none at all.
    A line without a known label is ignored; the first verdict for an id wins.
    """
    verdicts: dict[str, Verdict] = {}
    for raw in text.splitlines():
        numbered = _numbered(raw)
        if numbered is None:
            continue
        key, body = numbered
        m = _VERDICT.match(body)
        if m is None or key in verdicts:
            continue
        kind = re.sub(r"[\s_-]+", "_", m.group("kind").upper()).replace("INFORMATION", "INFO")
        label = _LABELS.get(f"{'IN' if m.group('negation') else ''}CORRECT-{kind}")
        if label is not None:
            verdicts[key] = Verdict(label, m.group("why") or None)
    return verdicts


def _checked_refs(
    line: StatementLine, known: Iterable[str], what: str
) -> tuple[tuple[str, ...], list[Rejected]]:
    """Split `line.refs` into those in `known` and a `Rejected` for each other one."""
    allowed = set(known)
    rejected = [
        Rejected(line.raw, f"{what} cites '{ref}', which is not a retrieved source")
        for ref in line.refs
        if ref not in allowed
    ]
    return tuple(ref for ref in line.refs if ref in allowed), rejected


def statements_from_reply(
    text: str, known: Iterable[str]
) -> tuple[list[Statement], list[Rejected]]:
    """Return the statements of a `generate` reply and what was dropped.

    Refs outside `known` are dropped (each reported); a statement with no text, or
    left with no valid ref, is dropped (reported). The statements kept are numbered
    `S1`, `S2`, ... in order, whatever numbers the model used, and are unlabelled.
    """
    allowed = set(known)
    statements: list[Statement] = []
    rejected: list[Rejected] = []
    for line in parse_statement_lines(text):
        refs, bad = _checked_refs(line, allowed, f"statement {line.id}")
        rejected.extend(bad)
        if not line.text:
            rejected.append(Rejected(line.raw, "statement has no text"))
        elif not refs:
            rejected.append(Rejected(line.raw, "statement cites no retrieved source"))
        else:
            statements.append(Statement(f"S{len(statements) + 1}", line.text, refs, None, None))
    return statements, rejected


def apply_verdicts(
    statements: Sequence[Statement], verdicts: Mapping[str, Verdict]
) -> list[Statement]:
    """Return `statements` with their verdicts; one without a verdict is unchanged
    (`label=None`)."""
    labelled = []
    for statement in statements:
        verdict = verdicts.get(statement.id)
        if verdict is not None:
            statement = replace(statement, label=verdict.label, justification=verdict.justification)
        labelled.append(statement)
    return labelled


def _is_incorrect(statement: Statement) -> bool:
    return statement.label is not None and statement.label.startswith("INCORRECT-")


def apply_rewrites(
    statements: Sequence[Statement], text: str, known: Iterable[str]
) -> tuple[list[Statement], list[Rejected]]:
    """Apply a `refine` reply to the incorrect statements among `statements`.

    A rewrite of an incorrect statement with text and at least one ref in `known`
    becomes its `text` and `refs`, the first text kept as `original` and the label
    and justification kept. A rewrite with no valid ref, with no text, or of a
    statement that is not incorrect is reported and ignored; the first rewrite of
    an id wins. Statements without a usable rewrite are unchanged.
    """
    allowed = set(known)
    incorrect = {s.id for s in statements if _is_incorrect(s)}
    rewrites: dict[str, tuple[str, tuple[str, ...]]] = {}
    rejected: list[Rejected] = []
    for line in parse_statement_lines(text):
        if line.id not in incorrect:
            rejected.append(Rejected(line.raw, f"{line.id} was not to be rewritten"))
            continue
        if line.id in rewrites:
            rejected.append(Rejected(line.raw, f"{line.id} was already rewritten"))
            continue
        refs, bad = _checked_refs(line, allowed, f"rewrite of {line.id}")
        rejected.extend(bad)
        if not line.text:
            rejected.append(Rejected(line.raw, f"rewrite of {line.id} has no text"))
        elif not refs:
            reason = f"rewrite of {line.id} cites no retrieved source; it stays incorrect"
            rejected.append(Rejected(line.raw, reason))
        else:
            rewrites[line.id] = (line.text, refs)
    refined = []
    for statement in statements:
        if statement.id in rewrites:
            new_text, refs = rewrites[statement.id]
            statement = replace(statement, text=new_text, refs=refs, original=statement.text)
        refined.append(statement)
    return refined, rejected


def is_usable(statement: Statement) -> bool:
    """True for a statement the answer may use: labelled `CORRECT-*`, or refined."""
    if statement.label is None:
        return False
    return statement.label.startswith("CORRECT-") or statement.original is not None


def drop_unsupported(
    statements: Sequence[Statement], passages: Mapping[str, str]
) -> tuple[list[Statement], list[Rejected]]:
    """Return `statements` without the usable ones (`is_usable`) that say what the
    passages they cite do not (`support.support_problem`; `passages` maps refs to
    texts), and those taken out, each with the reason. Incorrect and unverified
    statements are kept: they are shown as such and never used."""
    kept: list[Statement] = []
    removed: list[Rejected] = []
    for statement in statements:
        refs = [ref for ref in statement.refs if ref in passages]
        problem = (
            support_problem(statement.text, refs, [passages[ref] for ref in refs])
            if is_usable(statement)
            else None
        )
        if problem is None:
            kept.append(statement)
        else:
            removed.append(Rejected(statement.text, f"statement {statement.id}: {problem}"))
    return kept, removed


def format_statements(statements: Sequence[Statement]) -> str:
    """Return one `S1: text [REF1][REF2]` line per statement."""
    return "\n".join(
        f"{s.id}: {s.text} {''.join(f'[{ref}]' for ref in s.refs)}" for s in statements
    )


def _user(
    question: str, sources: Sequence[Chunk], *parts: str, units: SourceUnits | None = None
) -> str:
    sources_block = format_sources(sources, units)
    return "\n\n".join([sources_block, f"Question: {question.strip()}", *parts])


def generate_messages(question: str, sources: Sequence[Chunk]) -> tuple[Message, ...]:
    """Stage 1's prompt: one statement per relevant source."""
    return (Message("system", GENERATE_SYSTEM_PROMPT), Message("user", _user(question, sources)))


def verify_messages(
    question: str, sources: Sequence[Chunk], statements: Sequence[Statement]
) -> tuple[Message, ...]:
    """Stage 2's prompt: label every one of `statements`."""
    user = _user(question, sources, "Statements:\n" + format_statements(statements))
    return (Message("system", VERIFY_SYSTEM_PROMPT), Message("user", user))


def refine_messages(
    question: str, sources: Sequence[Chunk], statements: Sequence[Statement]
) -> tuple[Message, ...]:
    """Stage 3's prompt: rewrite `statements` (the incorrect ones), each shown with
    the verifier's label and justification."""
    lines = []
    for statement in statements:
        verdict = str(statement.label)
        if statement.justification:
            verdict += f" — {statement.justification}"
        lines.append(f"{format_statements([statement])}\n   Checker: {verdict}")
    user = _user(question, sources, "Incorrect statements:\n" + "\n".join(lines))
    return (Message("system", REFINE_SYSTEM_PROMPT), Message("user", user))


def answer_messages(
    question: str, sources: Sequence[Chunk], units: SourceUnits, statements: Sequence[Statement]
) -> tuple[Message, ...]:
    """Stage 4's prompt: answer from `statements` (the usable ones) in the protocol,
    the sources' quotable `units` numbered."""
    checked = "Checked statements:\n" + format_statements(statements)
    user = _user(question, sources, checked, units=units)
    return (Message("system", ANSWER_SYSTEM_PROMPT), Message("user", user))


def answer_rationale(session: AnswerSession) -> Answer:
    """Generate rationale statements, verify them, refine the incorrect ones, and
    answer from the usable ones (see the module docstring).

    Returns the resolved answer, or a refusal (`model_no_answer` when the model
    finds no relevant source or declines in stage 4, `nothing_verifiable` when no
    statement is left or usable, or nothing in the final reply resolves); either
    way `statements` and every stage's call are kept. Raises `BackendError` when
    the model fails.
    """
    question = session.question
    session.fit_context(lambda chunks: generate_messages(question, chunks))
    sources = session.sources
    refs = [chunk.ref for chunk in sources] + list(session.fact_refs)
    known = set(refs)

    numbers = [f"S{n}" for n in range(1, len(sources) + 1)]
    generated = session.call(
        "generate",
        generate_messages(question, sources),
        grammar=partial(statement_grammar, refs, numbers, no_answer=True),
    ).text
    statements, rejected = statements_from_reply(generated, known)
    if parse_output(generated).no_answer:
        return session.refuse(MODEL_NO_ANSWER, rejected, statements=statements)
    if not statements:
        return session.refuse(NOTHING_VERIFIABLE, rejected)

    verified = session.call(
        "verify",
        verify_messages(question, sources, statements),
        grammar=partial(verdict_grammar, [s.id for s in statements], list(_LABELS)),
    ).text
    statements = apply_verdicts(statements, parse_verdicts(verified))

    incorrect = [s for s in statements if _is_incorrect(s)]
    if incorrect:
        refined = session.call(
            "refine",
            refine_messages(question, sources, incorrect),
            grammar=partial(statement_grammar, refs, [s.id for s in incorrect], no_answer=False),
        ).text
        statements, bad = apply_rewrites(statements, refined, known)
        rejected.extend(bad)

    passages = {chunk.ref: chunk_passage(chunk) for chunk in sources}
    passages |= fact_passages(session.facts)
    statements, removed = drop_unsupported(statements, passages)
    session.removed_sentences.extend(removed)
    usable = [s for s in statements if is_usable(s)]
    if not usable:
        return session.refuse(NOTHING_VERIFIABLE, rejected, statements=statements)

    units = source_units(sources, session.lookup)
    messages = answer_messages(question, sources, units, usable)
    grammar = partial(cite_grammar, sources, units, session.fact_refs)
    reply = session.call("answer", messages, stream=True, grammar=grammar).text
    return answer_from_reply(
        session,
        reply,
        rejected=rejected,
        statements=statements,
        cited_refs=[ref for s in statements for ref in s.refs],
    )
