"""Names a document's title declares the same ("VEKLURY® (remdesivir)")."""

from __future__ import annotations

from quoteproof.terms import declared_names, renamed

LABEL = "VEKLURY® (remdesivir) for injection, for intravenous use › DOSAGE › p. 1"


def test_a_brand_and_its_generic_name_are_declared_the_same() -> None:
    names = declared_names([LABEL, "Hand hygiene (HH) in outpatient care › p. 2"])
    assert names == {"veklury": "remdesivir", "remdesivir": "VEKLURY"}
    assert declared_names(["ZENTRIX™(valorimab) label"]) == {
        "zentrix": "valorimab",
        "valorimab": "ZENTRIX",
    }


def test_a_text_is_renamed_only_where_it_names_a_declared_name() -> None:
    names = declared_names([LABEL])
    assert (
        renamed("What dose of Remdesivir for adults?", names) == "What dose of VEKLURY for adults?"
    )
    assert renamed("How is VEKLURY stored?", names) == "How is remdesivir stored?"
    assert renamed("How is the drug stored?", names) is None
    assert renamed("remdesivirs", names) is None
