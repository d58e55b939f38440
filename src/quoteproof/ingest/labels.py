"""Human-readable chunk labels: `Veklury label › 5.1 Hypersensitivity › p. 4`.

A label names the document, the section path and the page(s). Labels stay unique:
a document whose title another document already uses gets the shortest distinct
tail of its path (`Guide (2016/guide.pdf)`), a later version gets `v2`, `v3`...,
and chunks of one document that would share a label (windows of a long section,
a repeated "Introduction") are numbered `(1/3)`, `(2/3)`... The short key (the
ref) is separate and stays short.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import PurePath

LABEL_SEPARATOR = " › "
LABEL_PART_CHARS = 48


def shorten(part: str, limit: int = LABEL_PART_CHARS) -> str:
    """Return `part` cut to `limit` characters with an ellipsis when longer."""
    if len(part) <= limit:
        return part
    return part[: limit - 1].rstrip() + "…"


def page_part(pages: Sequence[int] | None) -> str | None:
    """`p. 4` for one page, `pp. 4–6` for a range, None when there are no pages."""
    if not pages:
        return None
    if len(pages) == 1:
        return f"p. {pages[0]}"
    return f"pp. {min(pages)}–{max(pages)}"


def make_label(
    title: str,
    section: tuple[str, ...],
    pages: Sequence[int] | None = None,
    *,
    shown_title: str | None = None,
) -> str:
    """Return the label for a chunk of the document `title` in `section` on `pages`.

    The label starts with `shown_title` (see `display_title`) or else `title`.
    Section titles equal to the document title are skipped (an h1 repeating the
    title would otherwise show twice); an empty title is left out; each section
    part is cut to `LABEL_PART_CHARS` characters (`display_title` cuts the title).
    A chunk with no title, section or page is labelled `(untitled)`.
    """
    first = shown_title or title
    parts = [first] if first else []
    parts.extend(shorten(name) for name in section if name != title)
    page = page_part(pages)
    if page is not None:
        parts.append(page)
    return LABEL_SEPARATOR.join(parts) or "(untitled)"


def number_duplicates(labels: Sequence[str]) -> list[str]:
    """Append `(i/n)` to each of the `n` > 1 labels that are equal, in order."""
    totals = Counter(labels)
    seen: Counter[str] = Counter()
    numbered = []
    for label in labels:
        if totals[label] == 1:
            numbered.append(label)
            continue
        seen[label] += 1
        numbered.append(f"{label} ({seen[label]}/{totals[label]})")
    return numbered


def _distinct_tail(path: str, others: Iterable[str]) -> str:
    """The fewest trailing components of `path` that no path in `others` ends with."""
    parts = PurePath(path).parts
    other_parts = [PurePath(other).parts for other in others]
    for size in range(1, len(parts) + 1):
        tail = parts[-size:]
        if all(other[-size:] != tail for other in other_parts):
            return "/".join(tail)
    return path


def display_title(
    title: str, source_path: str, version: int, same_title_paths: Iterable[str]
) -> str:
    """The title part of labels for version `version` of the document at `source_path`.

    `same_title_paths` are the source paths of other stored documents with the same
    title; when there are any, the shortest distinct tail of `source_path` is added
    in parentheses. Versions after the first get ` v2`, ` v3`...
    """
    others = [path for path in same_title_paths if path != source_path]
    shown = shorten(title) if title else PurePath(source_path).name
    if others:
        shown = f"{shown} ({_distinct_tail(source_path, others)})"
    if version > 1:
        shown = f"{shown} v{version}"
    return shown
