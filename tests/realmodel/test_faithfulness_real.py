"""The real-model tier of the faithfulness check: the bundled SmolLM2 judges the
claims of its own answer under the verdict grammar, so every claim that cites a
passage gets the model's verdict."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from quoteproof import Index
from quoteproof.faithfulness import STAGE, parse_judgements
from quoteproof.llm.local import LocalBackend

QUESTION = "What should be done if signs of a hypersensitivity reaction to remdesivir occur?"


@pytest.fixture
def index(demo_index: Path) -> Iterator[Index]:
    with Index.open(demo_index) as opened:
        yield opened


def test_smollm2_judges_every_cited_claim_under_the_grammar(index: Index) -> None:
    local = LocalBackend(threads=1)
    judged = index.ask(
        QUESTION, backend=local, mode="cite", strictness="lenient", top_k=3, faithfulness="model"
    )
    assert judged.faithfulness is not None
    claims = judged.faithfulness.claims
    if not claims:
        pytest.skip("SmolLM2 wrote no sentence that survived the checks: nothing to judge")
    call = judged.calls[-1]
    assert call.stage == STAGE and call.problems == ()
    assert set(parse_judgements(call.output)) == set(range(1, len(claims) + 1))
    assert all(claim.checked_by == "model" for claim in claims)
    assert judged.faithfulness.method == "model" and judged.faithfulness.score is not None
