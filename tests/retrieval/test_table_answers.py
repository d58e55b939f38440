"""Table rows answer questions asked in their columns' words, from a fresh index.

A newcomer's pharmacy page and clinic policy (an HTML opening-hours table, a Markdown
fee table) beside a paracetamol leaflet: "What time does the pharmacy close on
Saturday?" was answered with holiday paragraphs, and the fee questions were refused
by the automatic threshold, which an off-topic probe about acetaminophen (the
leaflet's drug under another name) had set above them.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from quoteproof import Index
from quoteproof.model import Answer

PHARMACY = """<!DOCTYPE html>
<html><head><title>Northfield Pharmacy: hours and fees</title></head><body><main>
<h1>Northfield Pharmacy</h1>
<p>Northfield Pharmacy, 3 Bridge Street. Pharmacist in charge: Alan Okafor.</p>
<h2>Opening hours</h2>
<table>
<thead><tr><th>Day</th><th>Open</th><th>Close</th></tr></thead>
<tbody>
<tr><td>Monday to Friday</td><td>08:00</td><td>18:30</td></tr>
<tr><td>Saturday</td><td>09:30</td><td>16:00</td></tr>
<tr><td>Sunday</td><td>11:00</td><td>15:00</td></tr>
</tbody></table>
<p>We are closed on 25 and 26 December. On other public holidays we open from 11:00 to
15:00.</p>
<p>The pharmacist takes a break from 12:30 to 13:00 on weekdays; prescriptions cannot be
dispensed then.</p>
</main></body></html>
"""

CLINIC = """# Hillside Surgery: patient policy

## Fees for private services

Some services are not covered by the NHS. Fees are paid at reception before the
document is released.

| Service | Fee | Turnaround |
|---|---|---|
| Private sick note | £20 | 3 working days |
| Insurance report (up to 2 pages) | £95 | 10 working days |
| Copy of medical records | £45 | 21 days |

## Appointments

Patients who miss three appointments in a year receive a letter from the practice
manager.
"""

LEAFLET = """PARACETAMOL 500 MG TABLETS

1. WHAT PARACETAMOL IS

Paracetamol relieves mild to moderate pain and reduces fever.

2. HOW TO TAKE PARACETAMOL

Adults: take 1 or 2 tablets every 4 to 6 hours. Do not take more than 8 tablets in
24 hours.
"""


FEE_ROW = "Insurance report (up to 2 pages) | £95 | 10 working days"


@pytest.fixture(scope="module")
def newcomer_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("newcomer")
    documents = root / "documents"
    documents.mkdir()
    (documents / "pharmacy.html").write_text(PHARMACY, encoding="utf-8")
    (documents / "clinic.md").write_text(CLINIC, encoding="utf-8")
    (documents / "leaflet.txt").write_text(LEAFLET, encoding="utf-8")
    with Index.open(root / "index", create=True) as index:
        results = index.ingest([documents], embed=True)
    assert [r.status for r in results] == ["added"] * 3
    return root / "index"


def ask(location: Path, question: str) -> Answer:
    """`question` asked of the index at `location`, its retrieval notices silenced."""
    with Index.open(location) as index, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return index.ask(question)


@pytest.mark.parametrize(
    ("question", "row"),
    [
        ("What time does Northfield Pharmacy close on Saturday?", "Saturday | 09:30 | 16:00"),
        ("When does the pharmacy open on Sunday?", "Sunday | 11:00 | 15:00"),
        ("How much does an insurance report cost?", FEE_ROW),
        (
            "What is the fee for a copy of medical records?",
            "Copy of medical records | £45 | 21 days",
        ),
    ],
)
def test_the_row_the_question_names_is_the_answer(
    newcomer_index: Path, question: str, row: str
) -> None:
    answer = ask(newcomer_index, question)
    assert answer.retrieval is not None and answer.retrieval.threshold_source == "automatic"
    assert answer.status == "answered", answer.notices
    assert [quote.text for quote in answer.quotes] == [row]


def test_the_automatic_threshold_leaves_out_the_probe_on_the_leaflets_drug(
    newcomer_index: Path,
) -> None:
    # "acetaminophen" occurs nowhere in the index, but the leaflet answers the probe
    # under its other name: used, it set the threshold above the fee questions
    probe = ask(newcomer_index, "What is the maximum daily dose of acetaminophen?")
    with Index.open(newcomer_index) as index:
        stored = index.automatic_threshold()
    assert stored is not None and stored.source == "automatic"
    assert probe.retrieval is not None and probe.retrieval.evidence is not None
    assert probe.retrieval.evidence > stored.threshold


def test_a_price_the_table_does_not_list_is_not_taken_from_another_row(
    newcomer_index: Path,
) -> None:
    answer = ask(newcomer_index, "How much does a root canal treatment cost at Hillside Surgery?")
    assert not any("£" in quote.text for quote in answer.quotes)
