"""Key terms: the names, codes and numbers a passage must carry to answer."""

from __future__ import annotations

from quoteproof.retrieval.key_terms import key_terms, missing_terms, range_numbers


def test_specific_words_and_numbers_are_key_general_words_are_not() -> None:
    assert key_terms("What is the maximum daily dose of acetaminophen?") == ["acetaminophen"]
    assert key_terms("Can metformin be used at an eGFR of 30 to 45?") == [
        "30", "45", "metformin", "egfr",
    ]  # fmt: skip
    assert key_terms("How to diagnose the symptoms and treatments?") == []
    assert key_terms("Dose for 3.5 kg?") == ["3.5"]


def test_a_passage_carries_a_term_with_another_ending_and_the_same_number() -> None:
    passage = "Remdesivir is not given at eGFR less than 30 mL per minute; 3.5 kg infants."
    assert missing_terms("Remdesivir at eGFR 30 for 3.5 kg?", [passage]) == ()
    assert missing_terms("Remdesivirs for infants?", [passage]) == ()


def test_a_passage_carries_a_term_derived_from_its_word() -> None:
    """A blind writer's "penalizes", "healthier" and "ethnicities" were refused as
    missing from passages that say "penalties", "health" and "ethnic": a derived form
    is carried by its base word, not by a shorter word ("heal")."""
    passage = "Penalties applied to hospitals; other racial and ethnic groups; health."
    for term in ("penalizes", "healthier", "ethnicities"):
        assert missing_terms(f"Who {term} hospitals?", [passage]) == (), term
    assert missing_terms("What about fluoridised water?", ["Fluoride in water"]) == ()
    assert missing_terms("Who healthier hospitals?", ["Heal the sick."]) == ("healthier",)
    assert missing_terms("Is drowsiness common?", ["It may make you drowsy."]) == ()
    assert missing_terms("Who penalizes hospitals?", ["Penalizing costs"]) == ()


def test_a_name_is_not_carried_by_the_word_it_looks_derived_from() -> None:
    """A capitalised name is matched as written: the Office of Minority Health is not
    in passages about minor injuries, nor Social Security in one on secure storage."""
    passage = "Minor injuries; keep it in secure storage; the University hospital."
    assert "minority" in missing_terms("What does the Office of Minority Health fund?", [passage])
    assert "security" in missing_terms("How does Social Security pay?", [passage])


def test_missing_terms_name_what_no_passage_carries_in_question_order() -> None:
    passages = ["Remdesivir 200 mg on day 1.", "Hypersensitivity reactions were seen."]
    assert missing_terms("Paxlovid with simvastatin, 45 or 200 mg?", passages) == (
        "45", "paxlovid", "simvastatin",
    )  # fmt: skip
    assert missing_terms("3.5 kg?", ["3 to 5 kg"]) == ("3.5",)


def test_a_general_word_with_another_ending_is_general_a_lookalike_stem_is_not() -> None:
    assert key_terms("Is the safest dosing diagnosed?") == []  # safe, dose, diagnosis listed
    assert key_terms("Which statin, with warfarin?") == ["statin", "warfarin"]  # station, warfare


def test_a_lower_case_compound_of_general_words_is_general_a_name_or_prefixed_term_is_not() -> None:
    assert key_terms("Can a fingerstick lancet holder be shared?") == ["lancet"]
    assert key_terms("Is it given in an outpatient clinic?") == []
    assert key_terms("What did Westbrook report?") == ["westbrook"]  # a name, capitalised
    assert key_terms("Which dose in hypertension?") == ["hypertension"]  # hyper- is a prefix
    assert key_terms("Are microorganisms killed?") == ["microorganisms"]


def test_a_capitalised_word_inside_the_question_is_a_name_even_when_general() -> None:
    question = "What was the prevalence of energy insecurity in Puerto Rico in 2020?"
    assert key_terms(question) == ["2020", "insecurity", "puerto", "rico"]
    assert key_terms("Which rural women in Indiana drove farthest?") == ["indiana"]
    assert key_terms("Indiana: how far? Rural women drove farthest.") == []  # sentence openers
    illinois = ["Access to birthing hospitals in Illinois declined from 2016 to 2023."]
    assert missing_terms("How far did women in Indiana drive in 2023?", illinois) == ("indiana",)
    carolina = ["Gestational weight gain rose among mothers in South Carolina."]
    assert missing_terms("Did weight gain rise in North Carolina?", carolina) == ("north",)


def test_a_code_of_letters_and_digits_is_one_key_term_a_number_with_a_unit_is_its_number() -> None:
    assert key_terms("Is ward 9a open?") == ["9a"]
    assert key_terms("Do n95 masks fit at 100mg on the 1st day?") == ["100", "1", "n95"]
    assert missing_terms("What is the policy of ward 9a?", ["The policy of ward 9B."]) == ("9a",)
    assert missing_terms("Do n95 masks fit?", ["Fit-test N95 respirators."]) == ()


def test_accents_and_marks_inside_a_word_do_not_hide_a_name() -> None:
    passage = ["We mailed the survey to 1,000 households on Oʻahu, with Clínica Esperanza."]
    for question in ("Oahu", "O‘ahu", "Oʻahu"):
        assert missing_terms(f"When was the survey mailed to {question} homes?", passage) == ()
    assert missing_terms("Who runs Clinica Esperanza?", passage) == ()
    assert missing_terms("Who runs the Clínica Hope?", passage) == ("hope",)
    assert missing_terms("Was it mailed to Maui homes?", passage) == ("maui",)
    assert missing_terms("Who didn't reply from Oahu?", passage) == ()  # no word "didnt"


def test_inhabitants_are_carried_by_their_place_not_by_a_longer_name() -> None:
    passage = ["Older adults in New York City and London had high obesity."]
    assert missing_terms("Which New Yorkers had the highest obesity?", passage) == ()
    assert missing_terms("Were Londoners heavier?", passage) == ()
    assert missing_terms("Were Yorkshire residents heavier?", passage) == ("yorkshire",)


def test_a_range_of_numbers_carries_each_number_in_it_not_one_outside_nor_a_date() -> None:
    """A fire procedure's "Floors 9 to 12" row answers "the 10th floor"; the 14th floor
    stays missing, and a date's parts or a phone number are no range."""
    floors = ["Floors 9 to 12: assembly point AP3, St Anne's Green"]
    assert missing_terms("Where does the 10th floor assemble?", floors) == ()
    assert missing_terms("Where does the 14th floor assemble?", floors) == ("14",)
    assert missing_terms("Dose for a 35 kg child?", ["30-40 kg: 250 mg"]) == ()
    assert range_numbers("Issued 2020-10-22; call 1-800-555-1212") == set()
    assert range_numbers("1.5-2.5 mg") == set() and "50" not in range_numbers("1 to 200")
    assert range_numbers("Open 09:00-17:30, Vitamin B12-15") == set()  # times, codes
    assert missing_terms("Dose for a 15 kg child?", ["Open 09:00-17:30. 10 mg/kg."]) == ("15",)
    levels = ["Trough (mg/L) | Action", "1 to 2 | Extend the dosing interval by 12 hours"]
    assert missing_terms("The trough came back at 1.5 mg/L. What now?", levels) == ("1.5",)
    assert missing_terms("Is it open at 10?", ["Open 9.30-11.30 daily."]) == ("10",)
    # a period of years is no range of numbers: a question about 2023 needs 2023
    assert missing_terms("What did the 2023 survey find?", ["Data from 2019-2024"]) == ("2023",)


def test_a_day_of_the_month_is_carried_by_the_rule_for_another_day_not_by_other_ordinals() -> None:
    """A claim "approved on the 20th" is answered by the rule for "after the 15th"; a floor, a
    century or an amendment is no day of the month on either side."""
    rule = ["Claims approved after the 15th are paid at the end of the following month."]
    question = "If my manager approves my claim on the 20th, when will I be paid?"
    assert missing_terms(question, rule) == ()
    assert missing_terms(question, ["Claims are paid monthly on 3 May."]) == ("20",)
    assert missing_terms(question, ["Rooms on the 2nd floor are closed."]) == ("20",)
    assert missing_terms("What changed in the 20th century?", rule) == ("20",)
    assert missing_terms("What does the 21st Amendment say?", ["The 18th Amendment"]) == ("21",)
    assert missing_terms("What is the fine for the 3rd offence?", rule) == ("3",)  # no day
    assert missing_terms(question, ["A warning is issued for the 1st offence."]) == ("20",)
    assert missing_terms(question, ["Take it on the 2nd day of your cycle."]) == ("20",)
    assert missing_terms("Is it paid on the 20th March?", ["Paid by the 15th March."]) == ()


def test_a_year_written_as_two_years_in_a_row_is_carried_by_the_same_two_years() -> None:
    """A newcomer's "INSET days for the 2026-27 school year" was answered from the
    2025-26 term dates, which name 2026 and "27 October"; a period of years is no
    such year, and its years stay key terms of their own."""
    question = "What are the INSET days for the 2026-27 school year?"
    dates = ["Term dates 2025–26: INSET days on 1 September 2025 and 27 October 2026."]
    assert key_terms(question) == ["2026-27", "inset"]
    assert missing_terms(question, dates) == ("2026-27",)
    assert missing_terms(question, ["INSET days in 2026/2027: 1 September."]) == ()
    assert key_terms("What did the 2019-2024 survey find?") == ["2019", "2024"]
    calendar = ["Revenue was £3m in 2019 and £4m in 2020."]  # a reviewer's two years
    assert missing_terms("How did revenue change between 2019-2020?", calendar) == ()


def test_a_month_is_carried_by_a_span_of_months_that_covers_it() -> None:
    """A newcomer's "Can I let my dog off the lead in Harrow Park in July?" was refused
    for 'july', though the bylaw keeps dogs on a lead "between 1 May and 30 September";
    November is outside that span, and "from October to March" covers December."""
    bylaw = ["In Harrow Park dogs must be kept on a lead between 1 May and 30 September."]
    assert missing_terms("Can my dog be off the lead in Harrow Park in July?", bylaw) == ()
    assert missing_terms("Can my dog be off the lead in Harrow Park in November?", bylaw) == (
        "november",
    )
    winter = ["The car park is closed from October to March."]
    assert missing_terms("Is the car park open in December?", winter) == ()
    twice = ["Payments are made in June and December."]  # two months, no span
    assert missing_terms("Are payments made in September?", twice) == ("september",)
