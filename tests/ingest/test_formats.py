"""The format registry: every line names a parser that exists and options it takes,
suffixes belong to one format each, and the readers of the registry agree with it
(that a new format is one module and one line: tests/benchmarks/test_structure.py)."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path

from quoteproof.ingest.files import discover_files
from quoteproof.ingest.formats import (
    FORMATS,
    SUPPORTED_SUFFIXES,
    ParseOptions,
    format_for,
    format_names,
)
from quoteproof.ingest.sniff import mislabel_cause
from quoteproof.service.uploads import upload_problem


def test_each_line_names_a_parser_taking_the_options_it_is_given() -> None:
    known = {option.name for option in fields(ParseOptions)}
    for entry in FORMATS:
        module, _, function = entry.parser.partition(":")
        parser = getattr(__import__(module, fromlist=[function]), function)
        parameters = inspect.signature(parser).parameters
        assert list(parameters)[:2] == ["raw", "path"], entry.name
        assert set(entry.options) <= known and set(entry.options) <= set(parameters), entry.name


def test_a_suffix_is_one_formats_in_lower_case_with_its_dot() -> None:
    suffixes = [suffix for entry in FORMATS for suffix in entry.suffixes]
    assert len(suffixes) == len(set(suffixes)) == len(SUPPORTED_SUFFIXES)
    assert all(s.startswith(".") and s == s.lower() for s in suffixes)
    assert format_for(".PDF") is format_for(".pdf") is FORMATS[0]
    assert format_for(".rst") is None and format_for("") is None


def test_the_names_read_as_a_list_in_registry_order() -> None:
    assert format_names() == (
        "PDF, Word (.docx), HTML, Markdown, text, FDA SPL XML, CSV, TSV or JSON"
    )


def test_the_readers_take_every_suffix_of_the_registry(tmp_path: Path) -> None:
    for suffix in SUPPORTED_SUFFIXES:
        (tmp_path / f"file{suffix}").write_bytes(b"x")
    (tmp_path / "file.rst").write_bytes(b"x")
    discovery = discover_files([tmp_path])
    assert sorted(path.suffix for path in discovery.files) == sorted(SUPPORTED_SUFFIXES)
    assert [s.path.name for s in discovery.skipped] == ["file.rst"]
    for entry in FORMATS:
        for suffix in entry.suffixes:
            cause = mislabel_cause(b"%PDF-1.7", suffix)
            assert (cause is None) == ("pdf" in entry.content), suffix
            problem = upload_problem(f"a{suffix}", b"%PDF-1.7")
            assert problem == (None if cause is None else f"a{suffix}: {cause}")
