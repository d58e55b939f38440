"""Tests of FDA SPL ingest: sections, lists, tables, footnotes, titles, hostile XML."""

from __future__ import annotations

from pathlib import Path

import pytest

from quoteproof.errors import IngestError
from quoteproof.ingest.html.spl import parse_spl
from quoteproof.model import ParsedDocument

LABEL = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "data"
    / "fda-remdesivir-label"
    / "veklury_remdesivir_spl_oct2020.xml"
)

SPL = """<?xml version="1.0" encoding="UTF-8"?>
<document xmlns="urn:hl7-org:v3">
  <title>{title}</title>
  <languageCode code="en-US"/>
  <component><structuredBody>
    <component><section>
      <code code="48780-1" displayName="SPL product data elements section"/>
      <subject><manufacturedProduct><manufacturedProduct>
        <name>Zorvex</name>
        <asEntityWithGeneric><genericMedicine><name>ZORVEXIN</name></genericMedicine>
        </asEntityWithGeneric>
      </manufacturedProduct></manufacturedProduct></subject>
    </section></component>
    <component><section>
      <text><paragraph>Letter   without a
        title.</paragraph></text>
    </section></component>
    <component><section>
      <title>2 DOSAGE</title>
      <excerpt><highlight><text><paragraph>HIGHLIGHT-JUNK</paragraph></text></highlight></excerpt>
      <text>
        <paragraph>Give ZORVEX<sup>®</sup> once<br/>daily.</paragraph>
        <list listType="unordered">
          <item>Adults: 200 mg <content styleCode="bold">on day 1</content></item>
          <item>Children:<list><item>under 40 kg: 5 mg/kg</item></list></item>
        </list>
      </text>
      <component><section>
        <title>2.1 Renal <content styleCode="italics">Impairment</content></title>
        <text>
          <table>
            <caption>Table 1 Doses</caption>
            <col/><col/>
            <thead><tr><th>eGFR</th><th>Dose</th></tr></thead>
            <tfoot><tr><td>Total</td><td>n/a</td></tr></tfoot>
            <tbody>
              <tr><td>&#8805;30</td><td>100 mg<footnote ID="f1">Once daily.</footnote></td></tr>
              <tr><td>&lt;30</td><td>Not recommended<footnoteRef IDREF="f1"/></td></tr>
              <tr><td> </td><td/></tr>
            </tbody>
          </table>
          <renderMultiMedia referencedObject="MM1"><caption>Figure 1 Curve</caption>
          </renderMultiMedia>
          <paragraph>See the study<footnote ID="f2">Study 5773.</footnote>.</paragraph>
        </text>
      </section></component>
    </section></component>
    <component><section>
      <title>3 STORAGE</title>
      <text><paragraph>Keep cold.</paragraph></text>
    </section></component>
  </structuredBody></component>
</document>
"""


def _parse(title: str = "Zorvex label") -> ParsedDocument:
    return parse_spl(SPL.format(title=title).encode(), "labels/zorvex.xml")


def _view(doc: ParsedDocument) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(b.kind, doc.text[b.start : b.end], b.section) for b in doc.blocks]


def test_sections_blocks_and_footnotes() -> None:
    doc = _parse()
    dosage, renal = ("2 DOSAGE",), ("2 DOSAGE", "2.1 Renal Impairment")
    expected = [
        ("paragraph", "Letter without a title.", ()),
        ("heading", "2 DOSAGE", dosage),
        ("paragraph", "Give ZORVEX® once daily.", dosage),
        ("list", "Adults: 200 mg on day 1\nChildren:\nunder 40 kg: 5 mg/kg", dosage),
        ("heading", "2.1 Renal Impairment", renal),
        ("paragraph", "Table 1 Doses", renal),
        (
            "table",
            "eGFR | Dose\n≥30 | 100 mg[1]\n<30 | Not recommended[1]\nTotal | n/a",
            renal,
        ),
        ("paragraph", "[1] Once daily.", renal),
        ("paragraph", "Figure 1 Curve", renal),
        ("paragraph", "See the study[1].", renal),
        ("paragraph", "[1] Study 5773.", renal),
        ("heading", "3 STORAGE", ("3 STORAGE",)),
        ("paragraph", "Keep cold.", ("3 STORAGE",)),
    ]
    assert _view(doc) == expected
    assert doc.text == "\n\n".join(text for _, text, _ in expected)
    assert (doc.format, doc.language, doc.layout) == ("spl", "en-US", None)


def test_titles() -> None:
    assert _parse("Zorvex  <sup>®</sup> label").title == "Zorvex® label"
    long = "FACT SHEET FOR PROVIDERS<br/><br/>EMERGENCY USE OF ZORVEX " + "FOR PATIENTS " * 10
    assert _parse(long).title == "Zorvex (zorvexin): FACT SHEET FOR PROVIDERS"
    longer = "These highlights do not include all the information needed. " * 3
    assert _parse(longer + "<br/>ZORVEX for injection").title == "Zorvex (zorvexin)"
    no_product = SPL.replace("<name>Zorvex</name>", "").replace("<name>ZORVEXIN</name>", "")
    title = parse_spl(no_product.format(title=longer).encode(), "z.xml").title
    assert title == (
        "These highlights do not include all the information needed. These highlights do "
        "not include all the information…"
    )
    assert _parse("").title == "2 DOSAGE"


def test_deterministic() -> None:
    assert _parse() == _parse()


def _cause(raw: bytes) -> str:
    with pytest.raises(IngestError) as info:
        parse_spl(raw, "in/label.xml")
    assert info.value.path == "in/label.xml"
    return info.value.cause


def test_malformed_and_unsupported_xml() -> None:
    cause = _cause(b'<document xmlns="urn:hl7-org:v3"><title>T</document>')
    assert cause.startswith("malformed XML: Opening and ending tag mismatch: title line 1")
    assert _cause(b"").startswith("malformed XML: Document is empty")
    unsupported = "unsupported XML: only FDA SPL labels (HL7 v3 document) are supported"
    assert _cause(b"<html><body/></html>") == unsupported
    assert _cause(b"<document/>") == unsupported  # no HL7 v3 namespace
    assert _cause(b'<ClinicalDocument xmlns="urn:hl7-org:v3"/>') == unsupported


def test_deep_nesting_is_refused_by_the_xml_parser() -> None:
    # libxml2 stops at 256 levels, so 50,000 nested sections cost no more than 256.
    sections = "<section>" * 50_000 + "</section>" * 50_000
    xml = f'<document xmlns="urn:hl7-org:v3"><component>{sections}</component></document>'
    assert _cause(xml.encode()).startswith("malformed XML: Excessive depth in document: 256")


def test_external_entities_are_never_read() -> None:
    xml = b"""<?xml version="1.0"?>
<!DOCTYPE document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<document xmlns="urn:hl7-org:v3"><component><structuredBody><component><section>
<text><paragraph>before &xxe; after</paragraph></text></section></component>
</structuredBody></component></document>"""
    assert parse_spl(xml, "x.xml").text == "before after"


def test_entity_expansion_bomb_is_refused() -> None:
    entities = '<!ENTITY a "aaaaaaaaaa">' + "".join(
        f'<!ENTITY {name} "{("&" + previous + ";") * 10}">'
        for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE document [{entities}]>'
        '<document xmlns="urn:hl7-org:v3"><title>&i;</title></document>'
    )
    assert _cause(xml.encode()).startswith("malformed XML: Maximum entity amplification")


def _label() -> ParsedDocument:
    if not LABEL.is_file():
        pytest.skip(f"{LABEL} is absent")
    return parse_spl(LABEL.read_bytes(), str(LABEL))


def test_real_label_sections() -> None:
    doc = _label()
    assert doc.title == "Veklury (remdesivir): FACT SHEET FOR HEALTHCARE PROVIDERS"
    headings = {doc.text[b.start : b.end]: b.section for b in doc.blocks if b.kind == "heading"}
    warnings = "5. WARNINGS AND PRECAUTIONS"
    hypersensitivity = "5.1 Hypersensitivity Including Infusion-Related and Anaphylactic Reactions"
    assert headings[warnings] == (warnings,)
    assert headings[hypersensitivity] == (warnings, hypersensitivity)
    assert headings["6.1 Clinical Trials Experience"] == (
        "6. OVERALL SAFETY SUMMARY",
        "6.1 Clinical Trials Experience",
    )
    for name in ("2. DOSAGE AND ADMINISTRATION", "4. CONTRAINDICATIONS", "12. OVERDOSAGE"):
        assert headings[name] == (name,)


def test_real_label_sentence_of_section_5_1() -> None:
    doc = _label()
    sentence = (
        "Slower infusion rates, with a maximum infusion time of up to 120 minutes, can be "
        "considered to potentially prevent these signs and symptoms."
    )
    start = doc.text.index(sentence)
    starts = [start]  # the fact sheet's "Warnings" says it first; section 5.1 again
    while (start := doc.text.find(sentence, start + 1)) != -1:
        starts.append(start)
    blocks = [next(b for b in doc.blocks if b.start <= at < b.end) for at in starts]
    assert [(b.kind, b.section[-1]) for b in blocks] == [
        ("paragraph", "Warnings"),
        ("paragraph", "5.1 Hypersensitivity Including Infusion-Related and Anaphylactic Reactions"),
    ]
    assert blocks[1].section[0] == "5. WARNINGS AND PRECAUTIONS"
    assert "VEKLURY®" in doc.text and "VEKLURY ®" not in doc.text


def test_real_label_table_stays_one_block() -> None:
    doc = _label()
    assert sum(b.kind == "table" for b in doc.blocks) == 17
    table = next(
        b
        for b in doc.blocks
        if b.kind == "table"
        and doc.text[b.start : b.end].startswith("Types of Adverse Reactions | VEKLURY 5 Days")
    )
    assert doc.text[table.start : table.end].split("\n") == [
        "Types of Adverse Reactions | VEKLURY 5 Days N=200 n (%) | VEKLURY 10 Days N=197 n (%)",
        "Any adverse reaction, all Grades | 33 (17%) | 40 (20%)",
        "Serious adverse reactions | 3 (2%)[1] | 4 (2%)[1]",
        "Adverse reactions leading to treatment discontinuation | 5 (3%)[2] | 9 (5%)[2]",
    ]
    assert table.section[-1] == "6.1 Clinical Trials Experience"
    index = doc.blocks.index(table)
    caption, notes = doc.blocks[index - 1], doc.blocks[index + 1]
    assert doc.text[caption.start : caption.end] == (
        "Table 6 Summary of Adverse Reaction Rates in Adult Subjects with Severe COVID-19 "
        "in Study 5773"
    )
    assert doc.text[notes.start : notes.end].startswith(
        "[1] Transaminases increased (n=5), hepatic enzyme increased (n=1)"
    )
