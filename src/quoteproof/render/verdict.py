"""`quoteproof verify`'s verdict on a saved answer, as lines of text."""

from __future__ import annotations

from pathlib import Path

from quoteproof.receipts import AnswerCheck

__all__ = ["answer_check_lines"]


def answer_check_lines(check: AnswerCheck, missing_key: Path | None) -> list[str]:
    """A line per quote (`ok` or `INVALID` with its problems) and its notes, the
    seal's lines (`missing_key`: where the audit key was looked for, when there
    was none), and the count of quotes verified."""
    lines = []
    for quote in check.quotes:
        name = f"{quote.quote_id} [{quote.ref}]" + (" (cited passage)" if quote.cited else "")
        lines.append(
            f"ok      {name}" if quote.valid else f"INVALID {name}: {'; '.join(quote.problems)}"
        )
        lines += [f"note: {quote.quote_id} is from {note}" for note in quote.notes]
    seal = check.seal
    lines += [f"INVALID answer: {problem}" for problem in seal.problems]
    if seal.sealed and not seal.problems:
        lines.append("ok      answer: sealed, unchanged since it was made")
    lines += [f"note: {note}" for note in seal.notes]
    if seal.sealed and missing_key is not None:
        lines.append(f"note: no audit key at {missing_key} (--audit-key)")
    invalid = sum(not quote.valid for quote in check.quotes)
    verdict = "changed since it was made" if seal.problems else "unchanged"
    whole = f"the answer is sealed and {verdict}" if seal.sealed else "the answer is unsealed"
    lines.append(f"{len(check.quotes) - invalid} of {len(check.quotes)} quotes verified; {whole}")
    return lines
