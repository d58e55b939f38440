"""The words every format of an answer shows: labels, headings and notes
(`layout.answer_layout` puts them in its blocks; the terminal, Markdown and HTML
renderers draw them as they are)."""

QUESTION_LABEL = "Question"
REFUSED_LABEL = "Refused"
PARTIAL_LABEL = "Partial answer"
PARTIAL_NOTICE = (
    "sentences without a valid citation were removed, or the work stopped before it was complete."
)
NOTE_LABEL = "Note"
ESCALATION_HEADING = "Escalated to a person"
ESCALATION_LABEL = "The model's reason (generated — not a quote):"
NO_REASON = "no reason given"
GENERATED_LABEL = "Generated — not a quote"
VERBATIM_LABEL = "Verbatim from source"
OCR_NOTE = "OCR text: check against the page"
LIST_GOES_ON_NOTE = "the list goes on in the source after this quote"
DIFFERS_LABEL = "the model's words differed"
DATA_LABEL = "Computed from table"
NOT_A_QUOTE = "not a quote"
STATEMENTS_LABEL = "Rationale statements (generated, checked by the model)"
UNVERIFIED = "UNVERIFIED"
NO_ID = "(no id)"
REFINED_FLAG = "refined after the check"
JUSTIFICATION_LABEL = "Justification"
REFINED_FROM_LABEL = "Refined from"
REJECTED_HEADING = "Removed (not verifiable)"
FACTS_LABEL = "Facts cited (knowledge-graph triplets: not quotes)"
FACTS_FOUND_LABEL = "Facts found by knowledge-graph search (triplets: not quotes)"
"""The facts of an answer made without a language model: nothing cited them."""
FACT_ORIGINS = {
    "imported": "Imported fact",
    "generated": "Generated fact — extracted by the model",
}
FACT_SOURCE_LABEL = "Supported by"
FACT_QUOTE_GONE = "its supporting quote no longer verifies against the index"
FAITHFULNESS_LABEL = "Faithfulness"
FAITHFULNESS_METHODS = {
    "deterministic": "deterministic checks: numbers, units, dates, names, negation",
    "model": "judged by the model",
}
