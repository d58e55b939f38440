"""Tests of file discovery and parsing by suffix."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from quoteproof.errors import IngestError
from quoteproof.ingest.files import (
    SUPPORTED_SUFFIXES,
    discover,
    parse_bytes,
    parse_file,
    read_file,
)


def _write(path: Path, data: str | bytes = "Some text.\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def test_supported_suffixes() -> None:
    assert SUPPORTED_SUFFIXES == (
        ".csv",
        ".docx",
        ".htm",
        ".html",
        ".json",
        ".markdown",
        ".md",
        ".pdf",
        ".tsv",
        ".txt",
        ".xml",
    )


def test_discover_walks_folders_and_keeps_named_files(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    wanted = [
        _write(root / "a.txt"),
        _write(root / "B.MD"),
        _write(root / "sub" / "deep" / "c.html"),
        _write(root / "sub" / "d.Htm"),
        _write(root / "e.markdown"),
    ]
    _write(root / "skip.pdf.bak")
    _write(root / "image.png", b"\x89PNG")
    _write(root / ".hidden.txt")
    _write(root / ".git" / "notes.txt")
    _write(root / "sub" / ".cache" / "x.md")
    named = _write(tmp_path / "other" / "notes.rst")  # unsupported, but named directly
    found = discover([root, named, root / "a.txt"])
    assert found == sorted([*wanted, named])
    assert all(path.is_absolute() for path in found)


def test_discover_relative_paths_become_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "docs" / "x.txt")
    monkeypatch.chdir(tmp_path)
    assert discover([Path("docs"), Path("docs/../docs/x.txt")]) == [tmp_path / "docs" / "x.txt"]


def test_discover_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(IngestError) as info:
        discover([missing])
    assert (info.value.path, info.value.cause) == (str(missing), "no such file or directory")


def test_discover_keeps_broken_links_for_read_file_to_name(tmp_path: Path) -> None:
    root = tmp_path / "r"
    good = _write(root / "a.txt", "hi\n")
    dangling, loop = root / "d.txt", root / "loop.txt"
    dangling.symlink_to(tmp_path / "nonexistent")
    loop.symlink_to(loop)
    found = discover([root])
    assert found == [good, dangling, loop]
    assert discover(found) == found  # what discover returns is discovered the same again
    with pytest.raises(IngestError) as info:
        read_file(dangling)
    assert info.value.path == str(dangling)
    assert info.value.cause == (
        f"symbolic link to {tmp_path / 'nonexistent'} cannot be followed: No such file or directory"
    )
    with pytest.raises(IngestError, match=r"symbolic link to .*loop\.txt cannot be followed"):
        read_file(loop)


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads anything")
def test_discover_keeps_a_folder_it_cannot_list(tmp_path: Path) -> None:
    locked = tmp_path / "r" / "locked"
    locked.mkdir(parents=True)
    locked.chmod(0)
    try:
        assert discover([tmp_path / "r"]) == [locked]
        with pytest.raises(IngestError, match="cannot read folder: Permission denied"):
            read_file(locked)
    finally:
        locked.chmod(0o755)


def test_parse_file_dispatches_by_suffix(tmp_path: Path) -> None:
    text = parse_file(_write(tmp_path / "a.TXT", "Title\r\n\r\nBody."))
    assert (text.format, text.text, text.title) == ("text", "Title\n\nBody.", "Title")
    markdown = parse_file(_write(tmp_path / "b.md", "# Head\n\nBody.\n"))
    assert (markdown.format, markdown.title) == ("markdown", "Head")
    html = parse_file(_write(tmp_path / "c.htm", "<title>T</title><p>Body.</p>"))
    assert (html.format, html.text, html.title) == ("html", "Body.", "T")


def test_unsupported_suffix(tmp_path: Path) -> None:
    path = _write(tmp_path / "data.xyz")
    with pytest.raises(IngestError) as info:
        parse_file(path)
    assert info.value.path == str(path)
    assert info.value.cause == (
        "unsupported file type '.xyz' "
        "(supported: .csv, .docx, .htm, .html, .json, .markdown, .md, .pdf, .tsv, .txt, .xml)"
    )


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("blank.txt", " \n\n\t\n"),
        ("only.md", "---\na: 1\n---\n"),
        ("x.html", "<script>x</script>"),
    ],
)
def test_empty_documents_are_rejected(tmp_path: Path, name: str, data: str) -> None:
    path = _write(tmp_path / name, data)
    with pytest.raises(IngestError) as info:
        parse_file(path)
    assert (info.value.path, info.value.cause) == (str(path), "empty document: no text to index")


def test_unreadable_file_names_the_cause(tmp_path: Path) -> None:
    folder = tmp_path / "folder.txt"
    folder.mkdir()
    with pytest.raises(IngestError) as info:
        read_file(folder)
    assert info.value.path == str(folder)
    assert info.value.cause == "Is a directory"


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads anything")
def test_permission_denied(tmp_path: Path) -> None:
    path = _write(tmp_path / "secret.txt")
    path.chmod(0)
    with pytest.raises(IngestError, match="Permission denied"):
        parse_file(path)


def test_parse_bytes_reports_decoding_errors(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"bad\.txt: not valid UTF-8 \(byte offset 1\)"):
        parse_bytes(b"a\xff", tmp_path / "bad.txt")


def test_empty_file_is_rejected_before_parsing(tmp_path: Path) -> None:
    path = _write(tmp_path / "empty.pdf", "")
    with pytest.raises(IngestError) as info:
        parse_file(path)
    assert (info.value.path, info.value.cause) == (str(path), "empty file (0 bytes)")


def test_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 2_500_000)
    with pytest.raises(IngestError) as info:
        read_file(path, max_file_mb=2)
    assert info.value.cause == "file is 2.5 MB, over the 2 MB limit (raise it with --max-file-mb)"
    assert read_file(path, max_file_mb=3) == b"x" * 2_500_000


@pytest.mark.parametrize(
    ("name", "data", "cause"),
    [
        (
            "page.pdf",
            b"<!doctype html><html><p>hi</p></html>",
            "named .pdf but the content is HTML",
        ),
        ("label.docx", b"%PDF-1.7\n", "named .docx but the content is a PDF"),
        (
            "notes.txt",
            b"PK\x03\x04\x14\x00",
            "named .txt but the content is a ZIP archive (e.g. DOCX)",
        ),
    ],
)
def test_mislabelled_files_say_what_they_are(
    tmp_path: Path, name: str, data: bytes, cause: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(IngestError) as info:
        parse_file(path)
    assert (info.value.path, info.value.cause) == (str(path), cause)
