"""Faithfulness of an answer: the share of its claims that the passages they cite
support (as RAGAS defines faithfulness), with a verdict per claim.

A claim is one generated sentence the model wrote for the answer: each prose
sentence shown (with the refs it cites), and each generated sentence or rationale
statement that was taken out (`Answer.removed_sentences`: it cited nothing, or said
what its passages do not), which counts as unsupported. Quotes are not claims:
they are the source's own words, read from the store.

Two methods (`FaithfulnessMethod`):

- `model` (the default): the answering backend judges every shown sentence that
  cites a passage in one extra call (`FAITHFULNESS_SYSTEM_PROMPT`;
  grammar-constrained for backends that take a grammar): `C1: SUPPORTED — why` or
  `C1: UNSUPPORTED — why`. The call is recorded in `Answer.calls` (stage
  `faithfulness`) and its tokens in `Answer.usage`; no call is made when no shown
  sentence cites a passage (quotes only, a refusal). A sentence the model gives no
  verdict for keeps its deterministic verdict (`checked_by` says so), and when the
  call fails every sentence does, with a notice; a verdict is never guessed.
- `deterministic` (asked for, and always for an answer made without a language
  model, whatever was asked): each shown sentence is checked by `quoting.support`
  against the passages it cites (numbers with their units, dates, names, negation).
  No model call; it costs microseconds per sentence.

It never changes what is shown: segments, quotes and cited passages stay as they
are. Pure functions but for the one model call; O(length of the claims and of the
passages they cite).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from quoteproof.errors import BackendError
from quoteproof.llm.base import Backend, CompletionRequest
from quoteproof.llm.capability import Capability
from quoteproof.model import (
    Answer,
    ClaimVerdict,
    Faithfulness,
    FaithfulnessMethod,
    Message,
    ModelCall,
    ProseSegment,
)
from quoteproof.quoting.grammar import verdict_grammar
from quoteproof.quoting.prompt import escape_source_text
from quoteproof.quoting.support import data_passage, support_problem

__all__ = [
    "FAITHFULNESS_SYSTEM_PROMPT",
    "NO_CITATION",
    "STAGE",
    "assess",
    "claim_text",
    "deterministic_verdicts",
    "judge_messages",
    "parse_judgements",
    "passages_of",
]

STAGE = "faithfulness"
"""The stage name of the model's judging call in `Answer.calls`."""
NO_CITATION = "it cites no passage of the answer"
LABELS = ("SUPPORTED", "UNSUPPORTED")
TOKENS_PER_VERDICT = 100
"""The judging reply's token budget per claim (a label and a short justification)."""

FAITHFULNESS_SYSTEM_PROMPT = """\
You check whether claims are supported by the passages they cite. Each passage is \
wrapped in <source ref="REF"> ... </source>. Each claim is numbered (C1, C2, ...) and \
ends with the refs of the passages it cites.

A claim is SUPPORTED when everything it says is stated in, or follows directly from, \
the passages it cites. Otherwise it is UNSUPPORTED: it adds, changes or contradicts \
something (a number, a name, a date, a negation, a cause, a comparison).

Reply with one line per claim, in order, each with the label and one short sentence \
saying why, and nothing else:
C1: SUPPORTED — justification
"""

_JUDGEMENT = re.compile(
    r"""\A\s*(?:[-*]\s*)?\[?C(?P<num>\d{1,4})\]?\s*[:.)\-–—]?\s*
    [*"'\[]*(?P<label>unsupported|not\s+supported|supported)\b[*"'\]]*
    \s*(?:[-–—:|,;.]+\s*)?(?P<why>.*?)\s*\Z""",
    re.IGNORECASE | re.VERBOSE,
)


def passages_of(answer: Answer) -> dict[str, str]:
    """The texts a claim of `answer` may cite, by ref: each cited passage (its label
    and verbatim text, as `support.chunk_passage` gives a chunk), each data result
    (`support.data_passage`) and each fact (`subject relation object`)."""
    passages = {quote.ref: f"{quote.label}\n{quote.text}" for quote in answer.cited}
    passages |= {result.id: data_passage(result) for result in answer.data}
    passages |= {f.id: f"{f.subject} {f.relation} {f.object}" for f in answer.facts}
    return passages


def _shown_claims(answer: Answer) -> list[tuple[int, ProseSegment]]:
    """The generated sentences shown, with their place in `segments` (none in a
    refusal, whose sentence is quoteproof's)."""
    if answer.status == "refused":
        return []
    return [
        (i, s)
        for i, s in enumerate(answer.segments)
        if isinstance(s, ProseSegment) and s.text.strip()
    ]


def claim_text(answer: Answer, claim: ClaimVerdict) -> str:
    """The generated sentence `claim` is about (the text of its prose segment)."""
    segment = answer.segments[claim.segment]
    return segment.text if isinstance(segment, ProseSegment) else ""


def _deterministic(place: int, segment: ProseSegment, passages: Mapping[str, str]) -> ClaimVerdict:
    refs = tuple(ref for ref in dict.fromkeys(segment.citations) if ref in passages)
    if not refs:
        return ClaimVerdict(place, (), False, NO_CITATION, "deterministic")
    problem = support_problem(segment.text, refs, [passages[ref] for ref in refs])
    return ClaimVerdict(place, refs, problem is None, problem, "deterministic")


def deterministic_verdicts(answer: Answer) -> list[ClaimVerdict]:
    """The deterministic verdict on every generated sentence `answer` shows, in order."""
    passages = passages_of(answer)
    return [_deterministic(i, segment, passages) for i, segment in _shown_claims(answer)]


def judge_messages(
    claims: Sequence[tuple[str, tuple[str, ...]]], passages: Mapping[str, str]
) -> list[Message]:
    """The judging call's prompt for `claims`, each (sentence, refs): the passages
    they cite (each once, in order of first citation) and the claims numbered `C1`,
    `C2`, ..."""
    refs = list(dict.fromkeys(ref for _, cited in claims for ref in cited))
    sources = "\n\n".join(
        f'<source ref="{ref}">\n{escape_source_text(passages[ref])}\n</source>' for ref in refs
    )
    lines = [
        f"C{n}: {' '.join(text.split())} {''.join(f'[{ref}]' for ref in cited)}"
        for n, (text, cited) in enumerate(claims, start=1)
    ]
    user = f"{sources}\n\nClaims:\n" + "\n".join(lines)
    return [Message("system", FAITHFULNESS_SYSTEM_PROMPT), Message("user", user)]


def parse_judgements(text: str) -> dict[int, tuple[bool, str | None]]:
    """The verdicts in a judging reply by claim number: (supported, justification).
    Tolerates bullets, brackets, any case, `NOT SUPPORTED`, and `—`, `-`, `:` or no
    separator before the justification; a line without a label is ignored and the
    first verdict for a number wins. Never raises; O(len(text))."""
    found: dict[int, tuple[bool, str | None]] = {}
    for line in text.splitlines():
        m = _JUDGEMENT.match(line.replace("**", ""))
        if m is None:
            continue
        number = int(m.group("num"))
        supported = m.group("label").lower() == "supported"
        found.setdefault(number, (supported, m.group("why") or None))
    return found


def _judged(
    answer: Answer, backend: Backend, claims: list[ClaimVerdict]
) -> tuple[list[ClaimVerdict], Answer]:
    """`claims` judged by `backend` (those with a cited passage), and `answer` with
    the call recorded. Raises `BackendError` when the model fails."""
    passages = passages_of(answer)
    asked = [i for i, claim in enumerate(claims) if claim.refs]
    if not asked:
        return claims, answer
    messages = judge_messages(
        [(claim_text(answer, claims[i]), claims[i].refs) for i in asked], passages
    )
    ids = [f"C{n}" for n in range(1, len(asked) + 1)]
    grammar = (
        verdict_grammar(ids, LABELS) if Capability.CONSTRAINED in backend.capabilities else None
    )
    request = CompletionRequest(
        tuple(messages),
        answer.question,
        (),
        max_tokens=TOKENS_PER_VERDICT * len(asked),
        grammar=grammar,
    )
    completion = backend.complete(request)
    judgements = parse_judgements(completion.text)
    judged = list(claims)
    for number, index in enumerate(asked, start=1):
        if number in judgements:
            supported, why = judgements[number]
            reason = None if supported else (why or "the model found it unsupported")
            judged[index] = replace(
                claims[index], supported=supported, reason=reason, checked_by="model"
            )
    missing = sum(n not in judgements for n in range(1, len(asked) + 1))
    call = ModelCall(
        STAGE,
        tuple(messages),
        completion.text,
        problems=(f"no verdict for {missing} claim(s)",) if missing else (),
        usage=completion.usage,
    )
    usage = answer.usage
    if completion.usage is not None:
        usage = completion.usage if usage is None else usage + completion.usage
    return judged, replace(answer, calls=(*answer.calls, call), usage=usage)


def assess(answer: Answer, backend: Backend, method: FaithfulnessMethod) -> Answer:
    """Return `answer` with its `faithfulness`: every claim's verdict by `method`
    (`deterministic` when `backend` is no language model, or when the model judged
    no claim: none cites a passage, or its reply gave no verdict) and the share supported
    (None when it makes no claim). With `model`, a failed judging call keeps the
    deterministic verdicts and adds a notice. Segments and quotes are unchanged."""
    claims = deterministic_verdicts(answer)
    if method == "model" and Capability.MODEL not in backend.capabilities:
        method = "deterministic"
    if method == "model":
        try:
            claims, answer = _judged(answer, backend, claims)
        except BackendError as exc:
            notice = (
                f"the faithfulness check used the deterministic checks: the model failed ({exc})"
            )
            answer = replace(answer, notices=(*answer.notices, notice))
    if not any(claim.checked_by == "model" for claim in claims):
        method = "deterministic"  # nothing was judged by the model: say what checked
    removed = len(answer.removed_sentences)
    total = len(claims) + removed
    score = sum(claim.supported for claim in claims) / total if total else None
    return replace(answer, faithfulness=Faithfulness(method, score, tuple(claims), removed))
