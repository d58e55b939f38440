"""`quoteproof stats` as text: the figures of `service.stats.Stats`, one table or
line each (plain text; every name from the audit log made visible by the caller)."""

from __future__ import annotations

from quoteproof.service.stats import Stats

__all__ = ["stats_lines"]


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(counter.items())) or "none"


def stats_lines(stats: Stats, scope: str) -> list[str]:
    """The lines `quoteproof stats` prints for `stats` over `scope` (its words for
    the collections counted): the window and total, refusals per day, refusal
    reasons, faithfulness per mode, answers per mode, tokens, rejected output."""
    window = f"{stats.since or 'the first entry'} to {stats.until or 'now'}"
    lines = [f"Answers from {window} ({scope}): {stats.answers}"]
    if stats.unreadable:
        lines.append(f"  ({stats.unreadable} entries hold no readable answer)")
    lines += ["", "Refusal rate per day (UTC)", f"  {'day':<10}  {'answers':>7}  "
              f"{'refused':>7}  {'rate':>6}"]  # fmt: skip
    for day in sorted(stats.days.values(), key=lambda d: d.day):
        lines.append(
            f"  {day.day:<10}  {day.answers:>7}  {day.refused:>7}  {day.refusal_rate:>6.1%}"
        )
    lines += ["", f"Refusal reasons: {_counts(stats.refusal_reasons)}", ""]
    lines.append("Faithfulness per mode (answers with claims)")
    lines.append(f"  {'mode':<10}  {'answers':>7}  {'mean':>6}  {'lowest':>6}  method")
    for mode in sorted(stats.faithfulness.values(), key=lambda f: f.mode):
        lines.append(
            f"  {mode.mode:<10}  {len(mode.scores):>7}  {mode.mean:>6.1%}  "
            f"{mode.lowest:>6.1%}  {_counts(mode.methods)}"
        )
    if not stats.faithfulness:
        lines.append("  (none: no answer in this window has a faithfulness score)")
    lines += [
        "",
        f"Answers per mode: {_counts(stats.modes)}",
        f"Tokens: {stats.prompt_tokens} prompt, {stats.completion_tokens} completion",
        f"Model output rejected, by reason: {_counts(stats.rejected)}",
    ]
    return lines
