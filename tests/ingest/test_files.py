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
    discover_files,
    parse_bytes,
    parse_file,
    read_file,
    source_name,
)
from quoteproof.ingest.pipeline import ingest_files
from quoteproof.store.open import open_store


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
    _write(root / "README.md")
    _write(root / "sub" / "SOURCES.md")
    (root / "elsewhere").symlink_to(tmp_path / "other", target_is_directory=True)
    named = _write(tmp_path / "other" / "notes.rst")  # unsupported, but named directly
    readme = _write(tmp_path / "other" / "README.md")  # a folder's notes, named directly
    found = discover_files([root, named, readme, root / "a.txt"])
    assert found.files == sorted([*wanted, named, readme])
    assert all(path.is_absolute() for path in found.files)
    notes = "notes about the folder (README-type name): name the file to ingest it"
    assert [(str(s.path.relative_to(root)), s.reason) for s in found.skipped] == [
        ("README.md", notes),
        ("elsewhere", "link to a folder (not followed)"),
        ("image.png", "unsupported file type '.png'"),
        ("skip.pdf.bak", "unsupported file type '.bak'"),
        ("sub/SOURCES.md", notes),
    ]
    assert discover([root]) == sorted(wanted)


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
    with pytest.raises(
        IngestError, match=r"bad\.txt: not valid UTF-8 \(byte offset 1: 0xFF, line 1\)"
    ):
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
            "named .pdf but the content is HTML: rename it to .html if that is what it is",
        ),
        (
            "label.docx",
            b"%PDF-1.7\n",
            "named .docx but the content is a PDF: rename it to .pdf if that is what it is",
        ),
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


def _ingest(folder: Path, tmp_path: Path) -> list[tuple[str, str, str | None]]:
    """Ingest what `discover_files` finds in `folder`: (name, status, cause) of each."""
    store = open_store(str(tmp_path / "idx"), create=True)
    try:
        results = list(ingest_files(store, discover_files([folder]).files, jobs=2))
    finally:
        store.close()
    return [(Path(r.path).name, r.status, r.error) for r in results]


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_link_to_a_device_is_never_read(tmp_path: Path) -> None:
    # /dev/zero behind a link says it holds 0 bytes: --max-file-mb was skipped and
    # reading ran until memory ran out, so nothing of the batch was stored.
    folder = tmp_path / "in"
    _write(folder / "good.txt", "Good notes on soap.\n")
    (folder / "zero.txt").symlink_to("/dev/zero")
    found = discover_files([folder])
    assert found.files == [folder / "good.txt"]
    cause = "not a regular file: a character device (symbolic link to /dev/zero)"
    assert [(s.path.name, s.reason) for s in found.skipped] == [("zero.txt", cause)]
    with pytest.raises(IngestError) as raised:
        read_file(folder / "zero.txt")
    assert (raised.value.path, raised.value.cause) == (str(folder / "zero.txt"), cause)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="Linux /proc")
def test_a_file_is_read_only_up_to_the_limit_whatever_size_it_says(tmp_path: Path) -> None:
    # A /proc file says it holds 0 bytes and has more: reading stops one byte past
    # the limit.
    with pytest.raises(IngestError) as raised:
        read_file(Path("/proc/self/maps"), max_file_mb=0.0001)
    assert raised.value.cause == (
        "file is larger than it said, over the 0.0001 MB limit (raise it with --max-file-mb)"
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_is_skipped_in_a_folder_and_refused_when_named(tmp_path: Path) -> None:
    # A FIFO in a folder made ingest wait for ever, and the files read before it
    # were never stored.
    folder = tmp_path / "in"
    _write(folder / "a.txt", "Alpha notes on soap.\n")
    os.mkfifo(folder / "b.txt")
    _write(folder / "c.txt", "Charlie notes on water.\n")
    found = discover_files([folder])
    pipe = "not a regular file: a named pipe (FIFO)"
    assert [(s.path.name, s.reason) for s in found.skipped] == [("b.txt", pipe)]
    assert _ingest(folder, tmp_path) == [("a.txt", "added", None), ("c.txt", "added", None)]
    with pytest.raises(IngestError, match=r"b\.txt: not a regular file: a named pipe \(FIFO\)"):
        read_file(folder / "b.txt")


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file names are always UTF-8")
def test_a_file_name_that_is_not_utf8_is_stored_under_an_escaped_name(tmp_path: Path) -> None:
    # caf\xe9.txt (Latin-1) aborted the batch with UnicodeEncodeError: 0 of 2 stored.
    folder = tmp_path / "in"
    _write(folder / "a.txt", "Alpha notes on soap.\n")
    latin = Path(os.fsdecode(bytes(folder) + b"/caf\xe9.txt"))
    _write(latin, "Cafe notes on espresso.\n")
    untitled = Path(os.fsdecode(bytes(folder) + b"/men\xfa.html"))  # titled by its name
    _write(untitled, "<p>Soup of the day.</p>")
    _write(folder / "z.txt", "Zulu notes on water.\n")
    assert source_name(latin) == str(folder) + "/caf\\xe9.txt"
    assert _ingest(folder, tmp_path) == [
        ("a.txt", "added", None),
        ("caf\\xe9.txt", "added", None),
        ("men\\xfa.html", "added", None),
        ("z.txt", "added", None),
    ]
    store = open_store(str(tmp_path / "idx"))
    try:
        current = store.current_version(source_name(latin))
        assert current is not None
        document = store.get_document(current.doc_id)
        assert document is not None and document.source_path == str(folder) + "/caf\\xe9.txt"
        (chunk,) = store.chunks_of(current.doc_id, current.version)
        assert chunk.source_uri == latin.as_uri() == f"{folder.as_uri()}/caf%E9.txt"
        titled = store.current_version(source_name(untitled))
        assert titled is not None
        assert store.get_document(titled.doc_id).title == "men\\xfa"  # type: ignore[union-attr]
    finally:
        store.close()
    assert ("caf\\xe9.txt", "unchanged", None) in _ingest(folder, tmp_path)
