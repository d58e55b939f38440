"""The figures of one benchmark script, as the JSON that `benchmarks/run.py` reads.

A script given `--json FILE` (see `add_json_option`) still prints its own table and
also writes one object to FILE:

    {"schema": "quoteproof.figures/1", "benchmark": "ingest",
     "figures": [{"name": "pages/s, parse only", "value": 335.0, "unit": "pages/s",
                  "reference_name": "raw pypdfium2 get_text_range", "reference": 574.0,
                  "ratio": 0.58}],
     "notes": ["..."], "targets": {"quoting layer < 5 ms": true}, "data": null}

`name` is the figure as the combined table shows it; `reference` (a figure measured
in the same run) and `ratio` (value / reference) are null when there is none.
`notes` are lines for the reader (a script's verdicts); `targets` are the goals the
script checks, each met or not; `data` is anything else the script wants kept.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = "quoteproof.figures/1"


@dataclass(frozen=True)
class Figure:
    """One figure next to its reference figure from the same run."""

    name: str
    value: float | None
    unit: str
    reference_name: str = ""
    reference: float | None = None

    @property
    def ratio(self) -> float | None:
        """`value / reference`, or None when either is missing or the reference is 0."""
        if self.value is None or self.reference is None or self.reference == 0:
            return None
        return self.value / self.reference

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "unit": self.unit,
            "reference_name": self.reference_name,
            "reference": self.reference,
            "ratio": self.ratio,
        }

    @classmethod
    def from_dict(cls, item: Any) -> Figure:
        """The figure of `item`; ValueError when a field is missing or of the wrong type."""
        if not isinstance(item, dict):
            raise ValueError(f"a figure is not an object: {item!r}")
        texts = [item.get("name"), item.get("unit", ""), item.get("reference_name", "")]
        if not all(isinstance(text, str) for text in texts):
            raise ValueError(f"a figure's name, unit or reference_name is not text: {item!r}")
        name, unit, reference_name = map(str, texts)
        return cls(
            name, _number(item.get("value")), unit, reference_name, _number(item.get("reference"))
        )


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"not a number: {value!r}")
    return float(value)


@dataclass
class Figures:
    """Everything one benchmark run reports; `add`, `note` and `target` collect it."""

    benchmark: str
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    targets: dict[str, bool] = field(default_factory=dict)
    data: Any = None

    def add(
        self,
        name: str,
        value: float | None,
        unit: str,
        reference_name: str = "",
        reference: float | None = None,
    ) -> None:
        self.figures.append(Figure(name, value, unit, reference_name, reference))

    def note(self, line: str) -> None:
        self.notes.append(line)

    def target(self, name: str, met: bool) -> None:
        self.targets[name] = met

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "benchmark": self.benchmark,
            "figures": [figure.to_dict() for figure in self.figures],
            "notes": self.notes,
            "targets": self.targets,
            "data": self.data,
        }

    def write(self, path: Path | None) -> None:
        """Write the JSON to `path` (its folder created); nothing when `path` is None."""
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def from_dict(cls, data: Any) -> Figures:
        """The figures of a parsed JSON object; ValueError when it is not one."""
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} object")
        benchmark, items = data.get("benchmark"), data.get("figures")
        notes, targets = data.get("notes", []), data.get("targets", {})
        if not isinstance(benchmark, str) or not isinstance(items, list):
            raise ValueError("no benchmark name or no figures list")
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise ValueError("notes are not a list of text")
        if not isinstance(targets, dict) or not all(isinstance(t, bool) for t in targets.values()):
            raise ValueError("targets are not an object of true/false")
        figures = [Figure.from_dict(item) for item in items]
        return cls(benchmark, figures, notes, targets, data.get("data"))

    @classmethod
    def read(cls, path: Path) -> Figures:
        """Read a file written by `write`; ValueError when it is not valid figures JSON."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"not JSON: {exc}") from exc
        return cls.from_dict(data)


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """Give a script's parser `--json FILE` (read back as `args.json`: a Path or None)."""
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="Also write the figures as JSON to FILE (format: benchmarks/figures.py).",
    )
