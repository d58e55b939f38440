"""benchmarks/figures.py: the JSON a benchmark script writes and the runner reads."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from figures import SCHEMA, Figure, Figures, add_json_option


def test_figures_round_trip_through_a_file(tmp_path: Path) -> None:
    out = Figures("ingest", data={"pages": 251})
    out.add("pages/s, parse only", 335, "pages/s", "raw pypdfium2 get_text_range", 574.0)
    out.add("req/s, all", 116.2, "req/s")
    out.note("a verdict")
    out.target("fast enough", True)
    path = tmp_path / "deep" / "figures.json"
    out.write(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema"] == SCHEMA and data["benchmark"] == "ingest"
    assert data["figures"][0]["ratio"] == pytest.approx(335 / 574)
    assert data["figures"][1]["ratio"] is None and data["figures"][1]["reference_name"] == ""
    back = Figures.read(path)
    assert back == out
    assert back.figures[0] == Figure(
        "pages/s, parse only", 335.0, "pages/s", "raw pypdfium2 get_text_range", 574.0
    )


def test_write_without_a_path_writes_nothing(tmp_path: Path) -> None:
    Figures("tokens").write(None)
    assert list(tmp_path.iterdir()) == []


def test_ratio_needs_both_figures_and_a_nonzero_reference() -> None:
    assert Figure("a", 1.0, "ms", "b", 4.0).ratio == 0.25
    assert Figure("a", 1.0, "ms", "b", 0.0).ratio is None
    assert Figure("a", None, "ms", "b", 4.0).ratio is None
    assert Figure("a", 1.0, "ms").ratio is None


def _valid() -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "benchmark": "x",
        "figures": [{"name": "f", "value": 1, "unit": "ms"}],
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema": "other/1"}, "not a quoteproof.figures/1 object"),
        ({"figures": None}, "no benchmark name or no figures list"),
        ({"notes": "one line"}, "notes are not a list of text"),
        ({"targets": {"t": "yes"}}, "targets are not an object of true/false"),
        ({"figures": [{"name": "f", "value": "1.5", "unit": "ms"}]}, "not a number"),
        ({"figures": [{"name": "f", "value": True, "unit": "ms"}]}, "not a number"),
        ({"figures": [{"name": 3, "value": 1, "unit": "ms"}]}, "is not text"),
        ({"figures": [[1, 2]]}, "a figure is not an object"),
    ],
)
def test_malformed_figures_are_refused(change: dict[str, Any], message: str) -> None:
    assert Figures.from_dict(_valid()).figures == [Figure("f", 1.0, "ms")]
    with pytest.raises(ValueError, match=message):
        Figures.from_dict({**_valid(), **change})


def test_read_refuses_what_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "figures.json"
    path.write_text('{"schema": ', encoding="utf-8")
    with pytest.raises(ValueError, match="not JSON"):
        Figures.read(path)
    path.write_text('{"value": NaN}', encoding="utf-8")
    with pytest.raises(ValueError, match="not a quoteproof"):
        Figures.read(path)


def test_json_option() -> None:
    parser = argparse.ArgumentParser()
    add_json_option(parser)
    assert parser.parse_args([]).json is None
    assert parser.parse_args(["--json", "out/f.json"]).json == Path("out/f.json")
