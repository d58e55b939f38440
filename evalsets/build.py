#!/usr/bin/env python3
"""Build quoteproof's evaluation sets (``evalsets/*.jsonl``) from the public data sets.

Every set it writes is derived by rule from ``../shared/data`` (and, for
``demo.jsonl``, from ``examples/corpus``); nothing is typed by hand. (``labels.jsonl``,
the one hand-written set, is not built here; ``--corpora`` writes its corpus.)
The build is deterministic: random choices come from ``random.Random`` seeded with
fixed strings, inputs are read in sorted order, and rerunning it writes
byte-identical files (as long as quoteproof's ingestion gives the same canonical
text and chunks).

Sets (formats: ``evalsets/README.md``):

``recovery.jsonl``
    Approximate quotes of passages of the FDA Veklury label and the CDC outpatient
    guide. Both PDFs are ingested into a temporary index (``embed=False``); canonical
    text and chunks are quoteproof's own. A passage is a window of 1 to 3 sentences
    (``quoteproof.ingest.chunking.sentence_spans``, i.e. sentencex) of 8 to 60 words
    that lies inside one chunk (the first chunk whose span covers its start), reads
    as prose (see ``_good_sentence``) and occurs once in its document. Passages are
    drawn evenly over each document (one per stretch of the candidate list). Each
    gets 1 to 3 edits a model makes when quoting (``EDIT_KINDS``); each edit must
    change the text. The ``expect: "none"`` cases pair a target chunk (``start``/
    ``end`` = the chunk's span, ``gold`` = its text, ``edits`` = ``[]``) with a fluent
    passage from the other PDF or from a MedQuAD answer about a condition neither PDF
    names, of which fewer than a third of the content words occur in the target chunk
    and its neighbours. Then cases of two kinds a resolver of one chunk at a time
    misses. ``crosses_chunks``: a passage from the last 1 to 3 sentences of a chunk to
    the first 1 to 3 sentences of the next one (adjacent, not overlapping windows),
    quoted as a model writes it: the two parts joined by a space, leaving out what lies
    between the chunks (a heading, page furniture), which ``gold`` keeps; every
    sentence of the quote reads as prose and the quote has 8 to 60 words. ``invented_tail``:
    a passage as above, edited, followed by one sentence that is not in the source (a
    one-sentence foreign passage chosen as for the ``none`` cases); ``start``/``end``
    are the real passage, which is all that may be shown.

``demo.jsonl``
    Questions over ``examples/corpus``, which is ingested into a temporary index.
    Answerable: (1) MedQuAD's own questions of the MedQuAD-derived corpus files
    (``examples/build_corpus.py`` writes each QA pair as a question heading and its
    answer paragraphs): ``gold_refs`` is the file, ``gold_quotes`` the answer text,
    located in the canonical text right after its question; a question asked in
    several sections or files gets all of them. Questions whose focus is a page title
    containing "?" are left out (their text is garbled). (2) The sample questions of
    ``examples/calibration.jsonl`` (answerable ones) and ``examples/questions.txt``
    whose source a lexical rule finds (``sample_sources``): ``gold_refs`` only.
    Unanswerable: MedQuAD questions whose focus (the whole name and each of its main
    words, see ``focus_words``) occurs in no document of the demo corpus; one per
    focus, drawn in turn from each MedQuAD subset. Their ids name the MedQuAD
    question: ``demo-unanswerable/<subset>/<qid>``.

``scifact.jsonl``
    The BEIR SciFact test queries (``benchmarks/scifact.py`` loads them) with the
    abstracts of their test qrels as ``gold_refs`` (``scifact/<doc id>.txt``).

``pubmedqa.jsonl``
    PubMedQA PQA-L: each question, its own abstract as ``gold_refs``
    (``pubmedqa/<pmid>.txt``) and its long answer as ``gold_answer``.

Usage::

    python evalsets/build.py                 # write every set
    python evalsets/build.py --only demo     # write one set (repeatable)
    python evalsets/build.py --check         # exit 1 when a committed set differs
    python evalsets/build.py --corpora DIR   # only write DIR/{scifact,pubmedqa,labels}/
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import math
import random
import re
import shutil
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from quoteproof import Index
from quoteproof.ingest.chunking import sentence_spans
from quoteproof.model import Chunk, Document

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _load_module(name: str, path: Path) -> ModuleType:
    """Import a script of the repository (not a package) by its file path."""
    spec = importlib.util.spec_from_file_location(f"_evalsets_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


SCIFACT = _load_module("scifact", REPO / "benchmarks" / "scifact.py")
BUILD_CORPUS = _load_module("build_corpus", REPO / "examples" / "build_corpus.py")

DATA: Path = SCIFACT.SCIFACT.parent
"""The public data root (``../shared/data``), as the benchmarks find it."""

DEMO_CORPUS = REPO / "examples" / "corpus"
MEDQUAD = DATA / "medquad"

PDFS: tuple[tuple[str, str], ...] = (
    ("fda", "fda-remdesivir-label/veklury_remdesivir_label_oct2020.pdf"),
    ("cdc", "pdfs-medical/cdc_outpatient_infection_prevention_guide_v2.3_2016.pdf"),
)
"""The recovery PDFs: a short tag (used in case ids) and the path under ``DATA``."""

LABEL_PDFS = (
    *(rel for _, rel in PDFS),
    "pdfs-medical/who_ipc_core_components_guidelines_2016.pdf",
)
"""The corpus of the hand-written ``labels.jsonl``, under ``DATA``."""

SET_NAMES = ("recovery", "demo", "scifact", "pubmedqa")

SPAN_CASES_PER_PDF = 320
NONE_CASES_PER_PDF = 40
CROSS_CASES_PER_PDF = 20
PARTIAL_CASES_PER_PDF = 10
CROSSES_CHUNKS = "crosses_chunks"
INVENTED_TAIL = "invented_tail"
"""Marks, in `edits`, of a quote over a chunk boundary and of one with an invented tail."""
MIN_WORDS, MAX_WORDS = 8, 60
UNANSWERABLE_PROBES = 40

EDIT_KINDS = (
    "typo",
    "punctuation",
    "case",
    "whitespace",
    "dropped_word",
    "swapped_words",
    "ellipsis",
    "smart_quotes",
    "changed_number",
)
"""Edit kinds in the order they are applied to a passage."""

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during
    each either else ever every few for from further had has have having he her here
    hers him his how however i if in into is it its itself just may me might more most
    much must my no nor not now of off on once one only or other our out over own per
    same shall she should so some such than that the their them then there these they
    this those through thus to too under until up upon very via was we were what when
    where whether which while who whom whose why will with within without would yet you
    your
    """.split()
)
"""Function words: left out of content words and of question terms."""

GENERIC_FOCUS_WORDS = frozenset(
    "disease diseases disorder disorders syndrome syndromes type types condition conditions".split()
)
"""Words of a MedQuAD focus too generic to say what it is about (see `focus_words`)."""

Record = dict[str, Any]


# --- shared helpers --------------------------------------------------------------------


def content_words(text: str) -> list[str]:
    """Lower-case words of at least three letters of `text` that are not function words."""
    return [w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3 and w not in STOPWORDS]


def clean_question(question: str) -> str:
    """MedQuAD's question with its template's stray spaces and doubled marks removed
    (``"Who is at risk for Shingles? ?"`` -> ``"Who is at risk for Shingles?"``)."""
    question = re.sub(r"\s+", " ", question).strip()
    question = re.sub(r"\s+\?", "?", question)
    return re.sub(r"\?{2,}", "?", question)


_LINE_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""Characters other than CR and LF that `str.splitlines` breaks lines at."""


def to_jsonl(records: Iterable[Record]) -> str:
    """One compact JSON object per line, ending with a newline. Text is kept as UTF-8,
    except characters that `str.splitlines` takes for line breaks (U+2028...), which
    are written as JSON escapes so that any way of splitting lines reads one object
    per line."""
    lines = (json.dumps(r, ensure_ascii=False) for r in records)
    return "".join(
        _LINE_BREAKS.sub(lambda m: f"\\u{ord(m.group()):04x}", line) + "\n" for line in lines
    )


@dataclass(frozen=True)
class IngestedDocument:
    """One document of a temporary index: its current version and its chunks."""

    document: Document
    chunks: tuple[Chunk, ...]


@contextmanager
def ingested(paths: Sequence[Path]) -> Iterator[dict[Path, IngestedDocument]]:
    """Ingest `paths` (files or folders) into a temporary index without vectors and
    yield `{file path: IngestedDocument}`; the index is deleted afterwards."""
    with tempfile.TemporaryDirectory(prefix="quoteproof-evalsets-") as tmp:
        index = Index.open(Path(tmp) / "index", create=True)
        try:
            results = index.ingest(list(paths), embed=False)
            out: dict[Path, IngestedDocument] = {}
            for result in results:
                if result.doc_id is None or result.version is None:
                    raise RuntimeError(f"ingesting {result.path} failed: {result.error}")
                document = index.store.get_document(result.doc_id, result.version)
                if document is None:
                    raise RuntimeError(f"{result.path} is missing from the index")
                chunks = index.store.chunks_of(result.doc_id, result.version)
                out[Path(result.path)] = IngestedDocument(document, tuple(chunks))
            yield out
        finally:
            index.close()


# --- MedQuAD ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MedQuADQuestion:
    """One answered MedQuAD question with the focus of its document."""

    subset: str
    qid: str
    qtype: str
    question: str
    answer: str
    focus: str


def read_medquad_file(path: Path) -> list[MedQuADQuestion]:
    """The answered questions of one MedQuAD XML file, in file order."""
    root = ET.parse(path).getroot()
    focus = re.sub(r"\s+", " ", root.findtext("Focus") or "").strip()
    out = []
    for pair in root.iter("QAPair"):
        question = pair.find("Question")
        answer = (pair.findtext("Answer") or "").strip()
        if question is None or not (question.text or "").strip() or not answer:
            continue
        out.append(
            MedQuADQuestion(
                subset=path.parent.name,
                qid=question.get("qid", ""),
                qtype=question.get("qtype", ""),
                question=clean_question(question.text or ""),
                answer=answer,
                focus=focus,
            )
        )
    return out


def medquad_subsets() -> list[Path]:
    """The MedQuAD subset folders, in name order."""
    return sorted(p for p in MEDQUAD.iterdir() if p.is_dir())


def read_medquad(subsets: Iterable[Path]) -> list[MedQuADQuestion]:
    """Every answered question of the given subset folders (files in name order)."""
    return [
        q for folder in subsets for p in sorted(folder.glob("*.xml")) for q in read_medquad_file(p)
    ]


def word_set(texts: Iterable[str]) -> frozenset[str]:
    """The lower-case alphabetic words of `texts`."""
    return frozenset(w for text in texts for w in re.findall(r"[a-z]+", text.lower()))


def focus_words(focus: str) -> list[str]:
    """The main words of a MedQuAD focus: its words of three or more letters that are
    neither function words nor generic ones (``disease``, ``syndrome``...)."""
    return [w for w in content_words(focus) if w not in GENERIC_FOCUS_WORDS]


class CorpusWords:
    """What `focus_absent` looks a focus up in: texts, lower-cased, and the prefixes
    (up to six letters) of their words."""

    PREFIX = 6

    def __init__(self, texts: Iterable[str]) -> None:
        self.texts = [text.lower() for text in texts]
        self.prefixes = frozenset(
            word[:k] for word in word_set(self.texts) for k in range(1, self.PREFIX + 1)
        )

    def has_word(self, word: str) -> bool:
        """Whether a word of the texts begins with `word`'s first six letters (all of
        them when shorter: ``hepatitis`` ~ ``hepatic``); errs towards present."""
        return word.lower()[: self.PREFIX] in self.prefixes

    def focus_absent(self, focus: str) -> bool:
        """Whether neither the whole focus name (ignoring case) nor any of its main
        words (`focus_words`, `has_word`) occurs in the texts. A focus without main
        words is never absent."""
        words = focus_words(focus)
        if not words:
            return False
        name = focus.lower()
        return not any(name in text for text in self.texts) and not any(
            self.has_word(w) for w in words
        )


# --- recovery.jsonl --------------------------------------------------------------------

_FURNITURE = re.compile(
    r"Reference ID|Version \d|Yes No|Variable Data|https?:|www\.|\.gov|\.pdf|❑|•"
)
_SECTION_REF = re.compile(r"\(\d+(?:\.\d+)*\)")


def _good_sentence(text: str) -> bool:
    """Whether a sentence reads as prose a model would quote: at least three words, a
    capital or digit first, a full stop (or ? !) last, mostly words rather than
    numbers, a function word and mostly lower-case words (so not a title, a reference
    or a list of headings), at most one full stop inside, every line at least two
    words long, and no page furniture, addresses, bullets or check boxes."""
    words = text.split()
    if len(words) < 3 or _FURNITURE.search(text):
        return False
    if not (text[0].isupper() or text[0].isdigit()):
        return False
    last = text.rstrip(")]”’\"'")
    if not last or last[-1] not in ".!?":
        return False
    if sum(any(c.isalpha() for c in w) for w in words) < 0.75 * len(words):
        return False
    if not any(w in STOPWORDS for w in words):
        return False
    if sum(w[0].islower() for w in words[1:]) < len(words[1:]) / 2:
        return False
    if sum(w.endswith(".") for w in words[:-1]) > 1:
        return False
    return all(len(line.split()) >= 2 for line in text.split("\n") if line.strip())


_LIST_MARKER = re.compile(
    r"(?:[•❑]\s*|Yes\s+No\s+(?:Not\s+applicable\s+)?|(?:[A-Za-z]|\d{1,2})\.\s+)+"
)


def _unmarked(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence `text[start:end]` without the list marks it begins with (bullets,
    check boxes, ``B.`` or ``2.`` item labels, a checklist's ``Yes No`` boxes): a model
    quoting a list item leaves them out."""
    marker = _LIST_MARKER.match(text, start, end)
    return (marker.end(), end) if marker else (start, end)


@dataclass(frozen=True)
class Passage:
    """A candidate passage: `text[start:end]` of a document, inside `chunk`."""

    start: int
    end: int
    chunk: int


def first_covering(chunks: Sequence[Chunk], offset: int) -> int | None:
    """Position in `chunks` of the first chunk whose span covers `offset`."""
    for i, chunk in enumerate(chunks):
        if chunk.start <= offset < chunk.end:
            return i
    return None


def candidate_passages(doc: IngestedDocument) -> list[Passage]:
    """Every passage of `doc` fit for a recovery case, in document order: 1 to 3
    consecutive good sentences (`_good_sentence`, leading list marks left out) of one
    chunk, 8 to 60 words, with no furniture between them, inside the first chunk that
    covers its start, and occurring once in the document."""
    text = doc.document.text
    seen: set[tuple[int, int]] = set()
    out = []
    for position, chunk in enumerate(doc.chunks):
        spans = [_unmarked(text, s, e) for s, e in sentence_spans(text, chunk.start, chunk.end)]
        good = [_good_sentence(text[s:e]) for s, e in spans]
        for i in range(len(spans)):
            for n in (1, 2, 3):
                if i + n > len(spans) or not all(good[i : i + n]):
                    continue
                start, end = spans[i][0], spans[i + n - 1][1]
                passage = text[start:end]
                if not MIN_WORDS <= len(passage.split()) <= MAX_WORDS or (start, end) in seen:
                    continue
                if _FURNITURE.search(passage):  # between the sentences: a bullet, a page
                    continue
                if first_covering(doc.chunks, start) != position or text.count(passage) != 1:
                    continue
                seen.add((start, end))
                out.append(Passage(start, end, position))
    return sorted(out, key=lambda p: (p.start, p.end))


def spread(items: Sequence[Any], n: int, rng: random.Random) -> list[Any]:
    """Pick `n` items spread over `items`: one at random from each of `n` equal,
    consecutive stretches (all of them when there are at most `n`)."""
    if len(items) <= n:
        return list(items)
    return [items[rng.randrange(len(items) * k // n, len(items) * (k + 1) // n)] for k in range(n)]


# Edits. Each takes the current text and a random source and returns the edited text,
# or None when it does not apply (nothing to change).

_TOKEN = re.compile(r"\S+")
_SHORT_WORDS = frozenset(
    "a an the of to in on at by for and or is are was be as it its that with from".split()
)


def _replace(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def edit_typo(text: str, rng: random.Random) -> str | None:
    """Swap two neighbouring letters, drop a letter or double one, in a word of five
    or more letters (never its first letter)."""
    words = list(re.finditer(r"\b[A-Za-z]{5,}\b", text))
    if not words:
        return None
    word = rng.choice(words)
    w = word.group()
    i = rng.randrange(1, len(w) - 1)
    kind = rng.choice(("swap", "drop", "double"))
    if kind == "swap" and w[i] != w[i + 1]:
        new = w[:i] + w[i + 1] + w[i] + w[i + 2 :]
    elif kind == "drop":
        new = w[:i] + w[i + 1 :]
    else:
        new = w[:i] + w[i] + w[i:]
    return _replace(text, word.start(), word.end(), new)


def edit_punctuation(text: str, rng: random.Random) -> str | None:
    """Drop a comma or semicolon, or turn one into the other."""
    marks = [m.start() for m in re.finditer(r"[,;]", text)]
    if not marks:
        return None
    at = rng.choice(marks)
    if rng.random() < 0.6:
        return _replace(text, at, at + 1, "")
    return _replace(text, at, at + 1, ";" if text[at] == "," else ",")


def edit_case(text: str, rng: random.Random) -> str | None:
    """Lower-case the first word, or capitalise a lower-case word of four or more
    letters."""
    options: list[Callable[[], str]] = []
    first = _TOKEN.search(text)
    if first and first.group() != first.group().lower():
        options.append(lambda: _replace(text, first.start(), first.end(), first.group().lower()))
    lower = [m for m in re.finditer(r"(?<![\w-])[a-z]{4,}\b", text) if m.start() > 0]
    if lower:
        word = rng.choice(lower)
        options.append(lambda: _replace(text, word.start(), word.end(), word.group().capitalize()))
    return rng.choice(options)() if options else None


def edit_whitespace(text: str, rng: random.Random) -> str | None:
    """Join the passage's line breaks into spaces, or turn a space into a line break
    or a double space."""
    options: list[Callable[[], str]] = []
    if "\n" in text:
        options.append(lambda: re.sub(r"\s*\n\s*", " ", text))
    spaces = [m.start() for m in re.finditer(r"(?<=\S) (?=\S)", text)]
    if spaces:
        at = rng.choice(spaces)
        options.append(lambda: _replace(text, at, at + 1, "\n"))
        options.append(lambda: _replace(text, at, at + 1, "  "))
    return rng.choice(options)() if options else None


def edit_dropped_word(text: str, rng: random.Random) -> str | None:
    """Drop one short function word (``the``, ``of``, ``and``...), not the first."""
    tokens = list(_TOKEN.finditer(text))
    short = [t for t in tokens[1:] if t.group().lower() in _SHORT_WORDS]
    if not short:
        return None
    token = rng.choice(short)
    end = token.end()
    while end < len(text) and text[end] == " ":
        end += 1
    return _replace(text, token.start(), end, "")


def edit_swapped_words(text: str, rng: random.Random) -> str | None:
    """Swap two neighbouring words (plain words, different, one space apart)."""
    tokens = list(_TOKEN.finditer(text))
    pairs = [
        (a, b)
        for a, b in itertools.pairwise(tokens)
        if a.group().isalpha()
        and b.group().isalpha()
        and a.group().lower() != b.group().lower()
        and text[a.end() : b.start()] == " "
    ]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return _replace(text, a.start(), b.end(), f"{b.group()} {a.group()}")


def edit_ellipsis(text: str, rng: random.Random) -> str | None:
    """Replace a stretch of at least four words in the middle (not the first two nor
    the last two words, at most a third of the passage) by ``...`` or ``…``."""
    tokens = list(_TOKEN.finditer(text))
    n = len(tokens)
    if n < 12:
        return None
    length = rng.randint(4, max(4, n // 3))
    first = rng.randint(2, n - 2 - length)
    mark = rng.choice(("...", "…"))
    return _replace(text, tokens[first].start(), tokens[first + length - 1].end(), mark)


def edit_smart_quotes(text: str, rng: random.Random) -> str | None:
    """Straighten curly quotes and apostrophes or curl straight ones; turn a hyphen
    into an en dash or en dashes into hyphens."""
    options: list[Callable[[], str]] = []
    if "’" in text or "‘" in text:
        options.append(lambda: text.replace("’", "'").replace("‘", "'"))
    if "“" in text or "”" in text:
        options.append(lambda: text.replace("“", '"').replace("”", '"'))
    if "'" in text:
        options.append(lambda: text.replace("'", "’"))
    if '"' in text:
        options.append(lambda: re.sub(r'"([^"]*)"', r"“\1”", text))
    if "–" in text:
        options.append(lambda: text.replace("–", "-"))
    hyphens = [m.start() for m in re.finditer(r"(?<=\w)-(?=\w)", text)]
    if hyphens:
        at = rng.choice(hyphens)
        options.append(lambda: _replace(text, at, at + 1, "–"))
    return rng.choice(options)() if options else None


def edit_changed_number(text: str, rng: random.Random) -> str | None:
    """Change one digit of a number (not of a section reference such as ``(5.1)``)."""
    refs = [range(m.start(), m.end()) for m in _SECTION_REF.finditer(text)]
    numbers = [
        m for m in re.finditer(r"\d+(?:[.,]\d+)*", text) if not any(m.start() in r for r in refs)
    ]
    if not numbers:
        return None
    number = rng.choice(numbers)
    digits = [i for i, c in enumerate(number.group()) if c.isdigit()]
    i = rng.choice(digits)
    old = number.group()[i]
    choices = [d for d in "0123456789" if d != old and not (d == "0" and i == 0)]
    new = number.group()[:i] + rng.choice(choices) + number.group()[i + 1 :]
    return _replace(text, number.start(), number.end(), new)


EDITS: dict[str, Callable[[str, random.Random], str | None]] = {
    "typo": edit_typo,
    "punctuation": edit_punctuation,
    "case": edit_case,
    "whitespace": edit_whitespace,
    "dropped_word": edit_dropped_word,
    "swapped_words": edit_swapped_words,
    "ellipsis": edit_ellipsis,
    "smart_quotes": edit_smart_quotes,
    "changed_number": edit_changed_number,
}


def edit_passage(gold: str, rng: random.Random, used: dict[str, int]) -> tuple[str, list[str]]:
    """Apply 1 to 3 different edits to `gold` (in `EDIT_KINDS` order); every edit must
    change the text. Kinds are drawn among those that apply to `gold`, each with weight
    1 / (1 + times used so far), so that kinds that apply to few passages are not
    starved; `used` is updated. Returns the edited text and the kinds applied."""
    usable = [k for k in EDIT_KINDS if EDITS[k](gold, random.Random(0)) not in (None, gold)]
    for _ in range(100):
        count = rng.choices((1, 2, 3), weights=(4, 4, 2))[0]
        pool = list(usable)
        kinds: list[str] = []
        while pool and len(kinds) < count:
            kind = rng.choices(pool, weights=[1 / (1 + used.get(k, 0)) for k in pool])[0]
            pool.remove(kind)
            kinds.append(kind)
        kinds.sort(key=EDIT_KINDS.index)
        text: str | None = gold
        for kind in kinds:
            assert text is not None
            edited = EDITS[kind](text, rng)
            text = edited if edited is not None and edited != text else None
            if text is None:
                break
        if text is not None and text != gold:
            for kind in kinds:
                used[kind] = used.get(kind, 0) + 1
            return text, kinds
    raise RuntimeError(f"no edit applies to {gold!r}")


def _foreign_passages(texts: Iterable[str]) -> list[str]:
    """Good passages (1 to 3 sentences, 8 to 60 words, whitespace collapsed) of `texts`."""
    out = []
    for text in texts:
        spans = sentence_spans(text, 0, len(text))
        for i in range(len(spans)):
            for n in (1, 2, 3):
                if i + n > len(spans):
                    break
                parts = [text[s:e] for s, e in spans[i : i + n]]
                if not all(_good_sentence(p) for p in parts):
                    break
                passage = re.sub(r"\s+", " ", " ".join(parts))
                if MIN_WORDS <= len(passage.split()) <= MAX_WORDS:
                    out.append(passage)
    return out


def overlap_share(passage: str, vocabulary: frozenset[str]) -> float:
    """Share of the content words of `passage` (with repeats) that occur in `vocabulary`."""
    words = content_words(passage)
    return sum(w in vocabulary for w in words) / len(words) if words else 1.0


@dataclass(frozen=True)
class CrossPassage:
    """A passage over a chunk boundary: `text[start:end]` runs from the last sentences
    of one chunk, over what lies between the chunks, into the next chunk; `quoted` is
    the two parts joined by a space, as a model quoting it writes it."""

    start: int
    end: int
    quoted: str


def _reads_as_prose(passage: str) -> bool:
    """Whether every sentence of `passage` is `_good_sentence`, it has `MIN_WORDS` to
    `MAX_WORDS` words and no page furniture."""
    if not MIN_WORDS <= len(passage.split()) <= MAX_WORDS or _FURNITURE.search(passage):
        return False
    return all(_good_sentence(passage[s:e]) for s, e in sentence_spans(passage, 0, len(passage)))


def cross_passages(doc: IngestedDocument) -> list[CrossPassage]:
    """Every passage of `doc` over a chunk boundary fit for a recovery case, in document
    order: the last 1 to 3 sentences of a chunk (leading list marks left out) and the
    first 1 to 3 of the next, when the two chunks do not overlap, each part occurs once
    in the document and the joined quote `_reads_as_prose`."""
    text = doc.document.text
    out = []
    for first, second in itertools.pairwise(doc.chunks):
        if second.start < first.end:  # overlapping windows: such a passage lies in one
            continue
        tails = [_unmarked(text, s, e) for s, e in sentence_spans(text, first.start, first.end)]
        heads = [_unmarked(text, s, e) for s, e in sentence_spans(text, second.start, second.end)]
        for k, m in itertools.product((1, 2, 3), (1, 2, 3)):
            if k > len(tails) or m > len(heads):
                continue
            tail = text[tails[-k][0] : tails[-1][1]]
            head = text[heads[0][0] : heads[m - 1][1]]
            quoted = f"{tail} {head}"
            if text.count(tail) == 1 and text.count(head) == 1 and _reads_as_prose(quoted):
                out.append(CrossPassage(tails[-k][0], heads[m - 1][1], quoted))
    return out


def foreign_passage(
    pool: Sequence[str], doc: IngestedDocument, position: int, rng: random.Random
) -> str:
    """A passage of `pool` drawn at random of which fewer than a third of the content
    words occur in chunk `position` of `doc` and its neighbours, and which does not
    occur in the document."""
    seen = doc.chunks[max(0, position - 1) : position + 2]
    vocabulary = word_set(c.text for c in seen)
    for _ in range(1000):
        foreign = rng.choice(pool)
        if overlap_share(foreign, vocabulary) < 1 / 3 and foreign not in doc.document.text:
            return foreign
    raise RuntimeError(f"no foreign passage for chunk {position} of {doc.document.source_path}")


def _span_record(
    case_id: str, source: str, text: str, start: int, end: int, edited: str, edits: list[str]
) -> Record:
    return {
        "id": case_id,
        "source": source,
        "start": start,
        "end": end,
        "gold": text[start:end],
        "edited": edited,
        "edits": edits,
        "expect": "span",
    }


def boundary_cases(
    docs: dict[str, IngestedDocument], foreign_pools: dict[str, list[str]]
) -> list[Record]:
    """The `crosses_chunks` and `invented_tail` cases (module docstring), per PDF.
    `foreign_pools` gives each PDF's one-sentence foreign passages."""
    records: list[Record] = []
    used: dict[str, int] = {}
    for tag, rel in PDFS:
        doc = docs[tag]
        text = doc.document.text
        rng = random.Random(f"recovery-boundary/{tag}")
        for i, cross in enumerate(spread(cross_passages(doc), CROSS_CASES_PER_PDF, rng)):
            edited, kinds = edit_passage(cross.quoted, rng, used)
            case_id = f"recovery-{tag}-cross-{i + 1:02d}"
            edits = [*kinds, CROSSES_CHUNKS]
            records.append(_span_record(case_id, rel, text, cross.start, cross.end, edited, edits))
        passages = spread(candidate_passages(doc), PARTIAL_CASES_PER_PDF, rng)
        for i, passage in enumerate(passages):
            edited, kinds = edit_passage(text[passage.start : passage.end], rng, used)
            invented = foreign_passage(foreign_pools[tag], doc, passage.chunk, rng)
            case_id = f"recovery-{tag}-partial-{i + 1:02d}"
            records.append(
                _span_record(
                    case_id,
                    rel,
                    text,
                    passage.start,
                    passage.end,
                    f"{edited} {invented}",
                    [*kinds, INVENTED_TAIL],
                )
            )
    return records


def _one_sentence(passage: str) -> bool:
    return len(sentence_spans(passage, 0, len(passage))) == 1


def build_recovery() -> list[Record]:
    """The quote-recovery cases (module docstring)."""
    paths = [DATA / rel for _, rel in PDFS]
    with ingested(paths) as docs_by_path:
        docs = {tag: docs_by_path[DATA / rel] for tag, rel in PDFS}
    pdf_words = CorpusWords(d.document.text for d in docs.values())
    medquad_texts = [
        q.answer
        for q in read_medquad([MEDQUAD / "3_GHR_QA"])
        if q.qtype == "information" and pdf_words.focus_absent(q.focus)
    ]
    medquad_pool = _foreign_passages(medquad_texts)
    records: list[Record] = []
    used: dict[str, int] = {}
    foreign_pools: dict[str, list[str]] = {}
    for tag, rel in PDFS:
        doc = docs[tag]
        text = doc.document.text
        rng = random.Random(f"recovery/{tag}")
        for i, passage in enumerate(spread(candidate_passages(doc), SPAN_CASES_PER_PDF, rng)):
            gold = text[passage.start : passage.end]
            edited, kinds = edit_passage(gold, rng, used)
            case_id = f"recovery-{tag}-{i + 1:03d}"
            records.append(
                _span_record(case_id, rel, text, passage.start, passage.end, edited, kinds)
            )
        other = next(d for t, d in docs.items() if t != tag)
        other_pool = [
            re.sub(r"\s+", " ", other.document.text[p.start : p.end])
            for p in candidate_passages(other)
        ]
        targets = [
            (position, chunk)
            for position, chunk in enumerate(doc.chunks)
            if len(chunk.text.split()) >= 40 and first_covering(doc.chunks, chunk.start) == position
        ]
        for i, (position, chunk) in enumerate(spread(targets, NONE_CASES_PER_PDF, rng)):
            pool = other_pool if i % 2 == 0 else medquad_pool
            foreign = foreign_passage(pool, doc, position, rng)
            records.append(
                {
                    "id": f"recovery-{tag}-none-{i + 1:02d}",
                    "source": rel,
                    "start": chunk.start,
                    "end": chunk.end,
                    "gold": text[chunk.start : chunk.end],
                    "edited": foreign,
                    "edits": [],
                    "expect": "none",
                }
            )
        foreign_pools[tag] = [p for p in other_pool + medquad_pool if _one_sentence(p)]
    return records + boundary_cases(docs, foreign_pools)


# --- demo.jsonl ------------------------------------------------------------------------


def _stem(word: str) -> str:
    return word[:5]


def _terms(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def sample_sources(
    question: str, sentences: Sequence[tuple[str, set[str]]], titles: dict[str, set[str]]
) -> list[str]:
    """The documents that answer a sample question, by a lexical rule (empty: none found).

    Question terms are its words of three or more characters that are not function
    words, cut to five letters (a crude stem), each weighted by its IDF over the
    corpus sentences. A document's score is the weighted share of the terms that its
    best sentence holds. The best document (ties broken by the weighted share of the
    terms in its title) answers when its score is at least 0.6 and no other document
    ties with it; so does any other document scoring at least 0.6 whose title terms
    all occur in the question (a document about the question's topic).
    """
    words = [w for w in re.findall(r"[a-z0-9]+", question.lower()) if w not in STOPWORDS]
    terms = {_stem(w) for w in words if len(w) >= 3}
    counts: dict[str, int] = {}
    for _, sentence in sentences:
        for t in terms & sentence:
            counts[t] = counts.get(t, 0) + 1
    weight = {t: math.log(len(sentences) / (1 + counts.get(t, 0))) for t in terms}
    total = sum(weight.values())
    if total <= 0:
        return []
    best: dict[str, float] = {}
    for ref, sentence in sentences:
        share = round(sum(weight[t] for t in terms & sentence) / total, 6)
        best[ref] = max(best.get(ref, 0.0), share)
    ranked = sorted(
        ((share, round(sum(weight[t] for t in terms & titles[ref]) / total, 6), ref))
        for ref, share in best.items()
    )
    top = ranked[-1]
    if top[0] < 0.6 or (len(ranked) > 1 and ranked[-2][:2] == top[:2]):
        return []
    on_topic = [
        ref
        for share, _, ref in reversed(ranked[:-1])
        if share >= 0.6 and titles[ref] and titles[ref] <= _terms(question)
    ]
    return [top[2], *on_topic]


def _sample_questions() -> list[str]:
    """The answerable questions of ``examples/calibration.jsonl``, then the lines of
    ``examples/questions.txt`` (whose answerability the rule decides)."""
    examples = REPO / "examples"
    calibration = [json.loads(line) for line in (examples / "calibration.jsonl").open()]
    questions = [item["question"] for item in calibration if item["answerable"]]
    lines = (examples / "questions.txt").read_text(encoding="utf-8").splitlines()
    return questions + [line.strip() for line in lines if line.strip()]


def _medquad_items(docs: dict[str, IngestedDocument]) -> list[Record]:
    """Answerable items from MedQuAD's own questions of the corpus files."""
    mappings = [(xml, f"medquad/{name}", "## ") for xml, name in BUILD_CORPUS.MEDQUAD_MARKDOWN]
    mappings += [(xml, name, "") for xml, name in BUILD_CORPUS.MEDQUAD_TEXT]
    grouped: dict[str, tuple[list[str], list[str]]] = {}
    for xml, ref, heading in mappings:
        source = BUILD_CORPUS.read_medquad(MEDQUAD / xml)
        text = docs[ref].document.text
        cursor = 0
        for pair in source.pairs:
            answer = "\n\n".join(pair.answer_lines)
            located = text.find(f"{heading}{pair.question}\n\n{answer}", cursor)
            if located < 0:
                raise RuntimeError(f"{ref}: cannot find the answer to {pair.question!r}")
            start = located + len(heading) + len(pair.question) + 2
            cursor = start + len(answer)
            if "?" in source.focus:
                continue
            refs, quotes = grouped.setdefault(clean_question(pair.question), ([], []))
            if ref not in refs:
                refs.append(ref)
            if text[start:cursor] not in quotes:
                quotes.append(text[start:cursor])
    return [
        {
            "id": f"demo-medquad-{i + 1:03d}",
            "question": question,
            "answerable": True,
            "gold_refs": refs,
            "gold_quotes": quotes,
        }
        for i, (question, (refs, quotes)) in enumerate(grouped.items())
    ]


def _sample_items(docs: dict[str, IngestedDocument]) -> list[Record]:
    """Answerable items from the sample questions whose source `sample_sources` finds."""
    sentences: list[tuple[str, set[str]]] = []
    titles: dict[str, set[str]] = {}
    for ref, doc in sorted(docs.items()):
        if doc.document.format not in ("markdown", "text", "html", "pdf") or ref == "SOURCES.md":
            continue
        titles[ref] = _terms(doc.document.title)
        text = doc.document.text
        for chunk in doc.chunks:
            for s, e in sentence_spans(text, chunk.start, chunk.end):
                sentences.append((ref, _terms(text[s:e])))
    items: list[Record] = []
    for question in _sample_questions():
        refs = sample_sources(question, sentences, titles)
        if refs:
            items.append(
                {
                    "id": f"demo-sample-{len(items) + 1:02d}",
                    "question": question,
                    "answerable": True,
                    "gold_refs": refs,
                }
            )
    return items


def unanswerable_probes(texts: Sequence[str], n: int) -> list[MedQuADQuestion]:
    """`n` MedQuAD questions whose focus is absent from `texts` (`focus_absent`), one per
    focus, taken in turn from each subset (shuffled with a fixed seed)."""
    corpus = CorpusWords(texts)
    rng = random.Random("demo/unanswerable")
    queues: list[list[MedQuADQuestion]] = []
    for folder in medquad_subsets():
        by_focus: dict[str, list[MedQuADQuestion]] = {}
        for q in read_medquad([folder]):
            if q.qtype in ("information", "symptoms", "treatment", "causes", "prevention"):
                by_focus.setdefault(q.focus.lower(), []).append(q)
        foci = [
            f
            for f in sorted(by_focus)
            if len(f.split()) <= 5 and "?" not in f and corpus.focus_absent(f)
        ]
        rng.shuffle(foci)
        queues.append([rng.choice(by_focus[f]) for f in foci])
    chosen: list[MedQuADQuestion] = []
    used: set[str] = set()
    while len(chosen) < n and any(queues):
        for queue in queues:
            while queue and queue[0].focus.lower() in used:
                queue.pop(0)
            if queue and len(chosen) < n:
                chosen.append(queue.pop(0))
                used.add(chosen[-1].focus.lower())
    return chosen


def build_demo() -> list[Record]:
    """The demo questions (module docstring)."""
    # SOURCES.md is named: a folder walk skips it (a README-type file), and the
    # unanswerable probes are chosen absent from it too, as when it was ingested.
    with ingested([DEMO_CORPUS, DEMO_CORPUS / "SOURCES.md"]) as by_path:
        docs = {path.relative_to(DEMO_CORPUS).as_posix(): doc for path, doc in by_path.items()}
    records = _medquad_items(docs) + _sample_items(docs)
    texts = [doc.document.text for _, doc in sorted(docs.items())]
    for probe in unanswerable_probes(texts, UNANSWERABLE_PROBES):
        records.append(
            {
                "id": f"demo-unanswerable/{probe.subset}/{probe.qid}",
                "question": probe.question,
                "answerable": False,
            }
        )
    return records


# --- scifact.jsonl, pubmedqa.jsonl and their corpora -------------------------------------


def build_scifact() -> list[Record]:
    """The BEIR SciFact test queries with their relevant abstracts."""
    queries: dict[str, str] = SCIFACT.queries()
    qrels: dict[str, dict[str, int]] = SCIFACT.test_qrels()
    return [
        {
            "id": f"scifact-{qid}",
            "question": queries[qid],
            "answerable": True,
            "gold_refs": [
                f"scifact/{doc}.txt" for doc in sorted(qrels[qid], key=int) if qrels[qid][doc] > 0
            ],
        }
        for qid in sorted(qrels, key=int)
    ]


def _pubmedqa() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "pubmedqa" / "ori_pqal.json").read_text("utf-8"))
    return data


def build_pubmedqa() -> list[Record]:
    """The PubMedQA PQA-L questions, each answered by its own abstract."""
    return [
        {
            "id": f"pubmedqa-{pmid}",
            "question": item["QUESTION"],
            "answerable": True,
            "gold_refs": [f"pubmedqa/{pmid}.txt"],
            "gold_answer": item["LONG_ANSWER"],
        }
        for pmid, item in _pubmedqa().items()
    ]


def _write_text(path: Path, text: str) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write(text)


def write_corpora(root: Path) -> dict[str, int]:
    """Write the corpora of the SciFact, PubMedQA and labels sets under `root`:
    ``scifact/<doc id>.txt`` (title, blank line, abstract), ``pubmedqa/<pmid>.txt``
    (the abstract's sections, blank lines between) and ``labels/*.pdf`` (copies of
    `LABEL_PDFS`). Existing files are replaced. Returns the number of files written
    per corpus."""
    counts = {}
    folder = root / "labels"
    folder.mkdir(parents=True, exist_ok=True)
    for rel in LABEL_PDFS:
        shutil.copyfile(DATA / rel, folder / Path(rel).name)
    counts["labels"] = len(LABEL_PDFS)
    folder = root / "scifact"
    folder.mkdir(parents=True, exist_ok=True)
    corpus: dict[str, tuple[str, str]] = SCIFACT.corpus()
    for doc_id, (title, abstract) in corpus.items():
        _write_text(folder / f"{doc_id}.txt", f"{title}\n\n{abstract}\n")
    counts["scifact"] = len(corpus)
    folder = root / "pubmedqa"
    folder.mkdir(parents=True, exist_ok=True)
    items = _pubmedqa()
    for pmid, item in items.items():
        _write_text(folder / f"{pmid}.txt", "\n\n".join(item["CONTEXTS"]) + "\n")
    counts["pubmedqa"] = len(items)
    return counts


BUILDERS: dict[str, Callable[[], list[Record]]] = {
    "recovery": build_recovery,
    "demo": build_demo,
    "scifact": build_scifact,
    "pubmedqa": build_pubmedqa,
}


def build(name: str) -> str:
    """The JSONL text of set `name`."""
    return to_jsonl(BUILDERS[name]())


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--only", action="append", choices=SET_NAMES, help="build only this set (repeatable)"
    )
    parser.add_argument(
        "--check", action="store_true", help="rebuild in memory; exit 1 if a committed set differs"
    )
    parser.add_argument(
        "--corpora",
        type=Path,
        metavar="DIR",
        help="write the SciFact, PubMedQA and labels corpora under DIR",
    )
    parser.add_argument(
        "--out-dir", type=Path, default=HERE, help="where the sets are (default: evalsets/)"
    )
    args = parser.parse_args(argv)
    if args.corpora is not None:
        for name, count in write_corpora(args.corpora).items():
            print(f"{count:>6}  {args.corpora / name}")
        return 0
    status = 0
    for name in args.only or SET_NAMES:
        began = time.perf_counter()
        text = build(name)
        path = args.out_dir / f"{name}.jsonl"
        lines = text.count("\n")
        took = time.perf_counter() - began
        if args.check:
            same = path.exists() and path.read_bytes() == text.encode("utf-8")
            print(f"{'ok' if same else 'DIFFERS':>7}  {path}  ({lines} lines, {took:.1f} s)")
            status |= 0 if same else 1
        else:
            _write_text(path, text)
            print(f"{lines:>6}  {path}  ({took:.1f} s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
