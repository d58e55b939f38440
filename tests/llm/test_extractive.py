"""The extractive backend: quotes only, the sentences that answer best."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pytest

from quoteproof.llm.answer_form import (
    answer_kind,
    form_match,
    heading_names_subject,
    missing_value,
    specific_form,
)
from quoteproof.llm.base import CompletionRequest
from quoteproof.llm.extractive import (
    _BACK_REFERENCE,
    _CONSEQUENCE,
    OFFERED,
    Embed,
    ExtractiveBackend,
    _focus,
    best_unit_similarity,
    choose_extractive,
)
from quoteproof.llm.extractive_units import TableRows, candidates_of, quotable_first
from quoteproof.llm.quotable import OUT_OF_SCOPE, pointable_units, quotable_units, worth_quoting
from quoteproof.model import Chunk, Hit
from quoteproof.quoting.parse import QuoteItem, parse_output
from quoteproof.quoting.passages import JOIN, Passage
from quoteproof.quoting.prompt import build_messages
from quoteproof.store.vectors import Vectors

FLU = (
    "Influenza\n\n"
    "Influenza spreads by droplets when people cough.\n\nVaccination every year is the best "
    "protection against influenza.\n\nAntiviral drugs can shorten the illness when started early."
    "\n\nTable 3 Influenza vaccination rates by age group and season\n\n"
    "8.1 Pregnancy 8.2 Lactation 8.4 Pediatric Use\n\n"
    "Vaccination works."
)


def chunk(ref: str, text: str, section: tuple[str, ...] = ()) -> Chunk:
    return Chunk(ref, ref, 1, 1, 0, len(text), text, section, "L", f"/{ref}.txt")


def extract_answer(
    question: str,
    sources: Sequence[Chunk],
    embed: Embed | None = None,
    table_rows: TableRows | None = None,
) -> str:
    """The protocol reply `choose_extractive` gives."""
    return choose_extractive(question, sources, embed, table_rows).reply


def quoted(reply: str) -> list[tuple[str, str | None]]:
    return [(i.ref, i.claimed) for i in parse_output(reply).items if isinstance(i, QuoteItem)]


def test_quotes_the_answering_sentence_not_headings_captions_or_contents() -> None:
    reply = extract_answer("How does vaccination protect against influenza?", (chunk("d", FLU),))
    assert quoted(reply) == [
        ("d", "Vaccination every year is the best protection against influenza.")
    ]


def test_no_shared_word_means_no_answer_without_a_model() -> None:
    assert extract_answer("rattlesnake antivenom", (chunk("d", FLU),)) == "<no-answer/>"


def test_a_list_item_is_quoted_with_its_lead_in() -> None:
    text = (
        "Unhealthy habits can raise your risk for high blood pressure, and they include:\n\n"
        "Eating too much sodium\n\nLack of physical activity\n\nDrinking too much alcohol"
    )
    reply = extract_answer(
        "Which habits raise the risk of high blood pressure?", (chunk("h", text),)
    )
    assert quoted(reply) == [("h", text)]


def fake_embed(vectors: dict[str, Sequence[float]]) -> object:
    """An embedding that knows a few texts (others get a far-away vector)."""

    def embed(texts: Sequence[str]) -> Vectors:
        rows = [np.asarray(vectors.get(t, (0.0, 0.0, 1.0)), dtype=np.float32) for t in texts]
        return np.stack([row / np.linalg.norm(row) for row in rows])

    return embed


def test_the_embedding_ranks_sentences_best_first_and_drops_weak_ones() -> None:
    question = "Who should get a flu shot?"
    text = (
        "Everyone six months and older should be vaccinated each season.\n\n"
        "Shots are given in the arm by a nurse at the clinic.\n\n"
        "The clinic opens at nine in the morning on weekdays."
    )
    sentences = text.split("\n\n")
    embed = fake_embed({question: (1, 0, 0), sentences[0]: (1, 0.1, 0), sentences[1]: (0.2, 1, 0)})
    reply = extract_answer(question, (chunk("c", text),), embed)  # type: ignore[arg-type]
    assert quoted(reply) == [("c", sentences[0])]


def test_a_unit_is_read_under_its_title_what_the_title_says_it_need_not_repeat() -> None:
    question = "Where were the diabetes coping study's participants recruited?"
    focus = "Where were the study's participants recruited?"  # the title says the rest
    assert _focus(question, "L Coping with Discrimination and Diabetes") == focus
    answer = "Participants were recruited through churches in Austin, Texas."
    topical = "Diabetes coping differed by age."
    embed = fake_embed(
        {question: (1, 0, 0), topical: (1, 0.2, 0), focus: (0, 1, 0.1), answer: (0, 1, 0)}
    )
    text = f"{topical}\n\nThe survey ran for two years.\n\n{answer}"
    source = chunk("c", text, ("Coping with Discrimination and Diabetes",))
    reply = extract_answer(question, (source,), embed)  # type: ignore[arg-type]
    assert quoted(reply)[0] == ("c", answer)


def test_a_focus_keeps_some_content_word_or_is_none() -> None:
    assert _focus("What is remdesivir?", "VEKLURY (remdesivir) label") is None
    assert _focus("How is shingles treated?", "Influenza") is None  # nothing dropped
    assert (
        _focus("How long is the infusion for adults?", "Infusion") == "How long is the for adults?"
    )
    focus = _focus("What is the dose for 12 year olds?", "Dosing › p. 12")
    assert focus == "What is the for 12 year olds?"  # a number is never dropped
    assert _focus("Can I take it with food?", "Food") is None  # one word left: too little


def test_adjacent_chosen_sentences_are_joined_into_one_quote() -> None:
    text = "Shingles causes a painful rash. The shingles rash often forms a stripe of blisters."
    reply = extract_answer("What is the shingles rash like?", (chunk("s", text),))
    assert quoted(reply) == [("s", text)]


def test_backend_reads_the_request_not_the_prompt() -> None:
    sources = (chunk("d", FLU),)
    request = CompletionRequest(
        build_messages("vaccination?", sources, {}), "vaccination?", sources
    )
    completion = ExtractiveBackend().complete(request)
    assert quoted(completion.text)[0][0] == "d" and completion.model is None


def test_stream_hands_over_the_whole_reply_once() -> None:
    sources = (chunk("d", FLU),)
    request = CompletionRequest(
        build_messages("vaccination?", sources, {}), "vaccination?", sources
    )
    pieces: list[str] = []
    completion = ExtractiveBackend().stream(request, pieces.append)
    assert pieces == [completion.text]
    assert completion == ExtractiveBackend().complete(request)


TABLE = (
    "Table 2 lists adverse reactions.\n\n"
    "Adverse reaction | ELIQUIS | Warfarin\n"
    "Major bleeding | 327 (2.13) | 462 (3.09)\n"
    "Intracranial hemorrhage | 52 (0.33) | 125 (0.82)"
)


def row_spans(text: str) -> list[tuple[int, int]]:
    """The body rows of `TABLE` (every line of its table but the header)."""
    start = text.index("Major")
    second = text.index("\n", start)
    return [(start, second), (second + 1, len(text))]


def test_a_table_row_is_its_own_quotable_unit() -> None:
    spans = [(u.start, u.end) for u in quotable_units(TABLE, row_spans(TABLE))]
    assert [TABLE[lo:hi] for lo, hi in spans] == TABLE.split("\n")[3:]


def test_the_no_model_answer_quotes_the_matching_table_row_only() -> None:
    source = chunk("t", TABLE)
    rows = lambda c: row_spans(c.text)  # noqa: E731
    reply = extract_answer("intracranial hemorrhage rate", (source,), table_rows=rows)
    assert quoted(reply) == [("t", "Intracranial hemorrhage | 52 (0.33) | 125 (0.82)")]


def test_a_short_paragraph_is_quoted_whole() -> None:
    text = (
        "Do not reuse or save the diluted solution for future use. "
        "It contains no preservative, so partly used vials are discarded."
    )
    reply = extract_answer("Can a partly used vial be saved for later?", (chunk("v", text),))
    assert quoted(reply) == [("v", text)]


HEART = (
    "Heart attack warning signs\n\n"
    "The most common warning symptoms of a heart attack for both men and women are:\n\n"
    "Chest pain or discomfort.Most heart attacks involve discomfort in the center of the chest "
    "that lasts more than a few minutes.\n\n"
    "Upper body discomfort.You may feel pain in one or both arms, the back or the jaw.\n\n"
    "Shortness of breath.This may be your only symptom."
)


def test_a_lead_in_is_quoted_with_the_paragraphs_of_its_list_never_alone() -> None:
    spans = [HEART[u.start : u.end] for u in quotable_units(HEART)]
    assert not any(span.endswith(":") for span in spans)
    assert HEART[HEART.index("The most common") :] in spans
    reply = extract_answer(
        "What are the most common warning symptoms of a heart attack?", (chunk("h", HEART),)
    )
    assert quoted(reply)[0] == ("h", HEART[HEART.index("The most common") :])


def test_a_list_numbered_without_marks_ends_with_its_numbers() -> None:
    """A PDF's "1 Stop ...", "2 Keep ..." steps under their lead-in were quoted with
    the paragraph after them (168 words for "What is the first thing to do?")."""
    after = "A rise in temperature of less than 1.5 degrees alone is a mild reaction."
    steps = "1 Stop the transfusion immediately.\n\n2 Keep the line open with saline."
    text = f"If a reaction is suspected, take these steps:\n\n{steps}\n\n{after}"
    spans = [text[u.start : u.end] for u in quotable_units(text)]
    assert text[: text.index(after)].rstrip() in spans
    assert not any(span.endswith(after) and span != after for span in spans)


def test_a_clause_that_ends_with_a_dash_leads_in_its_items() -> None:
    items = (
        "(a) auditing compliance with regulations 3 to 6 at least once every 12 months;\n\n"
        "(b) reporting the results of each audit to the board; and\n\n"
        "(c) acting as the point of contact for the regulator."
    )
    clause = f"(2) The designated waste officer is responsible for\u2014\n\n{items}"
    text = f"(1) Every producer must appoint a designated waste officer.\n\n{clause}"
    reply = extract_answer(
        "What is the designated waste officer responsible for?", (chunk("r", text),)
    )
    assert clause in quoted(reply)[0][1]  # never the clause cut at its dash


def test_a_dash_leads_in_nothing_but_marked_items() -> None:
    doses = "Adults: 500 mg twice daily.\nChildren 6 to 12 years: 250 mg.\nUnder 6 years: \u2013"
    assert [doses[u.start : u.end] for u in quotable_units(doses)]  # a dash for "none"
    quiet = "The ward stayed quiet for the rest of the night shift after the handover."
    story = f"The nurse began to explain the new dosing rules and then stopped\u2014\n\n{quiet}"
    spans = [story[u.start : u.end] for u in quotable_units(story)]
    assert quiet in spans and not any(f"\n\n{quiet}" in span for span in spans)


def test_the_sentences_before_a_lead_in_are_units_and_items_keep_only_the_lead_in() -> None:
    stated = "Gloves, surgical masks, goggles and gowns are considered essential equipment."
    text = (
        f"{stated} Respirators should also be available in all the "
        "facilities of a region. All protective equipment should be:\n\n"
        "• Available close to the point of use and readily accessible.\n\n"
        "• Stored in a clean and dry area until it is needed."
    )
    units = quotable_units(text)
    assert stated in [text[u.start : u.end] for u in units]
    lead_in = text.index("All protective")
    assert all(u.start in (lead_in, u.core_start) for u in units)
    reply = extract_answer("Which equipment is considered essential?", (chunk("p", text),))
    assert quoted(reply)[0] == ("p", stated)


def test_a_sentence_a_lead_in_rests_on_is_quoted_with_it_and_its_list() -> None:
    text = (
        "3.2 The Tenant shall not keep any pets at the Property without the prior written "
        "consent of the Landlord. If consent is given:\n\n"
        "(a) no more than one cat or one small dog may be kept;\n\n"
        "(b) the carpets are cleaned professionally at the end of the tenancy."
    )
    reply = extract_answer("Can the tenant keep a dog at the property?", (chunk("t", text),))
    assert quoted(reply)[0] == ("t", text)
    independent = text.replace("If consent is given:", "Each approved pet must be:")
    units = [independent[u.start : u.end] for u in quotable_units(independent)]
    assert independent[: independent.index(" Each")] in units  # no lead-in rests on it


def test_an_item_of_a_short_list_is_quoted_with_the_whole_list() -> None:
    # a newcomer: "lead-in, items 1-3" was shown for item 3, and read as the whole list
    text = (
        "Adverse events reported in the treatment arm were:\n\n"
        "- genital mycotic infection in 28 patients (2.3%)\n"
        "- volume depletion in 41 patients (3.4%)\n"
        "- diabetic ketoacidosis in 2 patients (0.2%)\n"
        "- acute kidney injury in 19 patients (1.6%)"
    )
    quotes = {text[u.start : u.end] for u in quotable_units(text)}
    assert quotes == {text}  # each item's unit: the lead-in with the whole list
    reply = extract_answer("What share of patients had diabetic ketoacidosis?", (chunk("a", text),))
    assert quoted(reply) == [("a", text)]


def test_a_list_of_fragments_goes_on_past_a_short_item() -> None:
    # a web page's list items without their bullets: "2 GB of free disk space" is an
    # item, not a heading that ends the list
    items = (
        "Windows 10 (version 22H2) or Windows 11, or macOS 13 Ventura or later",
        "8 GB of RAM (16 GB recommended for more than 10,000 transactions a year)",
        "2 GB of free disk space",
        "A screen resolution of at least 1366 x 768",
        "An internet connection for bank feeds and sync",
    )
    text = "\n\n".join(("The LedgerLoom desktop app requires:", *items))
    units = [text[u.start : u.end] for u in quotable_units(text)]
    assert text in units
    headed = f"{text}\n\nContacting support\n\nThe desk answers by chat from 08:30."
    assert text in [headed[u.start : u.end] for u in quotable_units(headed)]  # not the heading


def test_a_lead_in_with_nothing_after_it_is_no_unit() -> None:
    text = "Nothing follows here. The warning symptoms of a heart attack are:"
    assert [text[u.start : u.end] for u in quotable_units(text)] == []


def test_a_heading_run_into_a_sentence_is_left_out_of_the_quote() -> None:
    text = (
        "Press Escape to close the help window on the screen now.) Antivirals and Other Treatments "
        "At the early stage of shingles, a healthcare provider will usually prescribe antiviral "
        "pills for the patient to take at home. Shingles Vaccine The shingles vaccine is not "
        "recommended if you have active shingles or pain that continues after the rash is gone "
        "for many weeks or months after the blisters have healed completely."
    )
    starts = [text[u.core_start : u.core_end].split()[0] for u in quotable_units(text)]
    assert starts == ["Press", "At", "The"]
    named = (
        "Respiratory Hygiene/Cough Etiquette is an element of Standard Precautions that "
        "highlights prompt infection prevention measures. Initially, the Michigan Tobacco "
        "Control Program contracted with 16 AIDS service organizations in the state."
    )
    assert [named[u.core_start : u.core_end].split()[0] for u in quotable_units(named)] == [
        "Respiratory",
        "Initially,",
    ]


def test_the_same_sentence_in_two_sources_is_quoted_once() -> None:
    sentence = "The early signs of shingles usually develop in three stages over a few days."
    changed = sentence.replace("usually", "often")
    sources = (chunk("a", sentence), chunk("b", sentence), chunk("c", changed))
    assert quoted(extract_answer("What are the early signs of shingles?", sources)) == [
        ("a", sentence)
    ]


def test_a_title_repeated_in_the_text_is_no_answer() -> None:
    title = "The Effect of a Tobacco Use Reduction Program Among People Living With HIV."
    source = Chunk("t", "t", 1, 1, 0, len(title), title, (), title, "/t.txt")
    assert extract_answer(
        "What was the effect of the tobacco use reduction program?", (source,)
    ) == ("<no-answer/>")


def test_a_question_in_the_source_is_no_answer() -> None:
    question = "Who Should Not Get the Vaccine?"
    assert not worth_quoting(question, question)
    assert not worth_quoting('Did the "new policy" work?"', "x")
    said = "You should not get the shingles vaccine if you have shingles."
    assert worth_quoting(said, said)


def test_a_how_much_question_prefers_a_sentence_with_a_number_it_did_not_ask_about() -> None:
    text = (
        "Weight loss through moderate diet changes can delay or prevent type 2 diabetes in "
        "people at risk.\n\n"
        "A weight loss of 5 to 7 percent slowed the development of type 2 diabetes in people "
        "at risk."
    )
    reply = extract_answer("How much weight loss can delay type 2 diabetes?", (chunk("w", text),))
    assert quoted(reply)[0] == ("w", text.split("\n\n")[1])


def test_sentences_about_the_document_itself_are_not_quoted() -> None:
    text = (
        "This article mainly focuses on obstructive sleep apnea in adults.\n\n"
        "The animation below shows how obstructive sleep apnea occurs at night.\n\n"
        "Source: http://nihseniorhealth.gov/apnea/toc.html (MedQuAD 7_SeniorHealth_QA/1.xml). "
        "MedQuAD (CC BY 4.0), Ben Abacha and Demner-Fushman 2019."
    )
    assert quotable_units(text) == []


def test_a_list_repeated_with_an_item_more_is_quoted_once() -> None:
    shorter = HEART[HEART.index("The most common") : HEART.index("\n\nShortness")]
    sources = (chunk("a", HEART), chunk("b", shorter))
    reply = extract_answer("What are the most common warning symptoms of a heart attack?", sources)
    assert [ref for ref, _ in quoted(reply)] == ["a"]


def test_a_yes_no_question_prefers_the_rule_that_answers_it() -> None:
    text = (
        "Doses of 5 to 20 mg/kg given to monkeys for 7 days raised urea nitrogen in patients "
        "over the course of the study.\n\n"
        "No dosage adjustment is required in patients over the age of 65 years."
    )
    question = "Do patients over 65 need a lower dose?"
    assert answer_kind(question) == "yes_no"
    reply = extract_answer(question, (chunk("g", text),))
    assert quoted(reply)[0] == ("g", text.split("\n\n")[1])


def test_question_kinds_read_from_the_wording() -> None:
    kinds = {
        "How often should staff be trained?": "frequency",
        "How soon after mixing must it be used?": "when",
        "How quickly must the processor report a breach?": "when",
        "How old do patients have to be to take part?": "quantity",
        "After caring for a patient with C. diff, should I use soap?": "yes_no",
        "Can a lancet holder be shared between patients?": "yes_no",
        "How much weight loss helps?": "quantity",
        "Which drugs interact?": "other",
        "Which drugs, if any, are safe?": "other",
        "Why is hand rub preferred?": "cause",
        "What are the risk factors for sepsis?": "cause",
        "Does the drug cause birth defects?": "yes_no",
        "What can cause chest pain?": "cause",
        "What can sometimes cause chest pain?": "cause",
        "Which medicines can also cause drowsiness?": "cause",
        "What does the doctor think could cause my headache?": "cause",
        "What is the rash caused by?": "cause",
        "What side effects can this medicine cause in dogs?": "list",
        "Which problems does smoking cause?": "list",
        "What share of kidney failure is caused by diabetes?": "quantity",
        "How many fires have the recalled kettles caused?": "quantity",
        "How much damage was caused, and why?": "cause",
        "Is obesity a risk factor for wheezing?": "yes_no",
        "In what strengths is the injection available?": "quantity",
        "What share of adults owned their homes?": "quantity",
        "Where were the vulnerable counties mostly found?": "where",
        "What do the two clinics share?": "other",
        "What counted as uncontrolled asthma in the study?": "definition",
        "What experiences counted as energy insecurity?": "definition",
        "Which enzymes and transporters does the drug inhibit?": "list",
        "What are the usual five parts of a multimodal strategy?": "list",
        "What are the symptoms of shingles?": "list",
        "What are bed bugs?": "definition",
        "What happens after the infusion?": "other",
        "Which US region had the lowest lung cancer incidence?": "extreme",
        "What time does the pharmacy close on Saturday?": "when",
        "On Sundays, what time does it open?": "when",
        "By what time must children be collected?": "when",
        "What time zone is used?": "other",
        "By what date must the agency receive comments?": "when",
        "In which year did the program start?": "when",
        "What year group is the museum trip for?": "other",
        "What date format is used?": "other",
        "During which months was the survey fielded?": "when",
        "Over what period were the baseline data gathered?": "when",
        "In what years did the clinic run?": "when",
        "What time period does the report cover?": "when",
        "Which year groups go on the trip?": "other",
    }
    assert {question: answer_kind(question) for question in kinds} == kinds
    assert form_match("frequency", "Training is repeated annually.", "How often is training?")
    assert not form_match("frequency", "Training covers hand hygiene.", "How often is training?")
    assert form_match("when", "Use the vials immediately.", "How soon must it be used?")
    snack = "A light snack is served at 3:45 pm."  # a clock time is a time
    assert form_match("when", snack, "What time does the club serve a snack?")


def test_a_negated_question_prefers_the_negated_statement() -> None:
    text = (
        "The treatment duration for patients requiring mechanical ventilation is 10 days.\n\n"
        "Vials are kept below 30 degrees in the pharmacy.\n\n"
        "The treatment duration for patients not requiring mechanical ventilation is 5 days."
    )
    reply = extract_answer(
        "How long is treatment for patients not on mechanical ventilation?", (chunk("v", text),)
    )
    assert quoted(reply)[0] == ("v", text.split("\n\n")[2])
    reply = extract_answer(
        "How long is treatment for patients on mechanical ventilation?", (chunk("v", text),)
    )
    assert quoted(reply)[0] == ("v", text.split("\n\n")[0])


HYGIENE = (
    "Key situations where hand hygiene should be performed include:\n\n"
    "a. Before contact with a patient.\n\n"
    "b. If hands will be moving from a\n\n"
    "contaminated-body site to a clean-body site during patient care.\n\n"
    "c. After removal of personal protective equipment (PPE).\n\n"
    "2. Use soap and water when hands are visibly soiled."
)


def test_a_list_keeps_its_wrapped_items_and_ends_where_another_list_begins() -> None:
    spans = [HYGIENE[u.start : u.end] for u in quotable_units(HYGIENE)]
    assert HYGIENE[: HYGIENE.index("\n\n2.")] in spans
    assert not any(span.endswith("moving from a") for span in spans)
    reply = extract_answer("When should hand hygiene be performed?", (chunk("h", HYGIENE),))
    assert quoted(reply)[0] == ("h", HYGIENE[: HYGIENE.index("\n\n2.")])


SURFACES = (
    "Key recommendations for cleaning environmental surfaces:\n\n"
    "1. Establish policies for routine cleaning of surfaces.\n\n"
    "a. Policies should also address spills of blood.\n\n"
    "b. Policies should name who cleans.\n\n"
    "2. Select EPA-registered disinfectants with label claims for use in healthcare.\n\n"
    "3. Follow the manufacturer's recommendations for contact time.\n\n"
    "a. A note that starts a list of its own.\n\n"
    "Medical devices are labeled as reusable or single-use."
)


def test_a_numbered_list_goes_on_past_its_lettered_sub_items() -> None:
    def lists(text: str) -> list[str]:
        """The spans of the units whose core is a lead-in (quoted with its list)."""
        units = quotable_units(text)
        return [text[u.start : u.end] for u in units if text[u.core_end - 1] == ":"]

    # "a." and "b." under "1.", then "2." and "3." with its own "a."
    assert lists(SURFACES) == [SURFACES[: SURFACES.index("\n\nMedical")]]
    assert lists(HYGIENE)[0] == HYGIENE[: HYGIENE.index("\n\n2.")]  # "2." after "a."-"f."


def test_best_unit_similarity_is_that_of_the_closest_quotable_unit() -> None:
    question = "Must aseptic technique be used?"
    text = "Store the vials cold.\n\nAseptic technique must be used in preparation."
    embed = fake_embed({question: (1, 0, 0), "Store the vials cold.": (0, 1, 0)})
    assert best_unit_similarity(question, (chunk("a", text),), embed) == 0.0  # type: ignore[arg-type]
    embed = fake_embed(
        {question: (1, 0, 0), "Aseptic technique must be used in preparation.": (1, 0, 0)}
    )
    assert best_unit_similarity(question, (chunk("a", text),), embed) == pytest.approx(1.0)  # type: ignore[arg-type]
    assert best_unit_similarity(question, (), embed) == 0.0  # type: ignore[arg-type]


CHECKS = (
    "State / Territory Permit Handgun Long Gun Totals\n"
    "Alabama 18,870 23,022 22,650 71,137\n"
    "Alaska 209 3,062 3,209 7,095\n"
    "Texas 21,550 56,941 51,670 146,982\n"
    "Utah 6,102 7,030 6,911 21,055"
)


def test_a_table_laid_out_by_whitespace_is_quoted_row_by_row_after_its_header() -> None:
    rows = [u for u in quotable_units(CHECKS) if u.header is not None]
    assert [CHECKS[u.start : u.end].split()[0] for u in rows] == [
        "Alabama",
        "Alaska",
        "Texas",
        "Utah",
    ]
    reply = extract_answer("How many background checks were there in Texas?", (chunk("n", CHECKS),))
    header, texas = CHECKS.split("\n")[0], CHECKS.split("\n")[3]
    assert quoted(reply) == [("n", header), ("n", texas)]
    prose = "The checks rose in 2015.\nThey fell in 2016 after the change of 12 rules in 3 states."
    assert all(u.header is None for u in quotable_units(prose))


def test_the_units_offered_to_a_model_are_the_best_ones_best_first_none_repeated() -> None:
    """The offer starts with what the no-model answer quotes first, holds no unit that
    repeats a better one (here: a sentence in two sources) and at most OFFERED units."""
    repeated = "Vaccination every year is the best protection against influenza."
    sources = (chunk("a", FLU), chunk("b", f"{repeated}\n\nWash hands with soap often."))
    choice = choose_extractive("How does vaccination protect against influenza?", sources)
    offered = [sources["ab".index(ref)].text[s:e] for ref, s, e in choice.offered]
    assert offered[0] == quoted(choice.reply)[0][1] == repeated
    assert offered.count(repeated) == 1 and 1 < len(offered) <= OFFERED
    assert "Table 3 Influenza vaccination rates by age group and season" not in offered
    nothing = choose_extractive("rattlesnake antivenom", sources)
    assert nothing.reply == "<no-answer/>" and nothing.offered == ()


def test_the_text_under_a_heading_that_asks_the_question_comes_first() -> None:
    overview = "Sleep apnea is a leading cause of daytime sleepiness in adults."
    under_heading = (
        "What causes sleep apnea?\n\n"
        "Sleep apnea happens because the throat muscles relax and narrow the airway."
    )
    sources = (
        chunk("o", overview, ("Sleep apnea",)),
        chunk("c", under_heading, ("Sleep apnea",)),
    )
    reply = extract_answer("What causes obstructive sleep apnea?", sources)
    assert quoted(reply)[0] == ("c", under_heading.split("\n\n")[1])


def test_a_list_never_ends_on_an_item_that_leads_in_a_list_of_its_own() -> None:
    text = (
        "VEKLURY may cause serious side effects, including:\n\n"
        "• Liver problems. Your provider will test your blood.\n\n"
        "• Allergic reactions. Tell your provider if you get any of these signs:"
    )
    units = quotable_units(text)
    assert units and not any(text[u.start : u.end].endswith(":") for u in units)
    assert any(text[u.start : u.end].endswith("test your blood.") for u in units)


def test_a_why_question_prefers_the_sentence_that_gives_the_reason() -> None:
    """A sentence that restates the question shares more of its words than the one
    that gives the reason; the reason's causal form outweighs them."""
    text = (
        "Otherwise, the preferred method of hand hygiene in clinical situations is with an "
        "alcohol-based hand rub.\n\n"
        "Hand rub is recommended because it acts against a broad spectrum of pathogens and "
        "takes less time than washing."
    )
    question = "Why is alcohol-based hand rub preferred for hand hygiene in clinical situations?"
    reply = extract_answer(question, (chunk("h", text),))
    assert quoted(reply)[0] == ("h", text.split("\n\n")[1])


def test_a_dose_question_prefers_the_drug_amount_to_other_numbers() -> None:
    """A sentence about the dosing regimen with ages and body weights shares more of
    the question's words; the one with a drug amount (mg) answers it."""
    text = (
        "Using modeling, the recommended dosing regimen is expected to give adults of 12 years "
        "of age and older and weighing at least 40 kg the exposures observed in healthy "
        "adults.\n\n"
        "• Adults: a single loading dose of 200 mg on Day 1, then 100 mg once daily."
    )
    question = "What is the recommended dose of remdesivir for adults?"
    assert specific_form(question) and not specific_form("How many patients were enrolled?")
    assert specific_form("In what strengths is the injection available?")
    assert not form_match("quantity", text.split("\n\n")[0], question)
    reply = extract_answer(question, (chunk("d", text),))
    assert quoted(reply)[0] == ("d", text.split("\n\n")[1])


def test_a_when_question_prefers_a_day_s_date_to_a_time_any_sentence_holds() -> None:
    """Both sentences have a time ("before", "by") and the question's word; the one
    that gives the day answers, though the other comes first and says it twice."""
    general = (
        "Before acting on this proposal, the agency will consider all comments received "
        "by the closing date for comments."
    )
    deadline = "The agency must receive comments on this action by September 21, 2020."
    question = "When is the comment deadline?"
    assert not specific_form(question) and specific_form(question, deadline)
    assert specific_form("When does the clinic open?", "It opens at 8:30 a.m. daily.")
    assert specific_form("When was it signed?", "Signed 2020-09-21.")
    assert specific_form("What time does it close?", "Saturday | 09:00 | 17:30")
    assert not specific_form("What time does it close?", "Mix 1:50 with water.")
    assert not specific_form("When should gloves be worn?", "Wear them before contact.")
    assert not specific_form("How many comments came?", "By September 21, 2020, 12 came.")
    reply = extract_answer(question, (chunk("g", general), chunk("d", deadline)))
    assert quoted(reply)[0] == ("d", deadline)


def test_a_when_question_prefers_a_month_with_its_year_to_a_bare_year() -> None:
    """ "When did county become available?": the sentence that names the month and
    the year answers, though another names the year and shares more words."""
    question = "When did county become available as a field in the common data model?"
    year = "County became a new geographic unit of the common data model in 2023."
    month = "County information was added to the data model with release 6.1 in April 2023."
    assert specific_form(question, month) and not specific_form(question, year)
    assert specific_form("When was it fielded?", "We ran the survey in January and May 2022.")
    assert not specific_form("When was it fielded?", "We ran the survey in 2022.")
    reply = extract_answer(question, (chunk("y", year), chunk("m", month)))
    assert quoted(reply)[0] == ("m", month)


def test_a_quarter_of_a_year_is_a_time() -> None:
    """ "The third and fourth calendar quarters of 2015" answers "At what point in
    2015 ...?" (the year alone is the question's own), so no notice says that no quote
    gives a time; "three quarters of patients" is a share, no time."""
    question = "At what point in 2015 did hospital diagnosis coding change to ICD-10-CM?"
    quarters = (
        "Between the third and fourth calendar quarters of 2015, diagnostic coding of "
        "health care encounters changed from ICD-9-CM to ICD-10-CM."
    )
    assert form_match("when", quarters, question)
    assert missing_value(question, [quarters]) is None
    assert form_match("when", "Sales fell in the 2nd quarter of 2015.", "When did sales fall?")
    assert not form_match("when", "Three quarters of patients improved.", "When did they?")
    assert not form_match("when", "The first quarter of respondents agreed.", "When did they?")
    assert missing_value(question, ["Hospital coding changed to ICD-10-CM."]) == "a time"


def test_how_quickly_asks_a_delay_and_a_length_of_time_answers_it() -> None:
    """A needlestick policy: the opening hours (a clock time) do not say how soon the
    call must be made; "within one hour" does."""
    question = "How quickly do I have to ring Occupational Health after a needlestick?"
    call = "5.1 Staff must telephone Occupational Health within one hour of the injury."
    hours = "5.2 Outside Occupational Health opening hours (08:00 to 16:00) go to the ED."
    assert specific_form(question, call) and not specific_form(question, hours)
    assert not specific_form("When is the clinic open?", "Call within one hour.")
    diluted = "How soon after reconstitution must it be diluted?"
    assert specific_form(diluted, "After reconstitution, use vials immediately.")
    spill = "How quickly must a spill be reported?"
    assert specific_form(spill, "Report the spill before 5 p.m. on the day it happens.")
    assert not specific_form(spill, "Spill kits must be checked every 3 months.")
    reply = extract_answer(question, (chunk("p", f"{hours}\n\n{call}"),))
    assert quoted(reply)[0] == ("p", call)


def test_how_many_prefers_a_count_of_what_it_asks_about() -> None:
    """Both sentences hold a number near the question's words; the one whose number
    counts the sites answers "how many sites", though the other shares more words."""
    patients = "The queries on preventive services at the sites covered 30,783,825 patients."
    sites = "Both queries were performed by 36 PCORnet sites."
    question = "How many sites ran the queries on preventive services?"
    assert specific_form(question, sites) and not specific_form(question, patients)
    assert specific_form("How many coaching calls were held?", "There were 46 Zoom calls.")
    assert not specific_form("How many sites took part?", "Sites joined in 2019 (3,4).")
    reply = extract_answer(question, (chunk("p", f"{patients}\n\n{sites}"),))
    assert quoted(reply)[0] == ("p", sites)


def test_how_many_wants_a_count_of_what_it_asks_about_or_notices_it() -> None:
    """A number beside the sites that counts patients does not say how many sites ran
    the queries: the answer notices that no quote gives the number asked; "36 PCORnet
    sites" does; a dose question still takes any dose."""
    question = "How many sites ran the queries on preventive services?"
    patients = "The queries at the sites covered 30,783,825 patients."
    assert missing_value(question, [patients]) == "a number"
    assert missing_value(question, [patients, "Queries ran at 36 PCORnet sites."]) is None
    for after in ("The number of participating sites was 36.", "| Participating sites | 36 |"):
        assert missing_value(question, [after]) is None, after
    assert missing_value("How many of the sites withdrew?", ["One of the sites withdrew."]) is None
    dose = "How many milligrams is the loading dose?"
    assert missing_value(dose, ["The loading dose is 200 mg on day 1."]) is None
    doses = "How many doses of the vaccine are needed?"
    assert missing_value(doses, ["Two doses of the vaccine are needed."]) is None
    assert missing_value("How many times a day do I take it?", ["Take it twice a day."]) is None


def test_a_cost_question_wants_a_sum_of_money() -> None:
    """A newcomer's "How much does it cost visitors to park?" was answered with the
    visiting hours (numbers beside "visitors") and no notice: a cost is answered by a
    sum of money ("£2.50", "free"), and a notice says when no quote states one, in any
    wording ("What is the price of ...?")."""
    question = "How much does it cost visitors to park at the hospital?"
    hours = "Visiting hours for visitors at the hospital are 2 pm to 8 pm."
    parking = "Parking for visitors is free for up to 30 minutes."
    assert missing_value(question, [hours]) == "an amount of money"
    assert missing_value(question, [hours, parking]) is None
    price = "What is the price of one vial of remdesivir?"
    assert missing_value(price, ["Each vial holds 100 mg of remdesivir."]) == "an amount of money"
    study = "How much does it cost to take part in the study?"
    assert missing_value(study, ["There is no fee to take part in the study."]) is None
    assert missing_value(study, ["Participants are free to withdraw from the study."])
    drug = "How much does naltrexone cost?"
    assert missing_value(drug, ["Naltrexone is approved for AUD in adults."])
    assert missing_value(drug, ["Naltrexone costs AUD 40 a month."]) is None
    blocks = "How many blocks is the clinic from the station?"
    assert missing_value(blocks, ["The clinic is two blocks from the station."]) is None


def test_a_citation_of_references_is_no_quantity() -> None:
    """ "(2,3)" and "[4]" after a word and before a stop cite a paper's references;
    "(53%)" is a share and "(0–10)" a range."""
    question = "How many people joined the program?"
    for cited in ("(2,3)", "(13–15)", "[4]"):
        cites = f"Many people face barriers to joining {cited}."
        assert not form_match("quantity", cites, question)
    assert form_match("quantity", "Most people (53%) joined the program (4,5).", question)
    assert form_match("quantity", "People rated the program on a scale (0–10) of ease.", question)


def test_what_year_asks_a_year_and_a_length_of_years_does_not_give_one() -> None:
    question = "In which years were the schools assessed before and after the changes?"
    years = "We assessed the schools at baseline in 2018 and at follow-up in 2022."
    span = "The 3-year time frame allowed the schools to carry out the changes."
    assert specific_form(question, years) and not specific_form(question, span)
    assert specific_form("In which months is the pool shut?", "It shuts in May and June.")
    assert not specific_form("When is the deadline?", "Comments came in 2018.")
    between = "Lunch menus were reviewed by the district dietitian."
    reply = extract_answer(question, (chunk("s", f"{span}\n\n{between}\n\n{years}"),))
    assert quoted(reply)[0] == ("s", years)


def test_a_duration_is_a_number_with_a_unit_of_time() -> None:
    question = "Over how long should the drug be infused?"
    assert form_match("quantity", "Infuse over 30 to 120 minutes.", question)
    assert not form_match("quantity", "Dilute in 250 mL of saline.", question)
    assert form_match("quantity", "Dilute in 250 mL of saline.", "How much saline is used?")
    validate = "How long does the Safety Physician have to validate a signal?"
    for counted in ("30 calendar days", "5 working days", "4 business hours"):
        assert form_match("quantity", f"Validation is completed within {counted}.", validate)
    assert not form_match("quantity", "Validation is completed by 3 physicians.", validate)


def test_a_cause_answer_causes_what_is_asked_not_something_else() -> None:
    question = "What causes obstructive sleep apnea?"
    reverse = "Sleep apnea is a leading cause of daytime sleepiness."
    assert not form_match("cause", reverse, question)
    assert form_match("cause", "Extra weight often leads to obstructive sleep apnea.", question)
    assert form_match("cause", "The airway closes because the throat muscles relax.", question)


def test_a_reason_or_a_purpose_answers_why() -> None:
    """ "Why" is answered by a purpose ("to avoid", "in order to") as well as by a
    cause, and a question's own "reason" still marks the sentence that gives one."""
    why = "Why were the trends computed only up to 2019?"
    purpose = "Trends were computed before the pandemic to avoid the effect of postponed diagnoses."
    assert form_match("cause", purpose, why)
    assert not form_match("cause", "Trends were computed from 2015 through 2019.", why)
    reason = "What was the main reason students did not respond to the survey?"
    assert form_match("cause", "Absenteeism was the primary reason for nonresponse.", reason)
    assert not form_match("cause", "Students completed the survey during class time.", reason)


def test_a_question_for_several_things_is_answered_by_a_list_of_them() -> None:
    """ "Which X does Y inhibit?" asks for the things named, not for a sentence that
    mentions them as a class."""
    question = "Which drug-metabolizing enzymes and transporters does the drug inhibit?"
    vague = "The drug is an inhibitor of certain drug-metabolizing enzymes and transporters."
    named = "In vitro, the drug inhibits CYP3A4, OATP1B1, OATP1B3, and MATE1."
    assert form_match("list", named, question)
    assert form_match("list", "Harm came from 1) shared syringes, 2) reused vials.", question)
    assert not form_match("list", vague, question)
    reply = extract_answer(question, (chunk("v", vague), chunk("n", named)))
    assert quoted(reply)[0] == ("n", named)


def test_a_brand_name_carries_the_generic_name_its_title_declares() -> None:
    """A label says "ZENTRIX" where a user asks about valorimab: under a title that
    declares "ZENTRIX® (valorimab)", a sentence naming the brand holds the generic
    name's word."""
    section = ("Use",)
    label = Chunk("l", "l", 1, 1, 0, 0, "", section, "ZENTRIX® (valorimab) label › Use", "/l.txt")
    brand = "Give ZENTRIX 200 mg to adults once a day."
    generic = "Single valorimab vials hold 100 mg."
    sources = (chunk("g", generic, section), replace(label, text=brand, end=len(brand)))
    reply = extract_answer("What dose of valorimab do adults get?", sources)
    assert quoted(reply)[0] == ("l", brand)


def test_a_question_for_the_highest_or_lowest_is_answered_by_the_extreme() -> None:
    """ "Which region had the lowest incidence?" is answered by the sentence that
    names the lowest, not by one about incidence in general."""
    question = "Which US region had the lowest lung cancer incidence?"
    general = "State and regional trends in lung cancer incidence have not been described."
    extreme = "The lowest incidence and fastest declines were observed in the West."
    assert specific_form(question)
    assert form_match("extreme", extreme, question)
    assert not form_match("extreme", general, question)
    assert not form_match("extreme", "The highest incidence was in the South.", question)
    reply = extract_answer(question, (chunk("g", general), chunk("e", extreme)))
    assert quoted(reply)[0] == ("e", extreme)


def test_a_year_is_no_quantity() -> None:
    question = "How did cigarette smoking change among clients?"
    assert not form_match("quantity", "The program began in January 2015 with a partner.", question)
    assert form_match("quantity", "Smoking fell from 49.5% in 2015 to 41.5% in 2017.", question)
    assert form_match("when", "The program began in January 2015.", "When did it begin?")


def test_a_number_counts_as_an_amount_only_near_what_is_asked() -> None:
    question = "How much weight loss slows type 2 diabetes?"
    far = (
        "Weight loss slows type 2 diabetes, as the program's counsellors, nurses and "
        "dietitians told the families who came to the clinic in 38 towns."
    )
    near = "Weight loss of 5 to 7 percent slows type 2 diabetes in most adults at risk."
    assert not form_match("quantity", far, question)
    assert form_match("quantity", near, question)
    assert form_match("quantity", "It fell by 12 percent.", question)  # no term: by meaning
    source = chunk("w", f"{far}\n\nThe clinic opened on a Monday.\n\n{near}")
    assert quoted(extract_answer(question, (source,)))[0][1] == near


def test_a_who_question_prefers_the_sentence_that_names_someone() -> None:
    question = "Who argued for the petitioner?"
    assert answer_kind(question) == "who"
    unnamed = "The petitioner argued that the statute did not apply to the sale."
    named = "Jane Roe, Esq., argued the case for the petitioner on appeal."
    source = chunk("c", f"{unnamed}\n\nThe court sat in the spring.\n\n{named}")
    assert quoted(extract_answer(question, (source,)))[0][1] == named
    assert form_match("who", "ORAL ARGUMENT OF JOHN P. ELWOOD ON BEHALF OF THE STATE", question)
    assert not form_match("who", "Comments were received by the closing date.", question)


def test_no_further_quote_without_a_number_when_the_best_answers_how_much() -> None:
    question = "How much weight loss slows the onset of type 2 diabetes in older adults?"
    numbered = "A weight loss of 5 to 7 percent slowed type 2 diabetes in adults at risk."
    plain = "Weight loss through diet changes slowed the onset of type 2 diabetes in older adults."
    source = chunk("w", f"{numbered}\n\nThe clinic opened on a Monday.\n\n{plain}")
    assert quoted(extract_answer(question, (source,))) == [("w", numbered)]
    # a form that is no value (a rule or finding for yes/no) keeps every close quote
    asked = "Does weight loss slow the onset of type 2 diabetes in older adults?"
    assert len(quoted(extract_answer(asked, (source,)))) == 2


def test_a_change_question_wants_a_number_that_moved() -> None:
    question = "How did cigarette smoking change among clients of the program?"
    assert answer_kind(question) == "change"
    moved = "Cigarette smoking among clients fell from 49.5% in 2015 to 41.5% in 2017."
    counted = "The program enrolled clients of 16 service organizations to stop smoking."
    assert form_match("change", moved, question)
    assert not form_match("change", counted, question)
    source = chunk("m", f"{counted}\n\nThe clinic opened on a Monday.\n\n{moved}")
    assert quoted(extract_answer(question, (source,)))[0] == ("m", moved)


PAGE_BREAK_DOC = (
    "Alcohol hand rub is the preferred method of hand hygiene in clinics, as the agency "
    "recommends\n\n9\n\nVersion 2.3\n\nbecause it kills more germs than soap and takes less "
    "time at the bedside. Gloves do not replace hand hygiene in any setting.\n\n"
    "Reactions reported in fewer than 2% of patients are listed below:\n\n12\n\n"
    "• Generalized seizure\n\n• Rash"
)


def split_chunks(
    text: str, pieces: Sequence[str], section: tuple[str, ...] = ("S",)
) -> list[Chunk]:
    """Consecutive chunks of one document version, one per piece of `text` (in order)."""
    chunks, at = [], 0
    for ordinal, piece in enumerate(pieces):
        start = text.index(piece, at)
        at = start + len(piece)
        chunks.append(Chunk(f"d.{ordinal}", "d", 1, ordinal, start, at, piece, section, "L", "/d"))
    return chunks


def following_in(chunks: Sequence[Chunk]) -> Callable[[Chunk], Chunk | None]:
    by_ordinal = {c.ordinal: c for c in chunks}
    return lambda c: by_ordinal.get(c.ordinal + 1)


def test_a_sentence_cut_by_page_furniture_is_quoted_whole_from_both_chunks() -> None:
    first = PAGE_BREAK_DOC[: PAGE_BREAK_DOC.index("\n\n9")]
    second = PAGE_BREAK_DOC[PAGE_BREAK_DOC.index("because") : PAGE_BREAK_DOC.index("\n\nReac")]
    chunks = split_chunks(PAGE_BREAK_DOC, [first, second])
    question = "Why is alcohol hand rub preferred over soap?"
    alone = quoted(choose_extractive(question, chunks).reply)
    assert all(not text.startswith("Alcohol") or "because" not in text for _, text in alone)
    reply = choose_extractive(question, chunks, following=following_in(chunks)).reply
    [(ref, text), *_] = quoted(reply)
    assert ref == "d.0"
    assert text == first + JOIN + second  # a short paragraph is quoted whole
    passage = Passage.join(chunks)
    assert passage is not None and text in passage.text  # what resolving searches
    # the piece the second chunk holds alone is not quoted beside it
    assert all(not t.startswith("because") for _, t in quoted(reply))


def test_a_lead_in_at_a_chunk_end_is_quoted_with_the_list_in_the_next_chunk() -> None:
    lead = PAGE_BREAK_DOC[PAGE_BREAK_DOC.index("Reactions") : PAGE_BREAK_DOC.index("\n\n12")]
    items = PAGE_BREAK_DOC[PAGE_BREAK_DOC.index("• Gen") :]
    chunks = split_chunks(PAGE_BREAK_DOC, [lead, items])
    question = "Which reactions were reported in fewer than 2% of patients?"
    reply = choose_extractive(question, chunks, following=following_in(chunks)).reply
    assert quoted(reply)[0] == ("d.0", lead + JOIN + items)
    # a chunk whose only unit runs into the next is not moved behind the others
    hits = [
        Hit(source, 1.0, rank) for rank, source in enumerate((chunks[0], chunk("other", FLU)), 1)
    ]
    assert [h.chunk.ref for h in quotable_first(hits)] == ["other", "d.0"]
    moved = quotable_first(hits, following=following_in(chunks))
    assert [h.chunk.ref for h in moved] == ["d.0", "other"]


def test_chunks_are_not_joined_across_a_finished_sentence_or_a_new_section() -> None:
    question = "Why is alcohol hand rub preferred over soap?"
    finished = PAGE_BREAK_DOC.replace("recommends\n", "recommends.\n")
    for doc, sections in ((PAGE_BREAK_DOC, ("S", "T")), (finished, ("S", "S"))):
        first = doc[: doc.index("\n\n9")]
        second = doc[doc.index("because") : doc.index("\n\nReac")]
        chunks = [
            split_chunks(doc, [first, second], (section,))[n] for n, section in enumerate(sections)
        ]
        reply = choose_extractive(question, chunks, following=following_in(chunks)).reply
        assert quoted(reply) and all(JOIN not in text for _, text in quoted(reply))


def test_an_item_that_is_only_a_name_and_a_cross_reference_is_a_fragment() -> None:
    """An item whose lead-in is on an earlier page says nothing alone once its
    pointer to another section is set aside; a sentence with a pointer still does."""
    text = (
        "• Hypersensitivity reactions [see Warnings and Precautions (5.1)].\n\n"
        "• Stop the infusion at once if a severe reaction occurs (see Warnings) (5.1)."
    )
    units = [text[u.start : u.end] for u in quotable_units(text)]
    assert units == [text.split("\n\n")[1]]


def test_a_form_row_is_quoted_without_its_answer_boxes() -> None:
    """A checklist row's "Yes No" boxes are no words of the source's rule; a data
    cell that says "Yes" is kept."""
    text = (
        "B. Policies are re-assessed at least annually, and updated if appropriate. | Yes No |\n"
        "Penicillin allergy reported by the patient | Yes"
    )
    first = text.index("\n")
    rows = [(0, first), (first + 1, len(text))]
    units = [text[u.start : u.end] for u in quotable_units(text, rows)]
    assert units == [
        "B. Policies are re-assessed at least annually, and updated if appropriate.",
        "Penicillin allergy reported by the patient | Yes",
    ]


def test_a_form_laid_out_as_text_is_quoted_without_its_header_and_boxes() -> None:
    """In a checklist laid out as text, an item's sentence starts at its marker: not
    with the column header run into it, nor with the answer boxes of the item before."""
    text = (
        "Elements to be assessed Assessment Notes/Areas for\nImprovement\n"
        "K. Devices are dried thoroughly prior to reuse.\nYes No\nNot applicable\n"
        "L. After high-level disinfection, devices are stored to protect them.\n"
        "Yes No\nNot applicable\n"
        "M. Facility maintains a log for each endoscopy procedure with the patient's name.\n"
        "Yes No\nNot applicable"
    )
    units = [text[u.start : u.end] for u in quotable_units(text)]
    assert units[0] == "K. Devices are dried thoroughly prior to reuse."
    log = "M. Facility maintains a log for each endoscopy procedure with the patient's name."
    assert log in units
    assert not any(u.startswith(("Elements", "Yes", "No", "Not applicable")) for u in units)


def test_captions_table_titles_footnotes_and_reference_entries_are_no_units() -> None:
    """An article's caption split at its number ("Table 2." then the title), a table
    title run into a year with its footnote mark, a table footnote marked "a" and an
    entry of its reference list are not quoted; the finding is."""
    finding = "Overall, 29.3% of children and 25.9% of adolescents ate 5 or more servings a day."
    text = "\n\n".join(
        (
            "Table 2. Prevalence Ratios Comparing Consumption of 5 or More Servings of Fruits "
            "and Vegetables Among Children and Adolescents, California Health Interview Surveya",
            "Trends in Inadequate and Excessive Weight Gain Among Live Full Term Singleton "
            "Births, Unadjusted and Adjusted for Lifestyle Factors, South Carolina, 2015–2021b",
            "a Based on combined 2-year data files from the California Health Interview Survey.",
            "Weighted estimates are shown. b Data were from the COMPASS study, "
            "which annually collects survey data from approximately 60,000 students.",
            "Ugai T, Sasamoto N, Lee HY, et al. . Is early-onset cancer an emerging global "
            "epidemic? Nat Rev Clin Oncol. 2022;19(10):656–673. PubMed doi:10.1038/s41571",
            "US Census Bureau. National Survey of Children's Health frequently asked questions. "
            "Published October 2022. Accessed October 6, 2022. https://www.census.gov/nsch",
            finding,
        )
    )
    units = [text[u.start : u.end] for u in quotable_units(text)]
    assert units == [finding]


def test_a_reference_list_is_no_answer() -> None:
    """Nothing under a "References" heading is quoted, however well it matches."""
    entry = "Kentsis A. Why do young people get cancer, and how often do they get it now?"
    finding = "Young adults get cancer more often in the southern states than elsewhere."
    sources = (
        chunk("r", entry, ("Cancer in young adults", "References")),
        chunk("f", finding, ("Cancer in young adults", "Results")),
    )
    reply = extract_answer("Why do young people get cancer?", sources)
    assert quoted(reply) == [("f", finding)]


def test_a_share_is_a_percentage_and_a_place_is_named() -> None:
    """ "What share" asks for a part of a whole, not for any number; "where" for a
    place, near what is asked."""
    question = "What percentage of the survey respondents were homeowners?"
    assert specific_form(question)
    assert form_match("quantity", "Most respondents (66.8%) were homeowners.", question)
    assert form_match("quantity", "One in 5 respondents were homeowners.", question)
    assert not form_match("quantity", "We analyzed data from 401,958 respondents.", question)
    odds = "Renters had 1.38 higher odds of kidney disease than homeowners (95% CI, 1.22-1.56)."
    assert not form_match("quantity", odds, question)
    where = "Where were the counties without a dental shortage designation found?"
    assert form_match("where", "These counties were mostly in the southern United States.", where)
    assert not form_match("where", "These counties were overlooked by the program.", where)


@pytest.mark.parametrize("work", ["study", "audit"])
def test_a_statement_of_a_study_aim_loses_to_its_finding(work: str) -> None:
    """ "The objective of this study (audit) was to examine X" repeats the topic of a
    question about X; the sentence that says what was found answers it, unless the
    question asks for the aim."""
    aim = (
        f"The objective of this {work} was to examine the association between household "
        "energy insecurity and diabetes prevalence across states."
    )
    finding = (
        "Household energy insecurity was highest in Mississippi and lowest in Vermont, "
        "and diabetes prevalence followed the same pattern."
    )
    sources = (chunk("a", aim), chunk("f", finding))
    question = f"What did the {work} show on household energy insecurity and diabetes prevalence?"
    assert quoted(extract_answer(question, sources))[0] == ("f", finding)
    asked = f"What was the objective of the household energy insecurity and diabetes {work}?"
    assert quoted(extract_answer(asked, sources))[0] == ("a", aim)


def test_what_counts_as_something_is_answered_by_its_definition() -> None:
    """ "What counted as X?" and "How was X decided?" ask for a criterion: the sentence
    that defines or classifies it, not one that only uses the term."""
    question = "What counted as uncontrolled asthma in the cost-savings study?"
    uses = (
        "We projected cost savings of the home visiting model for all children with "
        "uncontrolled asthma in the state."
    )
    defines = "Uncontrolled asthma was defined as 2 or more asthma-related emergency visits."
    assert specific_form(question)
    assert form_match("definition", defines, question)
    assert not form_match("definition", uses, question)
    reply = extract_answer(question, (chunk("u", uses), chunk("d", defines)))
    assert quoted(reply)[0] == ("d", defines)


GLOSSARY = (
    "2. Definitions\n\nEscalation\n\nThe transfer of a ticket to a higher support tier.\n\n"
    "Incident commander\n\nThe on-call engineering manager who owns the resolution of a "
    "Severity 1 incident.\n\nThe duty manager informs customers every hour until it is closed."
)
DEFINED = "The on-call engineering manager who owns the resolution of a Severity 1 incident."
USES = "For Severity 1 tickets, the Tier 2 lead pages the incident commander within 10 minutes."


@pytest.mark.parametrize("with_model", [True, False])
def test_a_glossary_term_is_answered_by_its_definition_with_the_term(with_model: bool) -> None:
    """ "What is X?" over a glossary (a term on its own line over its definition, as an
    HTML <dl> or a Word glossary gives it): the definition, quoted from its term's line,
    though a sentence that uses the term shares more of the question's words (and,
    here, stands as close to it in meaning)."""
    sources = (chunk("u", USES), chunk("g", GLOSSARY))
    for question in (
        "What is an incident commander?",
        "What does the policy mean by incident commander?",
    ):
        embed = fake_embed({question: (1, 0, 0), DEFINED: (0.9, 0.3, 0), USES: (0.9, 0.5, 0)})
        reply = extract_answer(question, sources, embed if with_model else None)  # type: ignore[arg-type]
        assert quoted(reply) == [("g", f"Incident commander\n\n{DEFINED}")]  # its first text


def test_a_sub_section_named_for_the_term_answers_but_not_a_document_titled_so() -> None:
    """Under a sub-section's heading ("Definitions › Incident commander") the first
    text is the definition; every chunk of an article stands under its title, so the
    first text of any of them is none."""
    question = "What is an incident commander?"
    embed = fake_embed({question: (1, 0, 0), DEFINED: (0.9, 0.3, 0), USES: (0.9, 0.5, 0)})
    defined = chunk("g", DEFINED, ("2. Definitions", "Incident commander"))
    uses = chunk("u", USES)
    assert quoted(extract_answer(question, (uses, defined), embed))[0] == ("g", DEFINED)  # type: ignore[arg-type]
    titled = chunk("g", DEFINED, ("Incident commander",))
    assert quoted(extract_answer(question, (uses, titled), embed))[0] == ("u", USES)  # type: ignore[arg-type]


def test_a_heading_names_the_subject_when_it_names_just_that() -> None:
    question = "What is an incident commander?"
    assert heading_names_subject(question, "2.3 Incident Commander")
    assert heading_names_subject("What is sleep apnea?", "What Is Sleep Apnea?")
    assert not heading_names_subject(question, "Incident commander duties")
    assert not heading_names_subject(question, "Incident")
    assert not heading_names_subject("Who is the incident commander?", "Incident commander")
    in_policy = "What does incident commander mean in the escalation policy?"
    assert answer_kind(in_policy) == "definition"
    assert heading_names_subject(in_policy, "Incident commander")
    assert heading_names_subject("What does the term SLA mean?", "4. SLA")
    assert heading_names_subject("What is Severity 1?", "Section 3: Severity 1")
    assert not heading_names_subject("What is Severity 1?", "Severity")
    assert not heading_names_subject("What is the maximum dose?", "Maximum dose")  # a quantity
    for pronoun in ("What does it mean when the red light flashes?", "What do you mean by X?"):
        assert answer_kind(pronoun) == "other"


def test_a_passage_about_another_population_is_no_answer() -> None:
    label = (
        "The recommended dosage in adults is 400 mg every 4 weeks.\n\n"
        "Store the vials refrigerated at 2 to 8 degrees."
    )
    pediatric = "The recommended dosage is 10 mg/kg every 4 weeks."
    sources = (chunk("a", label), chunk("p", pediatric, ("8.4 Pediatric Use",)))
    for_children = quoted(extract_answer("What is the recommended dosage for children?", sources))
    assert for_children == [("p", pediatric)]  # its heading names the population
    adult_only = sources[:1]
    children = extract_answer("What is the recommended dosage for children?", adult_only)
    assert "400 mg" not in children
    adults = quoted(extract_answer("What is the recommended dosage in adults?", sources))
    assert adults == [("a", "The recommended dosage in adults is 400 mg every 4 weeks.")]
    anyone = quoted(extract_answer("What is the recommended dosage?", adult_only))
    assert anyone == [("a", "The recommended dosage in adults is 400 mg every 4 weeks.")]


def test_a_heading_on_the_first_line_of_a_paragraph_is_left_out_of_its_units() -> None:
    text = "Purpose\nThis policy describes how nurses on Ward 7B prevent patient falls."
    assert [text[u.start : u.end] for u in quotable_units(text)] == [text[8:]]
    wrapped = "Remdesivir is a\nnucleotide analog that inhibits viral RNA synthesis."
    assert [wrapped[u.start : u.end] for u in quotable_units(wrapped)] == [wrapped]
    sentence = "Patients who fall at\nNight are checked every hour by the nurse."  # "at" ends it
    assert [sentence[u.start : u.end] for u in quotable_units(sentence)] == [sentence]


def test_a_statement_that_quotes_a_question_or_names_a_video_is_quotable() -> None:
    quoting = (
        "Diabetes status was based on self-report, ascertained with the question, "
        "\u201cHas a doctor ever told you that you had diabetes?\u201d"
    )
    naming = "Meetings with legislative offices moved to an online video forum in 2020."
    asking = "Has a doctor ever told you that you had diabetes?"
    about_the_page = (
        "Watch the video to learn how exercise helped one woman.",
        "Watch this short video about inhaler technique.",
        "In the video, a nurse shows how to hold the inhaler.",
        "The above video shows proper handwashing at the sink.",
    )
    stray_quote = 'What did the "expert panel" decide about the new dosing schedule?"'
    text = "\n\n".join((quoting, naming, asking, *about_the_page, stray_quote))
    assert [text[u.start : u.end] for u in quotable_units(text)] == [quoting, naming]


LEAFLET = (
    "3. HOW TO TAKE PARACETAMOL\n\n"
    "Tablets - Adults and children aged 16 years and over:\n"
    "Take 1 or 2 tablets (500 mg to 1000 mg) every 4 to 6 hours as needed. Do not take more\n"
    "than 8 tablets (4000 mg) in 24 hours.\n\n"
    "Oral suspension (250 mg/5 ml) - Children:\n"
    "Children aged 6 to 8 years: 5 ml every 4 to 6 hours.\n"
    "Children aged 8 to 10 years: 7.5 ml every 4 to 6 hours.\n"
    "Do not give more than 4 doses in 24 hours. Do not give to children under 6 years; a\n"
    "weaker suspension (120 mg/5 ml) is available for younger children.\n"
)


@pytest.mark.parametrize(
    "question",
    [
        "What is the paracetamol oral suspension dose for children under 6 years?",
        "How much paracetamol suspension can I give my 3 year old?",
    ],
)
def test_a_dose_for_other_ages_is_no_answer(question: str) -> None:
    # a newcomer's leaflet: the dose for children under 6 was answered with the
    # 6-to-8 and 8-to-10 lines, and the sentence saying not to give it was cut at "; a"
    # (the paragraph, full of numbers, was read as a table laid out by whitespace)
    shown = quoted(extract_answer(question, (chunk("l", LEAFLET),)))
    texts = " ".join(text for _, text in shown)
    assert "Do not give to children under 6 years; a\nweaker suspension" in texts
    assert "aged 6 to 8" not in texts and "aged 8 to 10" not in texts and "16 years" not in texts


def test_a_paragraph_of_sentences_with_numbers_is_no_laid_out_table() -> None:
    units = [LEAFLET[u.start : u.end] for u in quotable_units(LEAFLET)]
    assert "Do not give to children under 6 years; a" not in units
    assert any(u.endswith("available for younger children.") for u in units)
    table = "State Checks Denials Rate\nAlabama 1,204 31 2.6\nAlaska 310 4 1.3\nArizona 905 22 2.4"
    rows = [table[u.start : u.end] for u in quotable_units(table)]
    assert "Alaska 310 4 1.3" in rows  # a laid-out table's rows are still rows


PRICE_LIST = (
    "Private services and fees\n\n"
    "Flu vaccination (adults 18 and over): £16.99\n\n"
    "Weight management consultation: £30 for the first visit, £20 for follow-ups\n\n"
    "Ear wax removal (microsuction): £45 for one ear, £60 for both ears\n\n"
    "Chapter 3: Dosing\n\n"
    "Section 1: Facility Demographics Section 2: Infection Control Program\n\n"
    "We do not vaccinate children under 18 at the pharmacy."
)


def test_an_entry_that_gives_a_value_after_its_label_is_quotable() -> None:
    # a newcomer's price list (HTML list items): "Ear wax removal ...: £45 ..." read as a
    # heading, short and unpunctuated, and was never quoted; the question was refused
    units = [PRICE_LIST[u.start : u.end] for u in quotable_units(PRICE_LIST)]
    assert "Ear wax removal (microsuction): £45 for one ear, £60 for both ears" in units
    assert "Chapter 3: Dosing" not in units and "Private services and fees" not in units
    assert not any(unit.startswith("Section 1") for unit in units)  # a contents line
    shown = quoted(extract_answer("How much does ear wax removal cost?", (chunk("p", PRICE_LIST),)))
    assert shown[0] == ("p", "Ear wax removal (microsuction): £45 for one ear, £60 for both ears")


HOURS = (
    "Opening hours\n\n"
    "Day | Open | Close\n"
    "Monday to Friday | 08:30 | 19:00\n"
    "Saturday | 09:00 | 17:30\n"
    "Sunday | 10:00 | 14:00\n\n"
    "The pharmacy is closed on 25 December, 26 December and 1 January.\n\n"
    "The pharmacist takes a lunch break from 13:00 to 13:30 on weekdays."
)
FEES = (
    "| Service | Fee | Turnaround |\n|---|---|---|\n"
    "| Travel vaccination consultation | £40 | same day |\n"
    "| Insurance report (up to 2 pages) | £110 | 10 working days |"
)


def body_rows(text: str, first: str) -> list[tuple[int, int]]:
    """The spans of the lines of `text` from the one starting with `first` to the end of
    its paragraph, without a Markdown row's outer "| " and " |"."""
    start = text.index(first)
    end = text.find("\n\n", start)
    spans, at = [], start
    for line in text[start : len(text) if end < 0 else end].split("\n"):
        inner = line.strip("| ")
        lo = text.index(inner, at)
        spans.append((lo, lo + len(inner)))
        at = lo + len(inner)
    return spans


def test_a_table_row_is_scored_with_its_column_names() -> None:
    hours = chunk("h", HOURS)
    units = candidates_of([hours], lambda c: body_rows(c.text, "Monday"))
    rows = [u.core for u in units if u.table is not None]
    assert rows == [
        "Day: Monday to Friday; Open: 08:30; Close: 19:00",
        "Day: Saturday; Open: 09:00; Close: 17:30",
        "Day: Sunday; Open: 10:00; Close: 14:00",
    ]
    fees = candidates_of([chunk("f", FEES)], lambda c: body_rows(c.text, "| Travel"))
    assert [u.core for u in fees][-1] == (
        "Service: Insurance report (up to 2 pages); Fee: £110; Turnaround: 10 working days"
    )


def test_the_row_a_question_names_is_quoted_alone() -> None:
    hours = chunk("h", HOURS)
    rows = lambda c: body_rows(c.text, "Monday")  # noqa: E731
    question = "What time does the pharmacy close on Saturday?"
    assert quoted(extract_answer(question, (hours,), table_rows=rows)) == [
        ("h", "Saturday | 09:00 | 17:30")
    ]


def test_no_row_answers_for_an_item_the_table_does_not_list() -> None:
    # a newcomer's dental price list answered "How much does a root canal cost?" with
    # the row of a tooth extraction, another treatment's price
    fees = chunk("f", FEES, ("Clinic fees",))
    rows = lambda c: body_rows(c.text, "| Travel")  # noqa: E731
    shown = quoted(
        extract_answer("How much does a root canal treatment cost?", (fees,), None, rows)
    )
    assert not any("|" in text for _, text in shown if text)
    asked = "How much does a travel vaccination consultation cost?"
    assert quoted(extract_answer(asked, (fees,), None, rows)) == [
        ("f", "Travel vaccination consultation | £40 | same day")
    ]
    hours = chunk("h", HOURS)
    days = lambda c: body_rows(c.text, "Monday")  # noqa: E731
    assert quoted(
        extract_answer("What are the opening hours on weekdays?", (hours,), None, days)
    ) == [("h", "Monday to Friday | 08:30 | 19:00")]


SHIPPING = (
    "Shipping times\n\n"
    "Service | Destination | Delivery time | Price\n"
    "Standard | UK mainland | 3-5 working days | £3.95\n"
    "Express | UK mainland | next working day | £7.99\n"
    "International | Republic of Ireland | 4-6 working days | £9.95\n\n"
    "Orders placed before 2 pm on a working day are dispatched the same day."
)


def test_a_price_is_answered_from_any_cell_of_its_row_never_from_items_listed_apart() -> None:
    # a newcomer: Ireland's price was no answer (its name is no row's first cell), and
    # "Express to Ireland" showed rows of Express to the UK and of Ireland by post
    shipping = chunk("s", SHIPPING, ("Customer support policy",))
    rows = lambda c: body_rows(c.text, "Standard")  # noqa: E731
    asked = "How much does delivery to the Republic of Ireland cost?"
    assert quoted(extract_answer(asked, (shipping,), None, rows)) == [
        ("s", "International | Republic of Ireland | 4-6 working days | £9.95")
    ]
    asked = "How much does Express delivery to the Republic of Ireland cost?"
    shown = quoted(extract_answer(asked, (shipping,), None, rows))
    assert not any("|" in text for _, text in shown if text)
    asked = "How much does Express delivery cost compared with Standard?"
    shown = quoted(extract_answer(asked, (shipping,), None, rows))
    compared = "\n".join(text for _, text in shown if text)  # both rows, by name
    assert "Standard | UK mainland" in compared and "Express | UK mainland" in compared


WEEK = (
    "Opening times\n\n"
    "Day | Open | Close\n"
    "Monday to Friday | 08:30 | 19:00\n"
    "Weekends | 10:00 | 14:00\n\n"
    "The pharmacy is closed on 25 December, 26 December and 1 January."
)


@pytest.mark.parametrize(
    ("question", "row"),
    [
        ("What time does the pharmacy close on Wednesday?", "Monday to Friday | 08:30 | 19:00"),
        ("What time does the pharmacy open on Saturday?", "Weekends | 10:00 | 14:00"),
    ],
)
def test_a_row_for_a_range_of_days_answers_for_each_of_them(question: str, row: str) -> None:
    # a review: rows of "Monday to Friday" and "Weekends" were no answer for a day in them
    week = chunk("w", WEEK, ("Pharmacy",))
    rows = lambda c: body_rows(c.text, "Monday")  # noqa: E731
    assert quoted(extract_answer(question, (week,), None, rows))[0] == ("w", row)


def test_only_a_price_question_drops_a_table_that_lists_nothing_it_names() -> None:
    week = chunk("w", WEEK, ("Pharmacy",))
    rows = lambda c: body_rows(c.text, "Monday")  # noqa: E731
    for question in ("What are the pharmacy's opening hours?", "Which day does it close earliest?"):
        assert any(
            "|" in text for _, text in quoted(extract_answer(question, (week,), None, rows)) if text
        )


LEDGER = (
    "DOCUMENT NO. DATE PAYEE NAME DESCRIPTION AMOUNT ($)\n"
    "KXR20230011 04/02/2023 CITIBANK - TRAVEL CARD 03/14/2023 03/15/2023 STAFF\n"
    "TRANSPORTATION 412.50\n"
    "AIRFARE FOR T OKAFOR DENVER TO WASHINGTON DC AND RETURN\n"
    "KXR20230012 04/09/2023 CITIBANK - MEMBER CARD 03/20/2023 03/21/2023 MEMBER'S\n"
    "TRANSPORTATION 188.00\n"
    "TRAIN FARE FOR REP LINDQVIST WASHINGTON DC TO PHILADELPHIA AND RETURN"
)


def test_a_ledger_s_lines_are_quoted_with_the_lines_around_them() -> None:
    # a newcomer's Senate expense report (PDF text of records in capitals, no sentence)
    # had no quotable unit: ask left it out and said no source mentioned the senator
    question = "How much was the train fare for Rep Lindqvist to Philadelphia?"
    shown = quoted(extract_answer(question, (chunk("l", LEDGER),)))
    assert shown[0] == (
        "l",
        "TRANSPORTATION 188.00\n"
        "TRAIN FARE FOR REP LINDQVIST WASHINGTON DC TO PHILADELPHIA AND RETURN",
    )
    assert quotable_units("CONTENTS\n1 Scope 4\n2 Dosing 9\n3 Storage and handling 12") == []


def test_a_sentence_broken_before_its_amount_is_quoted_whole() -> None:
    # a newcomer's Federal Register notice: the quote stopped at "... per operator to
    # be", a blank line of the PDF text before "$7,650 (90 work-hours ...)."
    text = (
        "Costs of Compliance\n\n"
        "Therefore, the agency estimates the average total cost per operator to be\n\n"
        "$7,650 (90 work-hours × $85 per work-hour).\n\n"
        "Prices\n\n$5 per item is charged for copies."
    )
    units = [text[u.start : u.end] for u in quotable_units(text)]
    assert (
        "Therefore, the agency estimates the average total cost per operator to be\n\n"
        "$7,650 (90 work-hours × $85 per work-hour)." in units
    )
    assert "$5 per item is charged for copies." in units  # after a heading: its own


def test_a_cost_table_row_with_dot_leaders_is_no_contents_line() -> None:
    # a newcomer's Federal Register notice: its cost table's rows have dot leaders and
    # were left out as contents lines, so "the cost of the sensor test" was never quoted
    text = (
        "ESTIMATED COSTS\n\nAction Labor cost Parts cost Cost per product\n"
        "Wiring change ........................ Up to 79 work-hours × $85 per hour =\n"
        "Up to $6,715.\nUp to $3,790 ......... Up to $10,505 ....... Up to $766,865.\n"
        "Sensor system test ....................... 40 work-hours × $85 per hour =\n"
        "$3,400.\n$0 .......................... $3,400 ................... $248,200.\n\n"
        "1.1 Introduction ........................ 5"
    )
    units = [text[u.core_start : u.core_end] for u in quotable_units(text)]
    assert "Sensor system test ....................... 40 work-hours × $85 per hour =\n$3,400." in (
        units
    )
    assert not any("Introduction" in unit for unit in units)


def test_a_table_of_contents_gives_no_record_lines() -> None:
    # a review: record lines made a contents page quotable (one line held a date)
    contents = (
        "Decisions on school closures during the winter ..... 9\n"
        "Minutes of the meeting held on 12/03/2019 in the hall ..... 11\n"
        "Budget for the spring term and the summer term ..... 14"
    )
    assert quotable_units(contents) == []


FLOORS = (
    "Assembly points\n\n"
    "Floors | Assembly point | Location\n"
    "1 to 4 | AP1 | Rear car park, Dock Road entrance\n"
    "5 to 8 | AP2 | Corner of Quay Street and Mill Lane\n"
    "9 to 12 | AP3 | St Anne's Green, north gate"
)


def test_a_row_for_a_range_of_numbers_answers_for_a_number_in_it() -> None:
    """A newcomer's "Where do people from the 10th floor assemble?" quoted no row: the
    row keyed "9 to 12" covers the 10th floor."""
    floors = chunk("f", FLOORS, ("Fire procedure",))
    rows = lambda c: body_rows(c.text, "1 to 4")  # noqa: E731
    question = "Where do people from the 10th floor assemble after leaving the building?"
    shown = [text for _, text in quoted(extract_answer(question, (floors,), None, rows))]
    assert shown[0] == "9 to 12 | AP3 | St Anne's Green, north gate"


AGES = (
    "Dosage\n\n"
    "Age | Dose (120 mg/5 mL) | Maximum doses in 24 hours\n"
    "3 to 6 months | 2.5 mL | 4\n"
    "6 to 24 months | 5 mL | 4\n"
    "2 to 4 years | 7.5 mL | 4\n"
    "4 to 6 years | 10 mL | 4"
)


def test_the_row_for_the_asked_range_is_named_not_rows_sharing_one_bound() -> None:
    """For "children aged 2 to 4 years" the rows "4 to 6 years" and "3 to 6 months"
    were shown too: each covers the 4 of the question, but one row covers 2, 4 and
    years."""
    ages = chunk("a", AGES, ("Paracetamol leaflet",))
    rows = lambda c: body_rows(c.text, "3 to 6 months")  # noqa: E731
    question = "What is the dose for children aged 2 to 4 years?"
    shown = [text for _, text in quoted(extract_answer(question, (ages,), None, rows))]
    assert shown == ["2 to 4 years | 7.5 mL | 4"]


CLINICS = (
    "Clinic times and locations\n\n"
    "Clinic | Address | Days | Hours\n"
    "Main Hospital Outpatients, Clinic 7 | Moor Road | Monday to Friday | 8:30am - 6:30pm\n"
    "Riverside Health Centre | 22 Quay Street | Tuesday and Thursday | 9:00am - 4:00pm\n"
    "Hollin Green Community Hall | Church Lane | Saturday | 9:00am - 1:00pm\n"
    "Mobile unit (housebound patients) | Home visits | Wednesday | 10:00am - 3:00pm"
)


@pytest.mark.parametrize(
    ("question", "row"),
    [
        ("Which clinic is open on Saturdays, and at what times?", "Hollin Green Community Hall"),
        ("Which clinic is in Quay Street?", "Riverside Health Centre"),
    ],
)
def test_a_day_in_any_cell_names_its_row_and_a_column_name_names_none(
    question: str, row: str
) -> None:
    """A newcomer's "Which clinic is open on Saturdays?" was answered with the row
    "Main Hospital Outpatients, Clinic 7" (its key holds "clinic", the first column's
    own name) and not with the row whose Days cell says Saturday."""
    clinics = chunk("c", CLINICS, ("Winter vaccination clinics",))
    rows = lambda c: body_rows(c.text, "Main Hospital")  # noqa: E731
    shown = [text for _, text in quoted(extract_answer(question, (clinics,), None, rows))]
    assert [text.split(" | ")[0] for text in shown] == [row]


PRICES = (
    "Dental charges\n\n"
    "Treatment | Price\n"
    "Check-up | £25\n"
    "Filling | £70\n"
    "Root canal treatment | £310\n"
    "Crown | £450"
)
SERVICES = (
    "Contacts\n\n"
    "Service | Hours | Phone\n"
    "Surgery | 8am - 6:30pm | 01632 960 200\n"
    "Pharmacy | 9am - 5pm | 01632 960 300\n"
    "Out-of-hours service | 6:30pm - 8am | 111"
)
PHARMACIES = (
    "Sunday pharmacy rota\n\n"
    "Pharmacy | Address | Notes\n"
    "Boots | 4 High Street | Closed Sunday\n"
    "Lloyds | 12 Market Square | Open 7 days, 10am - 4pm\n"
    "Well Pharmacy | 3 Sun Lane | Late opening Thursday"
)


@pytest.mark.parametrize(
    ("table", "first", "question", "wanted"),
    [
        (
            PRICES,
            "Check-up",
            "How much do a filling and a root canal treatment cost?",
            ["Filling | £70", "Root canal treatment | £310"],
        ),
        (
            SERVICES,
            "Surgery",
            "What number do I ring for the out-of-hours service?",
            ["Out-of-hours service | 6:30pm - 8am | 111"],
        ),
    ],
)
def test_rows_named_by_unequal_terms_or_by_a_later_column_word_stay_named(
    table: str, first: str, question: str, wanted: list[str]
) -> None:
    """A review of the rule that names only the rows holding the most of a question's
    names: "a filling and a root canal treatment" lost the filling's row, and leaving
    out every column's name lost "service" of the out-of-hours row (only the first
    column's name names no row)."""
    rows = lambda c: body_rows(c.text, first)  # noqa: E731
    answer = extract_answer(question, (chunk("t", table, ("Charges",)),), None, rows)
    assert "\n".join(text for _, text in quoted(answer)).splitlines() == wanted


def test_a_day_a_place_is_closed_or_a_street_name_names_no_row() -> None:
    """For "Which pharmacy is open on Sunday?" the row "Well Pharmacy | 3 Sun Lane" was
    shown alone ("Sun" read as Sunday), not the row open 7 days."""
    rows = lambda c: body_rows(c.text, "Boots")  # noqa: E731
    question = "Which pharmacy is open on Sunday?"
    answer = extract_answer(question, (chunk("p", PHARMACIES, ("Rota",)),), None, rows)
    assert any("Lloyds | 12 Market Square" in text for _, text in quoted(answer))


LEVELS = (
    "Trough levels\n\n"
    "Trough (mg/L) | Action\n"
    "Less than 1 | Give the next dose as planned\n"
    "1 to 2 | Extend the dosing interval by 12 hours\n"
    "More than 2 | Withhold the drug and contact pharmacy"
)


def test_a_row_for_a_range_answers_for_a_decimal_number_in_it() -> None:
    """ "1.5" is no word: split into "1" and "5" it named the "Less than 1" row as
    much as the "1 to 2" row that covers it."""
    levels = chunk("t", LEVELS, ("Monitoring",))
    rows = lambda c: body_rows(c.text, "Less than 1")  # noqa: E731
    question = "Which action for a trough of 1.5 mg/L?"
    shown = [text for _, text in quoted(extract_answer(question, (levels,), None, rows))]
    assert shown[0] == "1 to 2 | Extend the dosing interval by 12 hours"


POLICY = (
    "1. Purpose and Scope",
    "1.3 Business customers who buy under a trade account are covered by the Trade Terms "
    "of Supply and not by this policy.\n\n1.4 Staff purchases follow the staff handbook.",
    "3. Change-of-Mind Returns",
    "3.1 Customers may return an unwanted product for a full refund within 30 days of the "
    "delivery date.\n\n3.2 Refunds are made to the original payment method.",
)


def test_a_sentence_that_puts_what_is_asked_outside_the_policy_is_quoted_first() -> None:
    """A newcomer's look-alike, "How long do trade account customers have to return an
    unwanted product?", was answered with the consumers' 30 days alone; the policy says
    that trade accounts are not covered by it, and that now comes first."""
    scope = chunk("s", POLICY[1], (POLICY[0],))
    returns = chunk("r", POLICY[3], (POLICY[2],))
    asked = "How long do trade account customers have to return an unwanted product?"
    shown = [text for _, text in quoted(extract_answer(asked, (returns, scope)))]
    assert shown[0] is not None and shown[0].startswith("1.3 Business customers")
    assert any(text and text.startswith("3.1 Customers") for text in shown[1:])
    plain = "How long do customers have to return an unwanted product?"
    shown = [text for _, text in quoted(extract_answer(plain, (returns, scope)))]
    assert not any(text and "trade account" in text for text in shown)


def test_a_scope_that_leaves_out_the_population_asked_about_comes_before_the_dose() -> None:
    """A newcomer's "loading dose for neonates" was answered with the adult procedure's
    dose alone; its scope section says neonatal doses are outside it."""
    scope = chunk(
        "s",
        "2.1 This SOP covers adult inpatients only. Paediatric and neonatal doses are "
        "prepared under SOP-PH-022 and are outside the scope of this document.",
        ("2. SCOPE",),
    )
    dosing = chunk(
        "d",
        "4.1 The usual vancomycin loading dose is 25 mg/kg actual body weight, rounded to the "
        "nearest 250 mg, to a maximum of 3,000 mg as a single dose.",
        ("4. DOSING",),
    )
    asked = "What is the vancomycin loading dose for neonates?"
    shown = [ref for ref, _ in quoted(extract_answer(asked, (dosing, scope)))]
    assert shown[0] == "s"
    assert (
        quoted(extract_answer("What is the vancomycin loading dose?", (dosing, scope)))[0][0] == "d"
    )


@pytest.mark.parametrize(
    ("sentence", "scope"),
    [
        ("PSURs and DSURs are covered by PV-SOP-007.", True),
        ("The ground-floor cafe is not covered by this procedure.", True),
        ("Claims after 2 years are handled under a separate procedure.", True),
        ("This policy does not apply to agency staff.", True),
        ("Neonatal doses are outside the scope of this document.", True),
        ("The drug is covered by insurance.", False),
        ("Patients are managed in ICU-2 beds.", False),
        ("Costs are covered by COVID-19 relief funds.", False),
        ("The ward is managed by another nurse at night.", False),
        ("Patients are excluded from the study if pregnant.", False),
    ],
)
def test_what_puts_something_outside_a_document(sentence: str, scope: bool) -> None:
    assert (OUT_OF_SCOPE.search(sentence) is not None) is scope
    assert worth_quoting(sentence, sentence) or not scope  # quoted though about the document


ABSENCES = (  # over SHORT_PARAGRAPH_WORDS: its sentences are units of their own
    "We estimated the medical costs of asthma among children from 2016 through 2021, "
    "including prescribed medicines, emergency department visits, office-based visits, "
    "outpatient visits and inpatient stays, from a nationally representative survey. "
    "However, after 2016, the survey no longer collected data on school absence. "
    "Therefore, we could not measure the costs of missed school days due to asthma."
)
NO_DATA = "However, after 2016, the survey no longer collected data on school absence."
CANNOT = "Therefore, we could not measure the costs of missed school days due to asthma."


@pytest.mark.parametrize("with_model", [True, False])
def test_a_consequence_answers_why_with_the_sentence_that_gives_its_reason(
    with_model: bool,
) -> None:
    """ "Therefore, we could not ..." matches "why could they not ...?" best, but the
    reason is the sentence before it: the quote starts there. Asked something else,
    the sentence is quoted alone."""
    why = "Why could the researchers not put a cost on missed school days?"
    what = "What costs of missed school days could the researchers not measure?"
    embed = fake_embed({why: (1, 0, 0), what: (1, 0, 0), CANNOT: (1, 0.1, 0), NO_DATA: (0, 1, 0)})
    sources = (chunk("a", ABSENCES),)
    reply = extract_answer(why, sources, embed if with_model else None)  # type: ignore[arg-type]
    assert quoted(reply) == [("a", f"{NO_DATA} {CANNOT}")]
    reply = extract_answer(what, sources, embed if with_model else None)  # type: ignore[arg-type]
    assert quoted(reply)[0] == ("a", CANNOT)


def test_a_consequence_is_not_joined_to_another_paragraph() -> None:
    """The sentence before, across a blank line, is another paragraph's: no reason."""
    text = f"{NO_DATA}\n\n{CANNOT}"
    reply = extract_answer(
        "Why could the researchers not put a cost on missed school days?", (chunk("a", text),)
    )
    assert ("a", CANNOT) in quoted(reply)
    assert ("a", text) not in quoted(reply) and ("a", f"{NO_DATA} {CANNOT}") not in quoted(reply)


def test_the_reason_is_not_shown_again_from_an_overlapping_chunk() -> None:
    """Chunk windows overlap: another chunk holding the reason sentence alone repeats
    the widened quote's first sentence, and is not shown beside it."""
    question = "Why could the researchers not put a cost on missed school days?"
    embed = fake_embed({question: (1, 0, 0), CANNOT: (1, 0.1, 0), NO_DATA: (1, 0.1, 0)})
    sources = (chunk("a", ABSENCES), chunk("b", NO_DATA))
    assert quoted(extract_answer(question, sources, embed)) == [("a", f"{NO_DATA} {CANNOT}")]  # type: ignore[arg-type]
    assert _CONSEQUENCE.match("Therefore, we could not") and _CONSEQUENCE.match("Thus, it")
    assert not _CONSEQUENCE.match("Thus far, it") and not _CONSEQUENCE.match(
        "As a result of the storm, it"
    )


TRANSPORT = (  # over SHORT_PARAGRAPH_WORDS: its sentences are units of their own
    "Most patients are expected to arrange their own transport home, with a relative, "
    "a friend or a taxi, and should do so before the day of discharge wherever they can. "
    "Hospital transport is only offered when there is a medical need for it. "
    "This is decided by the nurse in charge on the morning of discharge."
)
ON_NEED = "Hospital transport is only offered when there is a medical need for it."
DECIDED = "This is decided by the nurse in charge on the morning of discharge."


def test_a_sentence_that_opens_with_this_is_quoted_with_the_sentence_it_refers_to() -> None:
    """A newcomer's "Who decides whether I can have hospital transport home?": "This is
    decided by the nurse in charge" does not say what is decided; the sentence before
    does, and the quote starts there. "This study ..." names its own subject."""
    question = "Who decides whether I can have hospital transport home?"
    both = f"{ON_NEED} {DECIDED}"  # what the widened unit is scored on
    embed = fake_embed({question: (1, 0, 0), both: (1, 0.1, 0), ON_NEED: (0, 1, 0)})
    reply = extract_answer(question, (chunk("a", TRANSPORT),), embed)  # type: ignore[arg-type]
    assert quoted(reply)[0] == ("a", both)
    alone = ("This study used survey data.", "These data come from 2021.", "It is late.")
    for sentence in (*alone, "HE staining was done.", "That is, the rule holds."):
        assert not _BACK_REFERENCE.match(sentence), sentence
    for refers in ("They meet monthly.", "These are listed below.", "She was appointed."):
        assert _BACK_REFERENCE.match(refers), refers


def test_the_sentence_referred_to_is_not_lost_as_a_repeat_of_an_overlapping_chunk() -> None:
    """Chunk windows overlap: chunk "a" ends with the sentence before, chunk "b" holds
    it and "This is decided by ...". "b"'s unit, quoted from the sentence before, holds
    "a"'s and says more: it stands in for it, so the sentence that answers is shown."""
    question = "Who decides whether I can have hospital transport home?"
    earlier = "Ward staff give every patient a discharge letter and a copy of their plan. "
    head = earlier + TRANSPORT[: TRANSPORT.index(ON_NEED)]  # its sentences are units
    both = f"{ON_NEED} {DECIDED}"  # what the widened unit is scored on
    embed = fake_embed({question: (1, 0, 0), ON_NEED: (1, 0.05, 0), both: (1, 0.34, 0)})
    sources = (chunk("a", head + ON_NEED), chunk("b", TRANSPORT))
    shown = quoted(extract_answer(question, sources, embed))  # type: ignore[arg-type]
    assert ("b", f"{ON_NEED} {DECIDED}") in shown
    assert ("a", ON_NEED) not in shown


def test_a_sentence_that_opens_with_this_is_scored_with_the_sentence_it_refers_to() -> None:
    """The sentence "This is decided by the nurse in charge" says who decides only with the sentence
    before it, which says what is decided: the two are scored together, so they
    outrank a sentence that only shares the question's topic."""
    question = "Who decides whether I can have hospital transport home?"
    first = TRANSPORT[: TRANSPORT.index(ON_NEED)].strip()
    embed = fake_embed(
        {
            question: (1, 0, 0),
            first: (1, 0.7, 0),
            DECIDED: (0, 1, 0),
            ON_NEED: (0.2, 1, 0),
            f"{ON_NEED} {DECIDED}": (1, 0.05, 0),
        }
    )
    reply = extract_answer(question, (chunk("a", TRANSPORT),), embed)  # type: ignore[arg-type]
    assert quoted(reply)[0] == ("a", f"{ON_NEED} {DECIDED}")


FINES = (  # over SHORT_PARAGRAPH_WORDS: its sentences are units of their own
    "Where a pupil has 10 or more unauthorised sessions of absence within any period of "
    "10 school weeks, the school may ask the local authority to issue a penalty notice "
    "to each parent. The penalty is £80 per parent, per child, if paid within 21 days, "
    "rising to £160 if paid between day 22 and day 28. If the penalty is not paid within "
    "28 days, the local authority may prosecute."
)


def test_the_sentence_between_two_quoted_sentences_of_a_paragraph_is_quoted_with_them() -> None:
    """A newcomer's "How big is the fine for unauthorised absence and how long do we
    have to pay it?" showed the first and last sentences of the paragraph as two
    quotes, as if they followed each other, without "The penalty is £80 ..." between
    them. Two sentences apart are not joined."""
    question = "How big is the fine for unauthorised absence and how long do we have to pay it?"
    first, middle, last = (
        FINES[: FINES.index(" The penalty")],
        FINES[FINES.index("The penalty") : FINES.index(" If the")],
        FINES[FINES.index("If the") :],
    )
    embed = fake_embed(
        {question: (1, 0, 0), first: (1, 0.1, 0), last: (1, 0.15, 0), middle: (0.4, 1, 0)}
    )
    reply = extract_answer(question, (chunk("f", FINES),), embed)  # type: ignore[arg-type]
    assert quoted(reply) == [("f", FINES)]
    apart = FINES.replace(" If the", " Payment is made online or by post. If the")
    vectors = {question: (1, 0, 0), first: (1, 0.1, 0), last: (1, 0.15, 0), middle: (0.4, 1, 0)}
    reply = extract_answer(question, (chunk("f", apart),), fake_embed(vectors))  # type: ignore[arg-type]
    assert quoted(reply) == [("f", first), ("f", last)]


RECALL = (
    "Only kettles with the following model numbers and batch codes are affected. The "
    "batch code is printed on the silver label under the power base.\n\n"
    "Model KT-17W (white), batch codes 2403A to 2411C\n\n"
    "Model KT-17S (brushed steel), batch code 2408B only\n\n"
    "The affected kettles were sold between April 2024 and January 2025."
)


def test_a_sentence_that_announces_the_following_list_is_quoted_with_it() -> None:
    """A web page's "Only kettles with the following model numbers ... are affected."
    ends with a full stop, and another sentence stands before the list: it is still
    quoted with the list it announces, and the list's items (no bullets left) are units
    with it, not headings left out."""
    list_end = RECALL.index("\n\nThe affected")
    units = {RECALL[u.start : u.end] for u in quotable_units(RECALL)}
    assert RECALL[:list_end] in units
    assert RECALL[: RECALL.index("\n\n")] in units  # the other sentence: its paragraph
    question = "Which batch codes of the brushed steel kettle are recalled?"
    ref, shown = quoted(extract_answer(question, (chunk("r", RECALL),)))[0]
    assert ref == "r" and shown is not None and shown.startswith(RECALL[:list_end])
    for other in ("some model numbers", "the following day's model numbers"):
        plain = RECALL.replace("the following model numbers", other)
        assert plain[: plain.index("\n\nThe affected")] not in {
            plain[u.start : u.end] for u in quotable_units(plain)
        }


def test_a_count_of_what_something_caused_is_noticed_when_no_quote_gives_one() -> None:
    """A newcomer's "How many fires have the recalled kettles caused?" was read as a
    question for a cause; the quote of why the kettles were recalled silenced the
    notice that no quote gives the number asked."""
    question = "How many fires have the recalled kettles caused?"
    why = "Larkfield is recalling KT-17 kettles because the switch-off may fail."
    assert missing_value(question, [why]) == "a number"
    assert missing_value(question, ["The kettles have caused 3 fires."]) is None


def test_a_consequence_is_scored_on_its_own_sentence_not_with_the_one_before() -> None:
    """Only a pronoun's sentence is scored with the one before it. "Thus, these
    participants constituted a cohort" is quoted from the sentence before for a why
    question, but scored on itself: scored with that sentence's many words about the
    survey, it outranked the sentence that gives the reason for nonresponse."""
    question = "What was the main reason students did not respond to the survey?"
    used = "We used data from 29,023 students who took part in two survey cycles."
    thus = "Thus, these participants made up a cohort followed over two years."
    reason = "Absence on the day of the survey was the main reason for nonresponse."
    method = (  # the paragraph runs over SHORT_PARAGRAPH_WORDS: its sentences are units
        "The survey is a prospective study of secondary school students in two provinces "
        "that collects data on their health behaviours, their schools' programs and their "
        "neighbourhoods every year, from the same schools."
    )
    text = f"{method} {used} {thus}\n\n{reason}"
    embed = fake_embed(
        {question: (1, 0, 0), reason: (1, 0.3, 0), thus: (0, 1, 0), f"{used} {thus}": (1, 0, 0)}
    )
    reply = extract_answer(question, (chunk("c", text),), embed)  # type: ignore[arg-type]
    assert quoted(reply)[0] == ("c", reason)


def test_a_pronoun_sentence_is_offered_to_a_model_as_the_unit_it_is() -> None:
    """A model points at numbered units: "This is decided by ..." quoted from the
    sentence before is no such unit, so it is offered as its own sentence (a reviewer
    found it dropped from the offer, leaving the model the unrelated first sentence)."""
    question = "Who decides whether I can have hospital transport home?"
    both = f"{ON_NEED} {DECIDED}"
    embed = fake_embed({question: (1, 0, 0), both: (1, 0.1, 0), ON_NEED: (0, 1, 0)})
    choice = choose_extractive(question, (chunk("a", TRANSPORT),), embed)  # type: ignore[arg-type]
    offered = [TRANSPORT[s:e] for _, s, e in choice.offered]
    pointable = {TRANSPORT[u.start : u.end] for u in pointable_units(TRANSPORT)}
    assert offered[0] == DECIDED and set(offered) <= pointable


def test_a_filled_gap_drops_an_overlapping_chunks_copy_of_the_sentence_in_it() -> None:
    """Chunk "b" holds "a"'s middle sentence with one word changed: once "a"'s first
    and last sentences are quoted with the one between them, "b"'s copy of that
    sentence is not shown again."""
    question = "How big is the fine for unauthorised absence and how long do we have to pay it?"
    first = FINES[: FINES.index(" The penalty")]
    middle = FINES[FINES.index("The penalty") : FINES.index(" If the")]
    last = FINES[FINES.index("If the") :]
    copy = middle.replace("The penalty", "The fine")  # another version's wording
    embed = fake_embed(
        {question: (1, 0, 0), first: (1, 0.1, 0), copy: (1, 0.6, 0), last: (1, 0.15, 0)}
    )
    sources = (chunk("a", FINES), chunk("b", copy))
    assert quoted(extract_answer(question, sources, embed)) == [("a", FINES)]  # type: ignore[arg-type]
    # a reviewer's unit that shares most words with the filled quote but says otherwise
    other = (
        "Within 28 days, the school may not ask the local authority to issue a penalty "
        "notice to each parent. Pay online."
    )
    said = other[: other.index(" Pay")]  # what the short paragraph is scored on
    vectors = {question: (1, 0, 0), first: (1, 0.1, 0), said: (1, 0.12, 0), last: (1, 0.15, 0)}
    sources = (chunk("a", FINES), chunk("b", other))
    shown = quoted(extract_answer(question, sources, fake_embed(vectors)))  # type: ignore[arg-type]
    assert ("b", other) in shown


def test_the_sentence_between_is_found_when_it_is_quoted_from_the_one_before() -> None:
    """The sentence between two quoted ones opens with a pronoun ("This is £80 ..."),
    so it stands among the candidates quoted from the sentence before it: it still
    fills the gap."""
    text = FINES.replace("The penalty is £80", "This is £80")
    question = "How big is the fine for unauthorised absence and how long do we have to pay it?"
    first = text[: text.index(" This is")]
    last = text[text.index("If the") :]
    embed = fake_embed({question: (1, 0, 0), first: (1, 0.1, 0), last: (1, 0.15, 0)})
    assert quoted(extract_answer(question, (chunk("f", text),), embed)) == [("f", text)]  # type: ignore[arg-type]


def test_a_list_item_line_of_two_sentences_is_quoted_whole() -> None:
    """A Word list's items, one a line with no bullet: "do not stop these yourself" was
    quoted without "The pre-assessment nurse will give you individual instructions.",
    the rest of its item. Lines that wrap a sentence are no items."""
    items = (
        "Iron tablets: stop taking them 7 days before your colonoscopy.\n"
        "Blood thinners such as warfarin: do not stop these yourself. The pre-assessment "
        "nurse will give you individual instructions.\n"
        "Diabetes medicines and insulin: you will receive a separate leaflet with doses."
    )
    padded = items + " " + "More words to make this paragraph long enough. " * 4
    blood = padded.split("\n")[1]
    assert blood in {padded[u.start : u.end] for u in quotable_units(padded)}
    wrapped = padded.replace("yourself. The", "yourself,\nand the").replace(
        "colonoscopy.", "colonoscopy. Take them as usual until then."
    )
    first = "Iron tablets: stop taking them 7 days before your colonoscopy."
    assert first in {wrapped[u.start : u.end] for u in quotable_units(wrapped)}
    # a reviewer's hard-wrapped line that ends with a bracket: no item line
    permits = (
        "Residents may apply for one permit per household for each vehicle registered at "
        "the address, and permits are issued for a year from approval (see the map on "
        "page 4)\nunless the vehicle is over 3.5 tonnes. The permit costs £45 a year.\n"
        "Visitor permits are sold in books of ten."
    )
    units = {permits[u.start : u.end] for u in quotable_units(permits)}
    assert "The permit costs £45 a year." in units


def test_a_numbered_section_title_over_its_first_clause_is_no_part_of_it() -> None:
    """A bylaw in plain text: "11. Appeals and representations" over "11.1 A person
    who ..." was quoted as "Appeals and representations 11.1 A person ...", the title
    glued to the clause and its number lost."""
    text = (
        "11. Appeals and representations\n"
        "11.1 A person who has received a fixed penalty notice may write to the Council "
        "within 14 days of the notice.\n"
        "11.2 The Council will respond within 28 days."
    )
    units = {text[u.start : u.end] for u in quotable_units(text)}
    assert units and all(unit.startswith(("11.1", "11.2")) for unit in units)
    # a reviewer's numbered item wrapped before "2.1 g": no title over a clause
    dose = "2. The maximum daily dose for adults is\n2.1 g per day in divided doses."
    assert any("maximum daily dose" in dose[u.start : u.end] for u in quotable_units(dose))
