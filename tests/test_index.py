"""End to end through the Python API: ingest, search, ask (extractive and a scripted
OpenAI-compatible server), and verify."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.rows import index_rows
from quoteproof import Index
from quoteproof.codec import answer_to_dict
from quoteproof.ingest.chunking import DEFAULT_MAX_CHARS
from quoteproof.llm.openai import OpenAIBackend
from quoteproof.model import REFUSAL_TEXT, Answer, sha256_text
from quoteproof.strategies.quote import NO_MODEL_FALLBACK


def assert_verbatim(answer: Answer, index: Index) -> None:
    """Every quote equals the stored document slice its receipt names."""
    for quote in answer.quotes:
        document = index.store.get_document(quote.doc_id, quote.doc_version)
        assert document is not None
        assert quote.text == document.text[quote.start : quote.end]
        assert quote.text_sha256 == sha256_text(quote.text)
        assert quote.doc_sha256 == document.sha256
    assert all(check.valid for check in index.verify(answer))


def chunk_ref_containing(index: Index, words: str) -> str:
    hits = index.search(words, top_k=1)
    assert hits and words in hits[0].chunk.text
    return hits[0].chunk.ref


def model(server: Any) -> OpenAIBackend:
    return OpenAIBackend(model="scripted", base_url=server.base_url, max_retries=0)


def test_ingest_statuses_and_canonical_text(tmp_path: Path, corpus: Path) -> None:
    with Index.open(tmp_path / "idx", create=True) as index:
        first = index.ingest([corpus])
        assert sorted(r.status for r in first) == ["added"] * 3
        assert all(r.chunks > 0 for r in first)
        again = index.ingest([corpus])
        assert [r.status for r in again] == ["unchanged"] * 3
        txt = next(r for r in first if r.path.endswith("dosing.txt"))
        assert txt.doc_id is not None
        document = index.store.get_document(txt.doc_id)
        assert document is not None
        raw = (corpus / "dosing.txt").read_bytes().decode("utf-8")
        assert document.text == raw.replace("\r\n", "\n").replace("\r", "\n")
        assert document.source_path == str((corpus / "dosing.txt").resolve())


def test_changed_file_becomes_new_version_and_old_receipts_still_verify(
    tmp_path: Path, corpus: Path
) -> None:
    with Index.open(tmp_path / "idx", create=True) as index:
        index.ingest([corpus])
        before = index.ask("recommended dose remdesivir")
        assert before.status == "answered" and before.quotes
        (corpus / "dosing.txt").write_text("Remdesivir dosing\n\nThe dose is now different.\n")
        results = index.ingest([corpus])
        updated = [r for r in results if r.status == "updated"]
        assert len(updated) == 1 and updated[0].version == 2
        assert_verbatim(before, index)  # version 1 stays resolvable
        after = index.ask("remdesivir dose")
        assert {q.doc_version for q in after.quotes if q.source_path.endswith(".txt")} == {2}


def test_bad_files_fail_alone(tmp_path: Path, corpus: Path) -> None:
    (corpus / "broken.txt").write_bytes(b"caf\xe9 au lait")
    (corpus / "empty.md").write_text("   \n\n")
    with Index.open(tmp_path / "idx", create=True) as index:
        results = {Path(r.path).name: r for r in index.ingest([corpus])}
        assert results["broken.txt"].status == "failed"
        assert "UTF-8" in (results["broken.txt"].error or "")
        assert results["empty.md"].status == "failed"
        assert results["shingles.md"].status == "added"
        assert index.store.stats().documents == 3


def test_extractive_answer_is_verbatim(index_dir: Path) -> None:
    with Index.open(index_dir) as index:
        answer = index.ask("What is the first sign of shingles?")
        assert answer.status == "answered"
        assert answer.llm.backend == "extractive"
        assert answer.quotes and "first sign of shingles" in answer.quotes[0].text
        assert all(seg.type == "quote" for seg in answer.segments)
        assert_verbatim(answer, index)
        # no model read a prompt, so the answer records none (only the reply made)
        assert [(call.messages, call.output) for call in answer.calls] == [
            ((), answer.llm.raw_output)
        ]


def test_an_answer_says_when_no_quote_gives_the_value_asked(tmp_path: Path) -> None:
    """ "How many" quoted with a passage that states no number says so; "when" quoted
    with a time says nothing."""
    page = tmp_path / "clinic.md"
    page.write_text(
        "# Clinic\n\n## Parking\n\nThe clinic car park is behind the building, and visitors "
        "use the bays marked for patients.\n\n## Opening\n\nDoors open at 8 a.m. on "
        "weekdays.\n",
        encoding="utf-8",
    )
    value = "The question asks for a number, and no quote gives one"
    with Index.open(tmp_path / "idx", create=True) as index:
        index.ingest([page], embed=False)
        bays = index.ask("How many bays does the clinic car park have for visitors?")
        opening = index.ask("When do the doors open on weekdays?")
    assert bays.status == "answered" and "car park is behind" in bays.quotes[0].text
    assert any(notice.startswith(value) for notice in bays.notices)
    assert opening.status == "answered" and "8 a.m." in opening.quotes[0].text
    assert not any(notice.startswith("The question asks for") for notice in opening.notices)


def test_no_retrieval_refuses_without_calling_the_model(
    index_dir: Path, openai_server: Any
) -> None:
    openai_server.script = ["should not be called"]
    with Index.open(index_dir) as index:
        answer = index.ask("xylophone quantum zebra", backend=model(openai_server))
    assert answer.status == "refused"
    assert answer.refusal_reason == "no_relevant_sources"
    assert answer.segments[0].type == "prose" and answer.segments[0].text == REFUSAL_TEXT
    assert openai_server.requests == []


def test_an_empty_index_refuses_saying_it_holds_no_documents(
    tmp_path: Path, index_dir: Path
) -> None:
    """A question to an index with no documents (in the collections asked) is refused
    with a notice that the index is empty, not advice to calibrate or rephrase; an
    index with documents that retrieves nothing does not say so."""
    with Index.open(tmp_path / "empty", create=True) as index:
        answer = index.ask("What is the dose?")
    assert answer.status == "refused"
    empty = [n for n in answer.notices if "holds no documents" in n]
    assert empty == [
        "The index holds no documents: there is nothing to answer from "
        "(`quoteproof ingest PATH` adds documents)."
    ]
    assert not any("threshold" in n for n in answer.notices)
    with Index.open(index_dir) as index:
        scoped = index.ask("What is the dose?", collections=["nowhere"])
        unasked = index.ask("What is the dose?", collections=[])
        unmatched = index.ask("xylophone quantum zebra")
    assert any("holds no documents in collection 'nowhere':" in n for n in scoped.notices)
    assert "No collection was searched: there is nothing to answer from." in unasked.notices
    assert unmatched.status == "refused" and not unmatched.sources  # nothing retrieved
    assert not any("holds no documents" in n for n in unmatched.notices)


def test_model_quotes_resolve_to_source_words(index_dir: Path, openai_server: Any) -> None:
    with Index.open(index_dir) as index:
        ref = chunk_ref_containing(index, "Antiviral medicines")
        openai_server.script = [
            "Treatment exists [" + ref + "].\n"
            f'<quote ref="{ref}"/>\n'
            f'<quote ref="{ref}">antiviral medicine such as acyclovir, valacyclovir and '
            "famciclovir can shorten the attack</quote>\n"
            f'<quote ref="{ref}">started within 48 hours of the rash</quote>\n'
            f'<quote ref="{ref}">Aspirin cures shingles overnight in every case.</quote>\n'
            '<quote ref="zzzzzz.9"/>'
        ]
        answer = index.ask("How is shingles treated?", backend=model(openai_server))
        assert_verbatim(answer, index)
    prompt = openai_server.requests[0]["messages"][1]["content"]
    assert "Question: How is shingles treated?" in prompt
    whole, fuzzy, changed = answer.quotes[:3]  # the no-model answer's quotes may follow
    assert whole.match == "ref" and whole.claimed_text is None
    assert fuzzy.match in {"normalized", "fuzzy"}
    assert fuzzy.text.startswith("Antiviral medicines such as acyclovir")
    assert "48" not in changed.text and changed.differs is not None
    reasons = " | ".join(r.reason for r in answer.rejected)
    assert "unknown reference" in reasons
    assert len(answer.rejected) == 2
    assert answer.segments[0].type == "prose" and answer.segments[0].citations == (ref,)


def test_threshold_is_settable(index_dir: Path, openai_server: Any) -> None:
    with Index.open(index_dir) as index:
        ref = chunk_ref_containing(index, "Antiviral medicines")
        openai_server.script = [f'<quote ref="{ref}">antiviral medicine such as acyclovir</quote>']
        lenient = index.ask("How is shingles treated?", backend=model(openai_server), threshold=80)
        strict = index.ask("How is shingles treated?", backend=model(openai_server), threshold=100)
    assert lenient.quotes[0].text == "Antiviral medicines such as acyclovir"  # fuzzy, at 80
    assert any("antiviral medicine such as acyclovir" in r.raw for r in strict.rejected)
    assert NO_MODEL_FALLBACK in strict.notices  # the model's only quote did not resolve


@pytest.mark.parametrize("reply", ["<no-answer/>", "<NO-ANSWER>", "I cannot say. <no_answer/>"])
def test_model_no_answer_is_a_refusal(index_dir: Path, openai_server: Any, reply: str) -> None:
    openai_server.script = [reply]
    with Index.open(index_dir) as index:
        answer = index.ask("shingles rash", backend=model(openai_server))
    assert answer.status == "refused" and answer.refusal_reason == "model_no_answer"
    assert answer.quotes == ()


def test_labels_stay_unique_across_same_titles_and_versions(tmp_path: Path) -> None:
    for folder in ("2016", "2020"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "guide.md").write_text(f"# Guide\n\nEdition {folder} text.\n")
    with Index.open(tmp_path / "idx", create=True) as index:
        index.ingest([tmp_path / "2016"])
        index.ingest([tmp_path / "2020"])
        labels = {c.label for hit in index.search("edition", top_k=5) for c in [hit.chunk]}
        assert labels == {"Guide", "Guide (2020/guide.md)"}
        (tmp_path / "2016" / "guide.md").write_text("# Guide\n\nEdition 2016 revised text.\n")
        index.ingest([tmp_path / "2016"])
        hit = index.search("revised", top_k=1)[0]
        assert hit.chunk.label == "Guide (2016/guide.md) v2"


def test_chunks_carry_location_metadata(tmp_path: Path, corpus: Path) -> None:
    with Index.open(tmp_path / "idx", create=True) as index:
        index.ingest([corpus])
        chunk = index.search("shingles", top_k=1)[0].chunk
        assert chunk.source_uri == Path(chunk.source_path).as_uri()
        assert chunk.language == "en" and chunk.pages is None and chunk.ocr is False
        assert index.chunk(chunk.ref) == chunk
        assert index.chunk("zzzzzz.1") is None


def test_a_failed_document_leaves_the_index_unchanged(tmp_path: Path, corpus: Path) -> None:
    with Index.open(tmp_path / "idx", create=True) as index:
        index.ingest([corpus])
        before = index_rows(index.store.location)
        (corpus / "dosing.txt").write_bytes(b"now \xff broken")
        (corpus / "fake.pdf").write_text("<html><body>not a pdf</body></html>")
        results = {Path(r.path).name: r for r in index.ingest([corpus])}
        assert results["dosing.txt"].status == "failed"
        assert results["fake.pdf"].error == (
            "named .pdf but the content is HTML: rename it to .html if that is what it is"
        )
        assert index_rows(index.store.location) == before


def test_parallel_ingest_stores_the_same_as_serial(tmp_path: Path, corpus: Path) -> None:
    (corpus / "broken.txt").write_bytes(b"caf\xe9")
    outcomes = []
    for jobs in (1, 2):
        with Index.open(tmp_path / f"idx{jobs}", create=True) as index:
            results = index.ingest([corpus], jobs=jobs)
            again = index.ingest([corpus], jobs=jobs)
            rows = [row[1:] for row in index_rows(index.store.location) if row[0] == "chunks"]
        outcomes.append(
            (
                [(r.path, r.status, r.chunks, r.error) for r in results],
                [r.status for r in again],
                sorted(repr(row) for row in rows),
            )
        )
    assert outcomes[0] == outcomes[1]
    assert [status for _, status, _, _ in outcomes[1][0]].count("failed") == 1
    assert outcomes[1][1].count("unchanged") == 3


def test_a_one_line_file_of_megabytes_gives_a_bounded_answer(tmp_path: Path) -> None:
    line = "the remdesivir dose for adults is 200 mg on day one then 100 mg daily " * 42_000
    (tmp_path / "one-line.txt").write_text(line)  # 2.9 MB, no sentence end
    with Index.open(tmp_path / "idx", create=True) as index:
        (result,) = index.ingest([tmp_path / "one-line.txt"], embed=False)
        assert result.chunks > len(line) // DEFAULT_MAX_CHARS
        answer = index.ask("What is the remdesivir dose for adults?")
        assert answer.status == "answered" and answer.quotes
        assert all(len(quote.text) <= DEFAULT_MAX_CHARS for quote in answer.quotes)
        assert_verbatim(answer, index)
    body = json.dumps(answer_to_dict(answer), ensure_ascii=False)
    # five sources in the prompt, three quotes each kept as text, claim and raw output
    assert len(body) < 20 * DEFAULT_MAX_CHARS < len(line) // 5


def test_a_source_with_nothing_to_quote_gives_way_to_the_next_hit(tmp_path: Path) -> None:
    contents = (
        "2.1 Dosage Testing 2.2 Recommended Dosage in Adults 2.3 Dosage in Renal Impairment "
        "2.4 Dosage Preparation 2.5 Storage of Prepared Dosage 2.6 Dosage Forms"
    )
    (tmp_path / "contents.txt").write_text(f"Contents\n\n{contents}")
    (tmp_path / "dose.txt").write_text(
        "Dosing\n\nThe recommended dosage in adults is a single loading dose of 200 mg on Day 1."
    )
    with Index.open(tmp_path / "idx", create=True) as index:
        index.ingest([tmp_path / "contents.txt", tmp_path / "dose.txt"], embed=False)
        question = "What is the recommended dosage in adults?"
        assert "2.1 Dosage" in index.search(question, top_k=1)[0].chunk.text
        answer = index.ask(question, top_k=1)
        assert answer.status == "answered"
        assert [quote.text for quote in answer.quotes] == [
            "The recommended dosage in adults is a single loading dose of 200 mg on Day 1."
        ]
        assert_verbatim(answer, index)


VEKLURY = Path(__file__).resolve().parents[2] / "shared/data/fda-remdesivir-label"


def test_pdf_quotes_carry_their_page_and_boxes_and_verify(tmp_path: Path) -> None:
    with Index.open(tmp_path / "idx", create=True) as index:
        index.ingest([VEKLURY / "veklury_remdesivir_label_oct2020.pdf"])
        answer = index.ask("hypersensitivity reaction occur discontinue administration VEKLURY")
        quote = next(q for q in answer.quotes if "5.1 Hypersensitivity" in q.label)
        assert quote.pages == (8,) and quote.label.endswith("p. 8")
        assert quote.boxes and {box.page for box in quote.boxes} == {8}
        assert all(0 <= b.x0 < b.x1 <= 612 and 0 <= b.y0 < b.y1 <= 792 for b in quote.boxes)
        assert_verbatim(answer, index)
        chunk = index.chunk(quote.ref)
        assert chunk is not None and chunk.source_uri.endswith(".pdf#page=8")
