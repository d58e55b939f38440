"""The committed evaluation sets (`evalsets/*.jsonl`): their formats, and the contract
that a recovery case's `gold` is quoteproof's canonical text `[start:end]`."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from quoteproof import Index
from quoteproof.model import Chunk

REPO = Path(__file__).resolve().parent.parent
EVALSETS = REPO / "evalsets"
DATA = REPO.parent / "shared" / "data"
DEMO_CORPUS = REPO / "examples" / "corpus"
QUESTION_SETS = (
    "demo",
    "labels",
    "scifact",
    "pubmedqa",
    "nurse",
    "demo-answers",
    "articles",
    "articles-held",
    "articles-held2",
    "articles-held3",
    "articles-held4",
    "articles-held5",
)
QUESTION_FIELDS = {
    "id",
    "question",
    "answerable",
    "gold_refs",
    "gold_quotes",
    "gold_answer",
    "type",
}
RECOVERY_FIELDS = {"id", "source", "start", "end", "gold", "edited", "edits", "expect"}
EDIT_KINDS = {
    "typo",
    "punctuation",
    "case",
    "whitespace",
    "dropped_word",
    "swapped_words",
    "ellipsis",
    "smart_quotes",
    "changed_number",
}
QUOTE_KINDS = {"crosses_chunks", "invented_tail"}

needs_data = pytest.mark.skipif(not DATA.exists(), reason="shared data not present")


def read(name: str) -> list[dict[str, Any]]:
    lines = (EVALSETS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def build() -> ModuleType:
    """`evalsets/build.py`, imported (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("evalsets_build", EVALSETS / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _ingest(root: Path, paths: list[Path]) -> dict[str, tuple[str, list[Chunk]]]:
    """`{source path: (canonical text, chunks)}` of `paths` ingested without vectors."""
    out = {}
    with Index.open(root, create=True) as index:
        for result in index.ingest(paths, embed=False):
            assert result.doc_id is not None and result.version is not None, result.error
            document = index.store.get_document(result.doc_id, result.version)
            assert document is not None
            out[result.path] = (document.text, index.store.chunks_of(result.doc_id, result.version))
    return out


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, list[Chunk]]]:
    """The recovery PDFs as quoteproof ingests them, keyed by path under the data root."""
    sources = sorted({case["source"] for case in read("recovery")})
    ingested = _ingest(tmp_path_factory.mktemp("recovery"), [DATA / s for s in sources])
    return {s: ingested[str(DATA / s)] for s in sources}


@pytest.fixture(scope="module")
def demo_corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`{path relative to examples/corpus: canonical text}` of the demo corpus."""
    ingested = _ingest(tmp_path_factory.mktemp("demo"), [DEMO_CORPUS])
    return {
        Path(path).relative_to(DEMO_CORPUS).as_posix(): text for path, (text, _) in ingested.items()
    }


# --- every set -------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*QUESTION_SETS, "recovery"])
def test_ids_are_unique(name: str) -> None:
    ids = [item["id"] for item in read(name)]
    assert all(isinstance(i, str) and i for i in ids)
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", QUESTION_SETS)
def test_question_sets_follow_the_format(name: str) -> None:
    for item in read(name):
        assert set(item) <= QUESTION_FIELDS and {"id", "question", "answerable"} <= set(item)
        assert isinstance(item["question"], str) and item["question"].strip()
        assert isinstance(item["answerable"], bool)
        for field in ("gold_refs", "gold_quotes"):
            if field in item:
                assert item[field] and all(isinstance(v, str) and v for v in item[field])
        if "gold_answer" in item:
            assert isinstance(item["gold_answer"], str) and item["gold_answer"]
        if not item["answerable"]:
            assert "gold_refs" not in item and "gold_quotes" not in item


def test_recovery_follows_the_format() -> None:
    for case in read("recovery"):
        assert set(case) == RECOVERY_FIELDS
        assert isinstance(case["start"], int) and isinstance(case["end"], int)
        assert 0 <= case["start"] < case["end"]
        assert case["expect"] in ("span", "none")
        assert set(case["edits"]) <= EDIT_KINDS | QUOTE_KINDS


# --- recovery.jsonl --------------------------------------------------------------------


def test_recovery_counts() -> None:
    cases = read("recovery")
    spans = [c for c in cases if c["expect"] == "span"]
    assert len(spans) >= 600
    assert sum(c["expect"] == "none" for c in cases) >= 60
    per_source = Counter(c["source"] for c in spans)
    assert set(per_source) == {
        "fda-remdesivir-label/veklury_remdesivir_label_oct2020.pdf",
        "pdfs-medical/cdc_outpatient_infection_prevention_guide_v2.3_2016.pdf",
    }
    assert min(per_source.values()) >= 200
    kinds = Counter(k for c in spans for k in c["edits"])
    assert set(kinds) == EDIT_KINDS | QUOTE_KINDS
    assert min(kinds[k] for k in EDIT_KINDS) >= 30
    assert min(kinds[k] for k in QUOTE_KINDS) >= 20
    assert not any(set(c["edits"]) >= QUOTE_KINDS for c in spans)


def test_recovery_edits_change_the_passage() -> None:
    for case in read("recovery"):
        assert case["edited"] != case["gold"], case["id"]
        if case["expect"] == "span":
            edits = [k for k in case["edits"] if k in EDIT_KINDS]
            assert 1 <= len(edits) <= 3 and len(set(case["edits"])) == len(case["edits"])
            if "changed_number" in case["edits"]:
                assert re.search(r"\d", case["gold"]), case["id"]
            crosses = "crosses_chunks" in case["edits"]
            words = len(case["gold" if not crosses else "edited"].split())
            assert 8 <= words <= 60, case["id"]
        else:
            assert case["edits"] == []


@needs_data
def test_recovery_gold_is_the_canonical_text(
    pdfs: dict[str, tuple[str, list[Chunk]]],
) -> None:
    """The contract: for every case, `gold == canonical_text[start:end]`; a `span`
    passage lies inside the first chunk covering `start`, except a `crosses_chunks`
    one, which ends in the next chunk (leaving out what lies between them); a `none`
    case's span is a chunk; an `invented_tail` quote holds a sentence the source lacks."""
    for case in read("recovery"):
        text, chunks = pdfs[case["source"]]
        assert text[case["start"] : case["end"]] == case["gold"], case["id"]
        position = next(i for i, c in enumerate(chunks) if c.start <= case["start"] < c.end)
        covering = chunks[position]
        if "crosses_chunks" in case["edits"]:
            following = chunks[position + 1]
            assert covering.end <= following.start < case["end"] <= following.end, case["id"]
            assert text[covering.end : following.start] not in case["edited"], case["id"]
            continue
        assert case["end"] <= covering.end, case["id"]
        if "invented_tail" in case["edits"]:
            tail = " ".join(case["edited"].split()[-5:])
            assert tail not in " ".join(text.split()), case["id"]
        if case["expect"] == "none":
            assert (covering.start, covering.end) == (case["start"], case["end"]), case["id"]


@needs_data
def test_recovery_none_cases_are_foreign_to_their_chunk(
    build: ModuleType, pdfs: dict[str, tuple[str, list[Chunk]]]
) -> None:
    """Fewer than a third of a `none` quote's content words occur in the target chunk
    and its neighbours (what a resolver is given)."""
    for case in read("recovery"):
        if case["expect"] != "none":
            continue
        text, chunks = pdfs[case["source"]]
        position = next(i for i, c in enumerate(chunks) if c.start == case["start"])
        seen = " ".join(c.text for c in chunks[max(0, position - 1) : position + 2]).lower()
        vocabulary = set(re.findall(r"[a-z]+", seen))
        words = [
            w
            for w in re.findall(r"[a-z]+", case["edited"].lower())
            if len(w) >= 3 and w not in build.STOPWORDS
        ]
        assert words and sum(w in vocabulary for w in words) < len(words) / 3, case["id"]
        assert case["edited"] not in text


# --- demo.jsonl ------------------------------------------------------------------------


def _medquad_question(item_id: str) -> tuple[str, str]:
    """The (question, focus) of the MedQuAD question an unanswerable probe names."""
    _, subset, qid = item_id.split("/")
    root = ET.parse(DATA / "medquad" / subset / f"{qid.rsplit('-', 1)[0]}.xml").getroot()
    question = next(q for q in root.iter("Question") if q.get("qid") == qid)
    return question.text or "", root.findtext("Focus") or ""


@needs_data
def test_demo_unanswerable_probes_are_absent_from_the_corpus(
    build: ModuleType, demo_corpus: dict[str, str]
) -> None:
    probes = [item for item in read("demo") if not item["answerable"]]
    assert len(probes) >= 30
    texts = [text.lower() for text in demo_corpus.values()]
    foci = set()
    for item in probes:
        assert item["id"].startswith("demo-unanswerable/")
        question, focus = _medquad_question(item["id"])
        assert item["question"] == build.clean_question(question)
        words = build.focus_words(focus)
        assert words, focus
        for text in texts:
            assert focus.lower() not in text, focus
            for word in words:
                assert not re.search(rf"\b{re.escape(word[:6])}", text), (focus, word)
        foci.add(focus.lower())
    assert len(foci) == len(probes)


@needs_data
def test_demo_gold_quotes_are_verbatim(demo_corpus: dict[str, str]) -> None:
    answerable = [item for item in read("demo") if item["answerable"]]
    assert sum("gold_quotes" in item for item in answerable) >= 40
    for item in answerable:
        refs = item["gold_refs"]
        assert all(sum(p.endswith(r) for p in demo_corpus) == 1 for r in refs), item["id"]
        for quote in item.get("gold_quotes", []):
            assert any(quote in demo_corpus[r] for r in refs), item["id"]


@needs_data
def test_labels_gold_quotes_are_verbatim(build: ModuleType, tmp_path: Path) -> None:
    """The hand-written set: every gold quote is the canonical text of its PDF."""
    ingested = _ingest(tmp_path, [DATA / rel for rel in build.LABEL_PDFS])
    texts = {Path(path).name: text for path, (text, _) in ingested.items()}
    for name, answerable, unanswerable in (("labels", 20, 10), ("nurse", 40, 12)):
        items = read(name)
        assert sum(item["answerable"] for item in items) >= answerable
        assert sum(not item["answerable"] for item in items) >= unanswerable
        for item in filter(lambda item: item["answerable"], items):
            golds = [item.get("gold_answer", ""), *item.get("gold_quotes", [])]
            for quote in filter(None, golds):
                assert any(quote in texts[ref] for ref in item["gold_refs"]), (item["id"], quote)


@needs_data
def test_articles_gold_answers_are_verbatim(tmp_path: Path) -> None:
    """The hand-written articles set: 3 typed answerable questions on each of 16 CDC
    articles, each gold answer in the canonical text of its article; 16 unanswerable."""
    items = read("articles")
    answerable = [item for item in items if item["answerable"]]
    assert len(answerable) == 48 and len(items) - len(answerable) == 16
    refs = Counter(ref for item in answerable for ref in item["gold_refs"])
    assert len(refs) == 16 and set(refs.values()) == {3}
    html = DATA / "cdc-pcd-2024-html" / "html"
    ingested = _ingest(tmp_path, [html / ref for ref in sorted(refs)])
    texts = {Path(path).name: text for path, (text, _) in ingested.items()}
    for item in answerable:
        assert item["type"] in {"quantity", "when", "who", "cause", "what", "where"}, item["id"]
        assert item["gold_answer"] in texts[item["gold_refs"][0]], item["id"]


@pytest.mark.parametrize(
    ("calibration", "qset"),
    [
        ("articles-calibration", "articles"),
        ("articles-held-calibration", "articles-held"),
        ("articles-held2-calibration", "articles-held2"),
        ("articles-held3-calibration", "articles-held3"),
        ("articles-held4-calibration", "articles-held4"),
        ("articles-held5-calibration", "articles-held5"),
    ],
)
def test_articles_calibration_is_apart_from_the_set(calibration: str, qset: str) -> None:
    """An articles corpus' calibration file (`quoteproof calibrate` lines only): 16
    answerable and 8 unanswerable questions, none of them a question of its set."""
    items = read(calibration)
    for item in items:
        assert set(item) == {"question", "answerable"}, item
        assert isinstance(item["question"], str) and item["question"].strip()
        assert isinstance(item["answerable"], bool)
    answerable = [item for item in items if item["answerable"]]
    assert len(answerable) == 16 and len(items) - len(answerable) == 8
    questions = [item["question"].strip().casefold() for item in items]
    assert len(set(questions)) == len(questions)
    asked = {item["question"].strip().casefold() for item in read(qset)}
    assert not asked & set(questions)


@needs_data
@pytest.mark.parametrize(
    ("qset", "before"),
    [
        ("articles-held", ("articles",)),
        ("articles-held2", ("articles", "articles-held")),
        ("articles-held3", ("articles", "articles-held", "articles-held2")),
        ("articles-held4", ("articles", "articles-held", "articles-held2", "articles-held3")),
        (
            "articles-held5",
            ("articles", "articles-held", "articles-held2", "articles-held3", "articles-held4"),
        ),
    ],
)
def test_articles_held_gold_answers_are_verbatim(
    tmp_path: Path, qset: str, before: tuple[str, ...]
) -> None:
    """A held-out articles set: 3 typed answerable questions on each of 16 other CDC
    articles (none of the earlier articles sets' `before`, none in `examples/corpus`), each
    gold answer in the canonical text of its article, every type at least 4 times; 16
    unanswerable ones, with no gold fields."""
    items = read(qset)
    answerable = [item for item in items if item["answerable"]]
    assert len(answerable) == 48 and len(items) - len(answerable) == 16
    for item in items:
        if not item["answerable"]:
            assert not {"gold_refs", "gold_quotes", "gold_answer"} & set(item), item["id"]
    refs = Counter(ref for item in answerable for ref in item["gold_refs"])
    assert len(refs) == 16 and set(refs.values()) == {3}
    used = {ref for name in before for item in read(name) for ref in item.get("gold_refs", [])}
    assert not set(refs) & used
    assert not set(refs) & {path.name for path in (DEMO_CORPUS / "cdc-pcd").glob("*.htm")}
    types = Counter(item["type"] for item in answerable)
    assert set(types) == {"quantity", "when", "who", "cause", "what", "where"}
    assert min(types.values()) >= 4
    html = DATA / "cdc-pcd-2024-html" / "html"
    ingested = _ingest(tmp_path, [html / ref for ref in sorted(refs)])
    texts = {Path(path).name: text for path, (text, _) in ingested.items()}
    for item in answerable:
        assert item["gold_answer"] in texts[item["gold_refs"][0]], item["id"]


def test_demo_answers_are_verbatim_in_the_demo_corpus(tmp_path: Path) -> None:
    """The demo's questions, answered by hand: one item per sample question, each gold
    answer in the canonical text of the file it names."""
    items = read("demo-answers")
    questions = (REPO / "examples" / "questions.txt").read_text("utf-8").split("\n")
    assert [item["question"] for item in items] == [q for q in questions if q.strip()]
    answerable = [item for item in items if item["answerable"]]
    paths = [DEMO_CORPUS / ref for item in answerable for ref in item["gold_refs"]]
    texts = {path: text for path, (text, _) in _ingest(tmp_path, sorted(set(paths))).items()}
    for item in answerable:
        sources = [texts[str(DEMO_CORPUS / ref)] for ref in item["gold_refs"]]
        assert any(item["gold_answer"] in text for text in sources), item["id"]


# --- scifact.jsonl and pubmedqa.jsonl ----------------------------------------------------


def test_scifact_has_the_300_test_queries() -> None:
    items = read("scifact")
    assert len(items) == 300
    for item in items:
        assert item["answerable"] is True
        assert all(re.fullmatch(r"scifact/\d+\.txt", ref) for ref in item["gold_refs"])


def test_pubmedqa_has_the_labelled_questions() -> None:
    items = read("pubmedqa")
    assert len(items) == 1000
    for item in items:
        assert item["answerable"] is True and item["gold_answer"]
        assert item["gold_refs"] == [f"pubmedqa/{item['id'].removeprefix('pubmedqa-')}.txt"]


@needs_data
def test_corpora_hold_every_gold_document(build: ModuleType, tmp_path: Path) -> None:
    counts = build.write_corpora(tmp_path)
    assert counts == {"labels": 3, "scifact": 5183, "pubmedqa": 1000}
    for name in ("labels", "scifact", "pubmedqa"):
        for item in read(name):
            for ref in item.get("gold_refs", []):  # a path ending, as `eval` matches it
                assert (tmp_path / name / ref.removeprefix(f"{name}/")).is_file(), ref
    title, blank, abstract = (tmp_path / "scifact" / "4983.txt").read_text("utf-8").split("\n")[:3]
    assert title and blank == "" and abstract


# --- the committed files are the builder's output ----------------------------------------


@needs_data
def test_committed_sets_are_current() -> None:
    """`build.py --check` rebuilds every set in memory and compares (a few seconds)."""
    done = subprocess.run(
        [sys.executable, str(EVALSETS / "build.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
