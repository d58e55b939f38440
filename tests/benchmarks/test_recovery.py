"""The quote-recovery benchmark (benchmarks/recovery.py): its metrics on a real
(small) index, the difflib and rapidfuzz matchers, and the figures it writes."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from helpers.bench_scripts import load_script
from quoteproof import Index
from quoteproof.model import Chunk


@pytest.fixture(scope="module")
def recovery() -> ModuleType:
    return load_script("recovery")


# --- recovery metrics ------------------------------------------------------------------


def test_iou(recovery: ModuleType) -> None:
    assert recovery.iou((0, 10), (0, 10)) == 1.0
    assert recovery.iou((0, 10), (5, 15)) == pytest.approx(5 / 15)
    assert recovery.iou((0, 10), (10, 20)) == 0.0
    assert recovery.iou((0, 10), (2, 8)) == pytest.approx(0.6)
    assert recovery.iou((3, 3), (3, 3)) == 0.0


def _text_of(index_dir: Path, name: str) -> str:
    with Index.open(index_dir) as index:
        summary = next(d for d in index.store.list_documents() if d.source_path.endswith(name))
        document = index.store.get_document(summary.doc_id, summary.version)
    assert document is not None
    return document.text


def _case(
    recovery: ModuleType,
    case_id: str,
    text: str,
    passage: str,
    edited: str,
    edits: list[str],
    expect: str = "span",
) -> Any:
    start = text.index(passage)
    return recovery.Case.from_dict(
        {
            "id": case_id,
            "source": "shingles.md",
            "start": start,
            "end": start + len(passage),
            "gold": passage,
            "edited": edited,
            "edits": edits,
            "expect": expect,
        }
    )


RASH = "A rash of fluid-filled blisters appears one to five days later."
ONCE = "Most people do not get shingles more than once."


def test_recovery_metrics_on_a_small_index(
    recovery: ModuleType, corpus: Path, index_dir: Path
) -> None:
    text = _text_of(index_dir, "shingles.md")
    cases = [
        _case(recovery, "exact", text, RASH, RASH, []),
        _case(recovery, "typo", text, RASH, RASH.replace("filled", "filed"), ["typo"]),
        _case(recovery, "drop", text, ONCE, ONCE.replace(" not", ""), ["dropped_word"]),
        # the edited words are another passage: whatever is shown, it is not [start, end)
        _case(recovery, "elsewhere", text, ONCE, RASH, ["swapped_words"]),
        _case(
            recovery,
            "absent",
            text,
            ONCE,
            "The shingles vaccine must be stored frozen at minus fifty degrees.",
            ["changed_number"],
            "none",
        ),
        # words that are in the source, although the case says they are not
        _case(recovery, "present", text, ONCE, ONCE, ["changed_number"], "none"),
    ]
    report = recovery.run_recovery(cases, corpus)
    assert (report.cases, report.span_cases, report.none_cases) == (6, 4, 2)
    ours = report.matcher(recovery.QUOTEPROOF)
    assert (ours.recovered, ours.span_cases) == (3, 4)
    assert ours.accuracy == pytest.approx(0.75)
    assert (ours.false_quotes, ours.none_cases) == (1, 2)
    assert ours.false_quote_rate == pytest.approx(0.5)
    assert ours.mean_ms > 0 and ours.p95_ms >= 0
    difflib_result = report.matcher(recovery.DIFFLIB)
    assert difflib_result.speedup_vs_difflib == pytest.approx(1.0)
    assert ours.speedup_vs_difflib == pytest.approx(difflib_result.mean_ms / ours.mean_ms)
    assert {m.name for m in report.matchers} == {
        recovery.QUOTEPROOF,
        recovery.DIFFLIB,
        recovery.RAPIDFUZZ,
    }

    misses = {miss.case_id: miss for miss in report.misses}
    assert set(misses) == {"elsewhere", "present"}
    assert misses["elsewhere"].iou == 0.0 and misses["elsewhere"].shown == RASH
    assert misses["present"].shown == ONCE

    kinds = {k.kind: k for k in report.by_kind}
    assert set(kinds) == {"typo", "dropped_word", "swapped_words", "changed_number"}
    assert kinds["typo"].span_cases == 1 and kinds["typo"].recovered[recovery.QUOTEPROOF] == 1
    assert kinds["swapped_words"].recovered[recovery.QUOTEPROOF] == 0
    assert kinds["changed_number"].none_cases == 2
    assert kinds["changed_number"].false_quotes[recovery.QUOTEPROOF] == 1

    assert report.targets() == {
        "accuracy >= 99%": False,
        "no false quotes": False,
        ">= 10x faster than difflib": ours.speedup_vs_difflib >= 10,
    }
    printed = "\n".join(report.lines())
    assert "quoteproof misses (2" in printed and "elsewhere" in printed
    data = report.to_dict()
    assert json.loads(json.dumps(data))["matchers"][0]["accuracy"] == pytest.approx(0.75)


def test_recovery_refuses_cases_built_from_another_text(
    recovery: ModuleType, corpus: Path, index_dir: Path
) -> None:
    text = _text_of(index_dir, "shingles.md")
    case = _case(recovery, "bad", text, RASH, RASH, [])
    wrong = recovery.Case.from_dict({**case.__dict__, "edits": [], "gold": "something else"})
    with pytest.raises(ValueError, match="gold is not the canonical text"):
        recovery.run_recovery([wrong], corpus)


def test_load_cases_sample_is_stable(recovery: ModuleType, tmp_path: Path) -> None:
    lines = [
        {
            "id": f"c{i}",
            "source": "a.pdf",
            "start": i,
            "end": i + 5,
            "gold": "xxxxx",
            "edited": "yyyyy",
            "edits": ["typo"],
            "expect": "span",
        }
        for i in range(50)
    ]
    path = tmp_path / "recovery.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert len(recovery.load_cases(path)) == 50
    sample = recovery.load_cases(path, 10)
    assert [c.id for c in sample] == [c.id for c in recovery.load_cases(path, 10)]
    assert len(sample) == 10 and sample == sorted(sample, key=lambda c: int(c.id[1:]))


def _chunk(text: str, start: int, ordinal: int = 0) -> Chunk:
    return Chunk(
        ref=f"r{ordinal}",
        doc_id="d",
        doc_version=1,
        ordinal=ordinal,
        start=start,
        end=start + len(text),
        text=text,
        section=(),
        label="d",
        source_path="/d.txt",
    )


DOSE = "Remdesivir dosing. The recommended dose is 200 mg on day 1, followed by 100 mg once daily."
OTHER = "Do not use remdesivir in patients with known hypersensitivity to it."


def test_difflib_matcher_finds_the_window(recovery: ModuleType) -> None:
    chunks = [_chunk(OTHER, 0, 0), _chunk(DOSE, 500, 1)]
    window = "The recommended dose is 200 mg on day 1,"
    expected = (500 + DOSE.index(window), 500 + DOSE.index(window) + len(window))
    assert recovery.difflib_match("The recomended dose is 200 mg on day 1,", chunks) == expected
    assert recovery.difflib_match(window, chunks) == expected
    assert (
        recovery.difflib_match("Bananas grow in tropical climates all year round", chunks) is None
    )
    # a quote as long as the whole chunk: one window, the chunk itself
    assert recovery.difflib_match(OTHER, chunks) == (0, len(OTHER))


def test_rapidfuzz_matcher(recovery: ModuleType) -> None:
    chunks = [_chunk(OTHER, 0, 0), _chunk(DOSE, 500, 1)]
    quote = "followed by 100 mg once daily"
    start = 500 + DOSE.index(quote)
    assert recovery.rapidfuzz_match(quote, chunks) == (start, start + len(quote))
    assert recovery.rapidfuzz_match("Bananas grow in tropical climates all year", chunks) is None


def _matcher(recovery: ModuleType, name: str, **figures: Any) -> Any:
    counts = {"span_cases": 90, "recovered": 0, "none_cases": 10, "false_quotes": 0}
    return recovery.MatcherResult(name=name, **{**counts, "speedup_vs_difflib": 1.0, **figures})


def test_figures_put_quoteproof_next_to_each_matcher(recovery: ModuleType) -> None:
    matchers = (
        _matcher(recovery, recovery.QUOTEPROOF, recovered=89, mean_ms=1.5, p95_ms=4.0,
                 speedup_vs_difflib=40.0),
        _matcher(recovery, recovery.DIFFLIB, recovered=63, false_quotes=1, mean_ms=60.0,
                 p95_ms=150.0),
        _matcher(recovery, recovery.RAPIDFUZZ, recovered=72, mean_ms=0.1, p95_ms=0.2),
    )  # fmt: skip
    report = recovery.RecoveryReport(100, 90, 10, ("a.pdf",), 90.0, matchers, (), ())
    out = recovery.figures(report)
    assert out.benchmark == "recovery" and out.data == report.to_dict()
    mean = [f for f in out.figures if f.name == "quote resolution mean ms/quote"]
    assert [(f.reference_name, f.reference) for f in mean] == [
        (recovery.DIFFLIB, 60.0),
        (recovery.RAPIDFUZZ, 0.1),
    ]
    assert mean[0].value == 1.5 and mean[0].ratio == pytest.approx(1.5 / 60)
    accuracy = [f for f in out.figures if f.name.startswith("quote recovery accuracy")]
    assert accuracy[0].name == "quote recovery accuracy % (IoU >= 0.9, 90 quotes)"
    assert [f.value for f in accuracy] == pytest.approx([100 * 89 / 90] * 2)
    assert [f.reference for f in accuracy] == pytest.approx([70.0, 80.0])
    false = [f for f in out.figures if f.name.startswith("false quotes")]
    assert false[0].value == 0 and false[0].reference == pytest.approx(10.0)
    assert false[1].ratio is None  # 0 / 0
    assert len(out.figures) == 8 and {f.unit for f in out.figures} == {"ms", "%"}
    assert out.targets == {
        "accuracy >= 99%": False,
        "no false quotes": True,
        ">= 10x faster than difflib": True,
    }
    assert out.notes == [
        "quoteproof targets: accuracy >= 99%: FAIL; no false quotes: PASS; "
        ">= 10x faster than difflib: PASS"
    ]
