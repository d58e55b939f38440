"""The `extractive` backend: no language model, answers with quotes only.

It reads the question and the retrieved sources directly (not the prompt) and
replies in the model-facing protocol with the sentences that answer best, so its
answers go through the same parse and resolve path as a real model's.

Each unit of the sources (`llm.extractive_units`: the quotable units of each
source, and those that run from the end of a source into the next chunk of its
document, quoted from both chunks) is scored on:

- term evidence: how much of the question it shares, each word weighted by rarity;
- meaning, when an embedding model is given: its cosine similarity to the question,
  or to the question without the words its passage label (the document's title)
  and section path already say, whichever is higher (`_focus`: a unit read under a
  title on coping and diabetes need not repeat "diabetes coping" to answer where the
  study's participants were recruited), plus the similarity of its section heading
  and of its whole passage (the retrieved chunk);
- answer form (`llm.answer_form`): a number for "how much", a time for "when"
  lifts it by FORM_WEIGHT; a specific form (`answer_form.specific_form`: a cause for
  "why", a drug amount for a dose, a length of time for a duration, a day's date,
  a month with its year or a clock time for "when"; for "what is X?", being the
  first text under a heading that names just X, as a glossary's term stands over
  its definition) by
  SPECIFIC_FORM_WEIGHT, twice as much: numbers and times stand in most sentences of
  technical text, while a causal connective ("because", "due to") or "200 mg" is
  rare outside the sentences that give a reason or a dose;
- the heading it stands under: when that heading (the last part of its section
  path) holds at least HEADING_SHARE of the question's terms, and no candidate's
  heading holds more, the unit is lifted by HEADING_WEIGHT (the text under "What
  causes sleep apnea?" answers "What causes obstructive sleep apnea?");
- a table row's key: a row whose first cell, a short name (`row_keys.row_key`),
  holds a question term that not every row's first cell of its table holds is lifted
  by ROW_KEY_WEIGHT (the Saturday row of an opening-hours table, for "when does it
  close on Saturday?"); a row is scored with its column names
  (`extractive_units`: "Day: Saturday; Open: 09:00; Close: 17:30");
- what it says beyond the question: a unit with fewer than NEW_WORDS content words
  that the question lacks only repeats the topic ("This article focuses on X") and
  loses GENERIC_PENALTY, as does a statement of what a study set out to do ("The
  objective of this study was to examine X") unless the question asks for an aim;
- the source's rank: lower-ranked sources lose RANK_PENALTY per place.

A unit that puts what the question names outside the document's scope, or leaves it
to another document (`quotable.OUT_OF_SCOPE`: "... are covered by the Trade Terms of
Supply and not by this policy", "... are covered by PV-SOP-007"), holding two
question words the best unit lacks, or a key term or a population the question
names, is lifted just above the best (SCOPE_LIFT): the rule the best unit states
does not cover what was asked, and the answer says so first.

A unit made of the words of its document's title or section heading is no answer,
nor a row of a table that does not list what a question about a price names
(`row_keys.unlisted_rows`: the rows of a dental price list of other treatments, for
"how much does a root canal cost?"), nor one that names a patient population (with
its section heading) other than the one the question asks about (`llm.population`:
the adult dose is no answer to "the dose for children"), nor one that speaks of
ages, none of them the question's (`llm.ages`: the dose for children aged 6 to 8 is
no answer to "the dose for children under 6"), nor one that bounds a measured value
the question bounds, never where the question does (`llm.bounds`: the row for
"30 mL/min or more" is no answer to "below 30 mL/min"), nor one whose passage names months of
a year, none of them the question's (`llm.months`: a November report's row is no
answer to "in December 2015"); a chunk under a reference list's heading has no
units.
Up to MAX_QUOTES units scoring within RELATIVE_CUTOFF of the best are quoted, best
first; when the question asks for a value (`answer_form.VALUE_FORMS`: an amount, a
time, a frequency) and the best unit holds one, a unit without one is not quoted
beside it (a sentence with no number does not answer "how much"); none repeating
another (the same text, one inside another, or the same sentence with one word
changed: the better-ranked is kept, unless the other is a unit quoted from the
sentence before it that holds it); adjacent units of a source are joined, and so are
two that only one sentence of their paragraph parts, with that sentence
(`_with_gaps_filled`). A unit that
does not stand alone is quoted from the sentence before it in its paragraph: one
that opens with a pronoun for what that sentence names ("This is decided by the
nurse in charge"), scored with that sentence too, and, for "why", one that opens by
drawing a consequence ("Therefore, we could not ..."), whose reason that sentence
gives.

The same ranking offers a model its candidates (`ExtractiveChoice.offered`): up to
OFFERED units of one chunk each, best first, none repeating a better one, so that a
model in `quote` mode chooses among the passages this backend found instead of among
every unit (a unit quoted from the sentence before is offered as its own sentence,
the unit a model can point at).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from quoteproof.llm.ages import about_other_ages, age_ranges
from quoteproof.llm.answer_form import (
    VALUE_FORMS,
    answer_kind,
    form_match,
    heading_names_subject,
    specific_form,
)
from quoteproof.llm.base import Capability, Completion, CompletionRequest, TextSink
from quoteproof.llm.bounds import about_other_values, value_bounds
from quoteproof.llm.extractive_units import Candidate, Following, TableRows, candidates_of
from quoteproof.llm.months import about_other_months, months_named
from quoteproof.llm.population import about_another_population, populations
from quoteproof.llm.quotable import OUT_OF_SCOPE, inline_headings
from quoteproof.llm.row_keys import named_rows, unlisted_rows
from quoteproof.model import NO_MODEL_BACKEND, Chunk
from quoteproof.retrieval.key_terms import carries, key_terms
from quoteproof.store.vectors import Vectors
from quoteproof.terms import (
    STOPWORDS,
    declared_names,
    query_stems,
    query_terms,
    renamed,
    stem,
    stems,
    words,
)

MAX_QUOTES = 3
RELATIVE_CUTOFF = 0.1
TERM_WEIGHT = 0.3
SECTION_WEIGHT = 0.3
PASSAGE_WEIGHT = 0.2
FORM_WEIGHT = 0.15
SPECIFIC_FORM_WEIGHT = 0.3
HEADING_WEIGHT = 0.1
HEADING_SHARE = 0.75
GENERIC_PENALTY = 0.1
NEGATION_WEIGHT = 0.1
ROW_KEY_WEIGHT = 0.15
NEW_WORDS = 3
FOCUS_WORDS = 2
RANK_PENALTY = 0.02
SCOPE_LIFT = 0.01
LABEL_SHARE = 0.9
MIN_NEAR_WORDS = 5
SAME_WORDS_SHARE = 0.85
LONG_WORDS = 12
OFFERED = 6

Embed = Callable[[Sequence[str]], Vectors]
"""Texts to unit-length vectors, one row per text (e.g. `Embedder.embed`)."""


def _carried(text: str, names: Mapping[str, str]) -> set[str]:
    """The stems of the words of `text`, and of the other name of each that `names`
    pairs."""
    return stems(text) | {stem(names[w].lower()) for w in words(text) if w in names}


def _term_evidence(
    texts: Sequence[str], terms: set[str], names: Mapping[str, str] | None = None
) -> np.ndarray:
    """For each text, the share (0-1) of the question `terms` it contains, each term
    weighted by its rarity among `texts` (a term every text has counts little); a
    name of a pair `names` declares the same (`terms.declared_names`: "VEKLURY"
    and "remdesivir") carries the other."""
    present = [_carried(text, names or {}) & terms for text in texts]
    weights = {t: np.log(1 + len(texts) / (1 + sum(t in p for p in present))) for t in terms}
    total = sum(weights.values())
    if not total:
        return np.zeros(len(texts))
    return np.array([sum(weights[t] for t in p) / total for p in present])


def _section(chunk: Chunk, start: int) -> str:
    """The section path of the unit at `start` of `chunk`: the chunk's, and the last
    heading line of the chunk's text before the unit (`inline_headings`)."""
    path = " › ".join(chunk.section) or chunk.label
    before = [chunk.text[s:e] for s, e in inline_headings(chunk.text) if e <= start]
    return f"{path} › {before[-1]}" if before else path


def _focus(question: str, context: str) -> str | None:
    """`question` without the words whose content words all stand in `context` (a
    unit's passage label and section path; never a number, so a page number of the
    label drops none), when that drops some and keeps FOCUS_WORDS content words or
    more: what a unit read under that context still has to say ("Through what kind
    of venue were the participants recruited?" of "... were the diabetes coping
    study's participants recruited?" under a title on coping and diabetes); else
    None."""
    known = stems(context)
    kept: list[str] = []
    dropped = False
    for piece in question.split():
        content = [w for w in words(piece) if w not in STOPWORDS]
        if content and all(stem(w) in known and not w[0].isdigit() for w in content):
            dropped = True
        else:
            kept.append(piece)
    left = " ".join(kept)
    content_left = {w for w in words(left) if w not in STOPWORDS}
    return left if dropped and len(content_left) >= FOCUS_WORDS else None


def _heading_match(paths: Sequence[str], terms: set[str]) -> np.ndarray:
    """For each section path, 1.0 when its last part (the heading the unit stands
    under) holds at least HEADING_SHARE of the question `terms` and no path's heading
    holds more; else 0.0."""
    if not terms:
        return np.zeros(len(paths))
    share = np.array([len(stems(path.split(" › ")[-1]) & terms) / len(terms) for path in paths])
    best = share.max(initial=0.0)
    matched: np.ndarray = ((share == best) & (share >= HEADING_SHARE)).astype(float)
    return matched


def _new_words(text: str, terms: set[str]) -> int:
    """How many distinct content words of `text` the question's `terms` lack."""
    return len({stem(w) for w in words(text) if w not in STOPWORDS and not w.isdigit()} - terms)


_STUDY_AIM = re.compile(
    r"\b(?:this|our|the present|the current) (?:study|analysis|paper|report|review|work|"
    r"audit|survey|trial|evaluation|project)\b"
    r"(?:\s+\w+){0,4}?\s+(?:aim|aimed|aims|sought|seeks|set out|was designed|is designed|"
    r"intend(?:s|ed)?|examine[sd]?|explore[sd]?|investigate[sd]?|assess(?:es|ed)?|"
    r"evaluate[sd]?|describe[sd]?|provides?|reports?(?: on)?|focus(?:es|ed)? on)\b|"
    r"\b(?:objective|aim|purpose|goal)s? of (?:this|our|the) (?:study|analysis|paper|report|"
    r"review|work|audit|survey|trial|evaluation|project)\b",
    re.IGNORECASE,
)
"""A sentence that says what a study sets out to do ("The objective of this study was to
examine ...", "This study aimed to identify ..."), not what it found."""
_ASKS_AIM = re.compile(r"\b(?:aims?|purpose|objectives?|goals?|set out|designed)\b", re.I)
"""A question about a study's aim, which such a sentence answers."""
_NEGATION = re.compile(r"\b(?:not|no|never|without|nor|cannot)\b|n't\b", re.IGNORECASE)


def _negated(text: str) -> bool:
    """Whether `text` says something is not so ("not", "no", "without", "never")."""
    return _NEGATION.search(text) is not None


def _only_label(core: str, chunk: Chunk) -> bool:
    """True when at least LABEL_SHARE of the words of `core` are words of the chunk's
    label (its document title and section path): a title or heading, no answer."""
    said = words(core)
    label = set(words(chunk.label)) | {w for part in chunk.section for w in words(part)}
    return bool(said) and sum(w in label for w in said) >= LABEL_SHARE * len(said)


def _forms(question: str, candidates: Sequence[Candidate]) -> tuple[list[bool], bool]:
    """Whether each candidate has the form of answer `question` asks for
    (`answer_form.form_match`; all False when it asks for none), and whether that
    form is a concrete value (`answer_form.VALUE_FORMS`)."""
    kind = answer_kind(question)
    return [form_match(kind, c.core, question) for c in candidates], kind in VALUE_FORMS


def _scores(
    question: str, candidates: Sequence[Candidate], embed: Embed | None, forms: Sequence[bool]
) -> list[float]:
    names = declared_names(dict.fromkeys(c.chunk.label for c in candidates))
    terms = query_stems(question)
    lexical = _term_evidence([c.core for c in candidates], terms, names)
    ranks = np.array([c.rank for c in candidates], dtype=float)
    paths = [_section(c.chunk, c.start) for c in candidates]
    defined = np.array(
        [
            heading_names_subject(question, path.split(" › ")[-1]) and _first_under_heading(c)
            for c, path in zip(candidates, paths, strict=True)
        ]
    )
    form = np.array(
        [
            (SPECIFIC_FORM_WEIGHT if specific_form(question, c.core) else FORM_WEIGHT) * has
            for c, has in zip(candidates, forms, strict=True)
        ]
    )
    form = np.where(defined, SPECIFIC_FORM_WEIGHT, form)
    about_aim = _ASKS_AIM.search(question) is not None
    generic = np.array(
        [
            _new_words(c.core, terms) < NEW_WORDS
            or (not about_aim and _STUDY_AIM.search(c.core) is not None)
            for c in candidates
        ],
        dtype=float,
    )
    negated = np.array([_negated(c.core) for c in candidates], dtype=float) * _negated(question)
    row_key = named_rows(candidates, terms, question)
    heading = _heading_match(paths, terms)
    if embed is None:
        section = _term_evidence(paths, terms)
        semantic = passage = np.zeros(len(candidates))
    else:
        sections = list(dict.fromkeys(paths))
        chunks = list(dict.fromkeys(c.chunk.text for c in candidates))
        other = renamed(question, names)
        asked = question if other is None else f"{question} {other}"
        contexts = [f"{c.chunk.label} {path}" for c, path in zip(candidates, paths, strict=True)]
        focus_in = {context: _focus(asked, context) for context in dict.fromkeys(contexts)}
        focus_of = [
            None if c.table is not None else focus_in[context]
            for c, context in zip(candidates, contexts, strict=True)
        ]
        focuses = list(dict.fromkeys(f for f in focus_of if f is not None))
        vectors = embed([asked, *focuses, *sections, *chunks, *(c.core for c in candidates)])
        units = vectors[1 + len(focuses) + len(sections) + len(chunks) :]
        similarity = vectors[1 + len(focuses) :] @ vectors[0]
        by_section = dict(zip(sections, similarity[: len(sections)], strict=True))
        section = np.array([by_section[path] for path in paths])
        of_chunk = similarity[len(sections) : len(sections) + len(chunks)]
        by_chunk = dict(zip(chunks, of_chunk, strict=True))
        passage = np.array([by_chunk[c.chunk.text] for c in candidates])
        semantic = similarity[len(sections) + len(chunks) :]
        if focuses:
            to_focus = units @ vectors[1 : 1 + len(focuses)].T
            column = {f: k for k, f in enumerate(focuses)}
            semantic = np.array(
                [
                    semantic[i] if f is None else max(semantic[i], to_focus[i, column[f]])
                    for i, f in enumerate(focus_of)
                ]
            )
    scores = (
        semantic
        + TERM_WEIGHT * lexical
        + SECTION_WEIGHT * section
        + PASSAGE_WEIGHT * passage
        + form
        + HEADING_WEIGHT * heading
        + ROW_KEY_WEIGHT * row_key
        + NEGATION_WEIGHT * negated
        - GENERIC_PENALTY * generic
        - RANK_PENALTY * ranks
    )
    if embed is None:  # without a model a unit must share a question word to count
        scores = np.where((lexical > 0) | defined, scores, -np.inf)  # or stand under it
    asked_about, asked_ages = populations(question), age_ranges(question)
    asked_bounds = value_bounds(question)
    asked_months = months_named(question)
    unlisted = unlisted_rows(question, candidates, terms, paths)
    no_answer = np.array(
        [
            _only_label(c.core, c.chunk)
            or about_another_population(asked_about, f"{path} {c.core}")
            or about_other_ages(asked_ages, f"{path} {c.quoted(c.start, c.end)}")
            or about_other_values(asked_bounds, f"{path} {c.core} {c.quoted(c.start, c.end)}")
            or about_other_months(asked_months, f"{c.chunk.label} {path} {c.chunk.text}")
            for c, path in zip(candidates, paths, strict=True)
        ]
    )
    scores = np.where(no_answer | unlisted, -np.inf, scores)
    return [float(s) for s in _out_of_scope_first(question, candidates, scores)]


def _out_of_scope_first(
    question: str, candidates: Sequence[Candidate], scores: np.ndarray
) -> np.ndarray:
    """`scores` with a unit that puts what `question` names outside the document's
    scope (`quotable.OUT_OF_SCOPE`) lifted just above the best, so that the answer says
    first that the rule it quotes does not cover what was asked: a unit that carries
    (`key_terms.carries`) two words of the question that the best unit lacks, or one
    that is a key term or names a population ("trade account" for "How long do trade
    account customers have to return a product?"; "neonatal ... outside the scope of
    this document" for "the loading dose for neonates")."""
    if not np.isfinite(scores).any():
        return scores
    best = int(np.argmax(scores))
    lacking = [t for t in query_terms(question) if not carries(words(candidates[best].core), t)]
    telling = set(key_terms(question)) | {t for t in lacking if populations(t)}
    lifted = scores.copy()
    for i, c in enumerate(candidates):
        if i != best and np.isfinite(scores[i]) and OUT_OF_SCOPE.search(c.core):
            named = {t for t in lacking if carries(words(c.core), t)}
            if len(named) >= 2 or named & telling:
                lifted[i] = scores[best] + SCOPE_LIFT
    return lifted


def near_duplicate(a: str, b: str) -> bool:
    """True when texts `a` and `b` say the same: equal once case and spacing are set
    aside, one inside the other, the same words but one (changed, added or dropped),
    or (for MIN_NEAR_WORDS words or more) sharing SAME_WORDS_SHARE of the longer
    one's words, or of the shorter one's when it has LONG_WORDS or more (a list
    repeated with a few words changed, or with an item more)."""
    wa, wb = words(a), words(b)
    joined_a, joined_b = " ".join(wa), " ".join(wb)
    if joined_a in joined_b or joined_b in joined_a:
        return True
    if min(len(wa), len(wb)) < MIN_NEAR_WORDS:
        return False
    shared = sum((Counter(wa) & Counter(wb)).values())
    shorter = min(len(wa), len(wb))
    if shared >= SAME_WORDS_SHARE * (shorter if shorter >= LONG_WORDS else max(len(wa), len(wb))):
        return True
    if abs(len(wa) - len(wb)) > 1:
        return False
    head = 0
    while head < min(len(wa), len(wb)) and wa[head] == wb[head]:
        head += 1
    tail = 0
    while tail < min(len(wa), len(wb)) - head and wa[-1 - tail] == wb[-1 - tail]:
        tail += 1
    return max(len(wa), len(wb)) - head - tail <= 1


def _choose(
    candidates: Sequence[Candidate], scores: Sequence[float], forms: Sequence[bool]
) -> list[Candidate]:
    """The best candidates within RELATIVE_CUTOFF of the best, at most MAX_QUOTES,
    none overlapping or repeating another (`near_duplicate`), and none without the
    answer's form (`forms`) when the best has it (a sentence with no number does not
    answer "how much"); adjacent ones of a chunk joined, best first."""
    order = sorted(range(len(candidates)), key=lambda i: -scores[i])
    if not order or scores[order[0]] == -np.inf:
        return []
    chosen: list[Candidate] = []
    for i in order:
        c = candidates[i]
        if len(chosen) == MAX_QUOTES or scores[i] < scores[order[0]] - RELATIVE_CUTOFF:
            break
        if forms[order[0]] and not forms[i]:
            continue
        text = c.quoted(c.start, c.end)
        repeated = [
            k
            for k, o in enumerate(chosen)
            if near_duplicate(text, o.quoted(o.start, o.end))
            and not (o.chunk.ref == c.chunk.ref and o.start < c.end and c.start < o.end)
        ]
        if repeated:
            k = repeated[0]
            if _widens(c, chosen[k]):
                chosen[k] = c
            continue
        for j, other in enumerate(chosen):
            if other.chunk.ref == c.chunk.ref and _adjacent(c, other):
                chosen[j] = _joined(c, other)
                break
        else:
            chosen.append(c)
    return _with_gaps_filled(chosen, candidates)


def _adjacent(c: Candidate, other: Candidate) -> bool:
    """Whether units `c` and `other` of one chunk overlap or only spaces stand between
    them."""
    gap = c.chunk.text[min(other.end, c.end) : max(other.start, c.start)]
    return (c.start < other.end and other.start < c.end) or not gap.strip()


_BLANK_LINE = re.compile(r"\n[ \t]*\n")
"""A paragraph break."""


def _one_sentence_between(a: Candidate, b: Candidate, candidates: Sequence[Candidate]) -> bool:
    """Whether the text between units `a` and `b` of one chunk, no table rows, is one
    sentence of their paragraph (no blank line on either side of it): the own sentence
    of a unit of `candidates` (`_plain_sentence`), with only spaces around it."""
    if a.table is not None or b.table is not None:
        return False
    low, high, text = min(a.end, b.end), max(a.start, b.start), a.chunk.text
    if _BLANK_LINE.search(text, low, high):
        return False
    return any(
        _plain_sentence(c, a.chunk.ref)
        and low <= _own_start(c) < c.end <= high
        and not text[low : _own_start(c)].strip()
        and not text[c.end : high].strip()
        for c in candidates
    )


def _own_start(unit: Candidate) -> int:
    """Where `unit`'s own sentence starts (after the sentence before it, when it is
    quoted from that one)."""
    return unit.start if unit.own is None else unit.own


def _plain_sentence(unit: Candidate, ref: str) -> bool:
    """Whether `unit` is a unit of chunk `ref` that is no table row, does not run into
    the next chunk and whose own sentence is no longer than MAX_BEFORE_CHARS."""
    return (
        unit.chunk.ref == ref
        and unit.cut is None
        and unit.table is None
        and unit.end - _own_start(unit) <= MAX_BEFORE_CHARS
    )


def _with_gaps_filled(chosen: list[Candidate], candidates: Sequence[Candidate]) -> list[Candidate]:
    """`chosen` with two units of one chunk that only one sentence of their paragraph
    parts (`_one_sentence_between`) quoted as one, with that sentence: a quote that leaves
    out the sentence between two it shows would read as if they followed each other
    ("... a penalty notice to each parent." then "If the penalty is not paid within 28
    days ...", without "The penalty is £80 ..."). The better-ranked unit's place is
    kept, and a chosen unit the joined one now holds, or that repeats the sentence it
    fills in (`near_duplicate`: an overlapping chunk's copy of that sentence), is
    dropped."""
    for i, first in enumerate(chosen):
        for j in range(i + 1, len(chosen)):
            second = chosen[j]
            if first.chunk.ref == second.chunk.ref and (
                _adjacent(first, second) or _one_sentence_between(first, second, candidates)
            ):
                joined = _joined(second, first)
                whole = " ".join(words(joined.quoted(joined.start, joined.end)))
                low, high = min(first.end, second.end), max(first.start, second.start)
                filled = joined.quoted(low, high) if low < high else ""
                rest = [
                    c
                    for c in chosen[i + 1 : j] + chosen[j + 1 :]
                    if " ".join(words(c.quoted(c.start, c.end))) not in whole
                    and not (filled.strip() and near_duplicate(c.quoted(c.start, c.end), filled))
                ]
                return _with_gaps_filled([*chosen[:i], joined, *rest], candidates)
    return chosen


def _joined(c: Candidate, other: Candidate) -> Candidate:
    """One unit spanning units `c` and `other` of one chunk and the text between them,
    quoted from the longer of their chunks' texts, with `c`'s source rank and
    `other`'s core and header."""
    longer = c if len(c.chunk.text) >= len(other.chunk.text) else other
    return Candidate(
        longer.chunk,
        c.rank,
        min(c.start, other.start),
        max(c.end, other.end),
        other.core,
        other.header,
        longer.cut,
        longer.split,
    )


def _widens(unit: Candidate, other: Candidate) -> bool:
    """True when `unit` is a unit quoted from the sentence before it
    (`_with_sentences_before`) that holds all of `other` in that sentence, while its
    own sentence says more: it stands in for `other` (an overlapping chunk's copy of
    that sentence), so the sentence that answers is not lost as a repeat."""
    if unit.own is None:
        return False
    inside = other.quoted(other.start, other.end)
    whole = " ".join(words(unit.quoted(unit.start, unit.end)))
    return " ".join(words(inside)) in whole and not near_duplicate(
        unit.quoted(unit.own, unit.end), inside
    )


def _heading_above(unit: Candidate) -> tuple[int, int] | None:
    """The span of the heading line inside `unit`'s chunk (`inline_headings`) that it
    stands under; None when no such line comes before it."""
    above = [(s, e) for s, e in inline_headings(unit.chunk.text) if e <= unit.start]
    return above[-1] if above else None


def _first_under_heading(unit: Candidate) -> bool:
    """Whether `unit` (no table row, no unit that runs into the next chunk) is the
    first text under its heading: nothing but blank space between the heading line
    of its chunk it stands under and it, or, with no such line, between the chunk's
    start and it when the chunk's section is a sub-section (its heading is no
    document's title, under which every chunk of an article starts)."""
    if unit.cut is not None or unit.table is not None:
        return False
    heading = _heading_above(unit)
    if heading is None and len(unit.chunk.section) < 2:
        return False
    return not unit.chunk.text[heading[1] if heading else 0 : unit.start].strip()


def _with_defined_term(question: str, unit: Candidate) -> Candidate:
    """`unit` from the line of the heading inside its chunk that it stands under,
    when that heading names just what "what is X?" asks and nothing but blank space
    stands between them (a glossary's term over its definition: "Incident commander"
    / "The on-call engineering manager who ..."); else `unit` as it is."""
    heading = _heading_above(unit)
    if heading is None or not _first_under_heading(unit):
        return unit
    start, end = heading
    if not heading_names_subject(question, unit.chunk.text[start:end]):
        return unit
    return replace(unit, start=start)


_CONSEQUENCE = re.compile(
    r"^\W*(?:therefore|thus(?!\s+far\b)|hence|consequently|accordingly|"
    r"as a result(?!\s+of\b)|"
    r"for (?:this|that|these|those) reasons?|because of (?:this|that)|(?:this|that) is why)\b",
    re.IGNORECASE,
)
"""A sentence that opens by drawing a consequence ("Therefore, we could not measure
...", "For this reason, ..."): the reason for it is in the sentence before."""


_BACK_REFERENCE = re.compile(
    r"^\W*(?:(?:This|That|These|Those)\s+(?:is|was|are|were|has|have|had|means|meant|may|"
    r"might|can|could|will|would|should|must|includes?|included|allows?|allowed)|"
    r"They|He|She)\b(?!,)"
)
"""A sentence that opens with a pronoun standing for what the sentence before names
("This is decided by the nurse in charge.", "They meet monthly."): it does not stand
alone, so it is quoted with that sentence ("This study ..." names its own subject;
"That is, ..." explains; "HE staining" is no pronoun)."""
MAX_BEFORE_CHARS = 400
"""The longest sentence before that a unit is quoted with (not a lead-in with its list)."""


def _sentence_before(unit: Candidate, candidates: Sequence[Candidate]) -> Candidate | None:
    """The unit just before `unit` in its paragraph (a unit of `candidates` of the
    same chunk, no table row, no longer than MAX_BEFORE_CHARS, with nothing but spaces
    or one line break between them), for a `unit` that is no table row and does not
    run into the next chunk; else None."""
    text = unit.chunk.text
    if unit.cut is not None or unit.table is not None:
        return None
    before = [
        c
        for c in candidates
        if _plain_sentence(c, unit.chunk.ref)
        and c.end <= unit.start
        and not text[c.end : unit.start].strip()
        and text.count("\n", c.end, unit.start) < 2
    ]
    return max(before, key=lambda c: (c.end, c.start), default=None)


def _needs_sentence_before(question: str, unit: Candidate) -> bool:
    """True when `unit` does not stand alone: it opens with a pronoun for what the
    sentence before names (`_BACK_REFERENCE`), or, when `question` asks why, by
    drawing a consequence whose reason that sentence gives (`_CONSEQUENCE`)."""
    opening = unit.chunk.text[unit.start :]
    if _BACK_REFERENCE.match(opening):
        return True
    return answer_kind(question) == "cause" and _CONSEQUENCE.match(opening) is not None


def _with_sentences_before(question: str, candidates: Sequence[Candidate]) -> list[Candidate]:
    """`candidates` with each unit that does not stand alone (`_needs_sentence_before`:
    "This is decided by ...", or "Therefore, we could not measure ..." for a why
    question) quoted from the sentence before it (`_sentence_before`). One that opens
    with a pronoun (`_BACK_REFERENCE`) is also scored with that sentence (its core is
    that sentence's core and its own), since what "this" is is said there; one that
    draws a consequence keeps its own core. `_choose` then joins and drops repeats as
    for any unit."""
    widened = []
    for c in candidates:
        before = _sentence_before(c, candidates) if _needs_sentence_before(question, c) else None
        if before is None:
            widened.append(c)
            continue
        refers = _BACK_REFERENCE.match(c.chunk.text[c.start :]) is not None
        core = f"{before.core} {c.core}" if refers else c.core
        widened.append(replace(c, start=before.start, core=core, own=c.start))
    return widened


def best_unit_similarity(
    question: str, sources: Sequence[Chunk], embed: Embed, table_rows: TableRows | None = None
) -> float:
    """The highest cosine similarity between `question` and one quotable unit of
    `sources` (the units `choose_extractive` chooses among); 0.0 when none has one."""
    cores = [c.core for c in candidates_of(sources, table_rows)]
    if not cores:
        return 0.0
    vectors = embed([question, *cores])
    return float(np.max(vectors[1:] @ vectors[0]))


@dataclass(frozen=True)
class ExtractiveChoice:
    """The no-model answer to a question over given sources, and the units it ranked
    best."""

    reply: str
    """The protocol reply quoting the chosen units (`<no-answer/>` when none qualifies)."""
    offered: tuple[tuple[str, int, int], ...]
    """The best-scoring units, best first, as (ref, start, end) spans of their source's
    text: up to OFFERED, none repeating a better one (`near_duplicate`); empty when no
    unit qualifies."""


def _offered(candidates: Sequence[Candidate], scores: Sequence[float]) -> list[Candidate]:
    """Up to OFFERED of `candidates` by score, best first, none with a score of -inf
    and none repeating a better one."""
    offered: list[Candidate] = []
    for i in sorted(range(len(candidates)), key=lambda i: -scores[i]):
        c = candidates[i]
        if len(offered) == OFFERED or scores[i] == -np.inf:
            break
        if c.cut is not None:  # a model points at units of one chunk
            continue
        text = c.quoted(c.start, c.end)
        if not any(near_duplicate(text, o.quoted(o.start, o.end)) for o in offered):
            offered.append(c)
    return offered


def choose_extractive(
    question: str,
    sources: Sequence[Chunk],
    embed: Embed | None = None,
    table_rows: TableRows | None = None,
    following: Following | None = None,
) -> ExtractiveChoice:
    """Return the units of `sources` that answer `question` best (see the module
    docstring) as a protocol reply, and the units offered to a model.
    `table_rows` gives each source's table rows (each row a unit of its own);
    `following` the chunk after a source, for units that run into it."""
    units = candidates_of(sources, table_rows, following)
    candidates = _with_sentences_before(question, units)
    forms, valued = _forms(question, candidates)
    scores = _scores(question, candidates, embed, forms) if candidates else []
    chosen = [
        _with_defined_term(question, c)
        for c in _choose(candidates, scores, forms if valued else [False] * len(candidates))
    ]
    offered = tuple((c.chunk.ref, c.start, c.end) for c in _offered(units, scores))
    if not chosen:
        return ExtractiveChoice("<no-answer/>", offered)
    quotes = []  # a laid-out table's header line once, before its first chosen row
    for c in chosen:
        spans = [c.header, (c.start, c.end)] if c.header else [(c.start, c.end)]
        quotes += [f'<quote ref="{c.chunk.ref}">{c.quoted(s, e)}</quote>' for s, e in spans]
    return ExtractiveChoice("\n".join(dict.fromkeys(quotes)), offered)


class ExtractiveBackend:
    """A `Backend` that needs no model server: quotes the best-matching sentences
    (and table rows, where `table_rows` gives them, and sentences and lists that run
    into the next chunk, where `following` gives it), ranked with `embed` (an
    embedding model) when given, else by shared words."""

    name = NO_MODEL_BACKEND
    model: str | None = None
    server: str | None = None
    capabilities: frozenset[Capability] = frozenset()

    def __init__(
        self,
        embed: Embed | None = None,
        table_rows: TableRows | None = None,
        following: Following | None = None,
    ) -> None:
        self.embed = embed
        self.table_rows = table_rows
        self.following = following

    def excess_tokens(self, request: CompletionRequest) -> int:
        """0: the context window is not known here."""
        return 0

    def complete(self, request: CompletionRequest) -> Completion:
        """Answer `request.question` from `request.sources` with quotes only."""
        choice = choose_extractive(
            request.question, request.sources, self.embed, self.table_rows, self.following
        )
        return Completion(text=choice.reply, model=None)

    def stream(self, request: CompletionRequest, on_text: TextSink) -> Completion:
        """Like `complete`; `on_text` is called once, with the whole reply."""
        completion = self.complete(request)
        on_text(completion.text)
        return completion
