"""Tests for quoteproof.render.html: only Quote objects become verbatim figures."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import partial
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.answers import hostile_answers, make_data_result, shown_segments
from helpers.answers import make_answer as build_answer
from helpers.answers import make_quote as build_quote
from helpers.dom import Node, parse
from quoteproof.model import (
    Answer,
    DataSegment,
    Filter,
    LLMInfo,
    ProseSegment,
    Quote,
    QuoteSegment,
    Rejected,
    Statement,
    Usage,
)
from quoteproof.render.html import (
    HTML_LABEL_CHARS,
    escape,
    file_source_url,
    render_answer_html,
    render_html_page,
    safe_href,
)
from quoteproof.render.provenance import NO_MODEL_NOTICE
from quoteproof.render.wording import GENERATED_LABEL, VERBATIM_LABEL

SOURCE = "It was the best of times,\nit was the worst of times.\n\n<b>Age</b> of *wisdom* > 1"

make_quote = partial(
    build_quote,
    ref="t2c-1",
    label="A Tale of Two Cities › Book I › ¶1",
    doc_id="t2c",
    source_path="/corpus/dickens/two_cities.txt",
    section=("Book I",),
)
make_answer = partial(build_answer, question="How does it begin?")


def viewer(quote: Quote) -> str:
    return f"/sources/{quote.doc_id}?start={quote.start}&end={quote.end}#quote"


# ----------------------------------------------------------------- a small DOM

FRAGMENT_TAGS = frozenset(
    "article h2 h3 span strong div p section a figure figcaption blockquote "
    "dl dt dd table thead tbody tr th td ol ul li code".split()
)
PAGE_TAGS = FRAGMENT_TAGS | {"html", "head", "meta", "title", "style", "body", "main"}


def assert_inert(root: Node, allowed: frozenset[str]) -> None:
    """No element outside `allowed`, no script, no handler, no unsafe URL."""
    ids = []
    for node in root.iter()[1:]:
        assert node.tag in allowed, f"unexpected <{node.tag}>"
        for name, value in node.attrs.items():
            assert not name.startswith("on"), f"handler {name} on <{node.tag}>"
            assert name in {
                "class",
                "id",
                "href",
                "role",
                "aria-label",
                "scope",
                "lang",
                "charset",
                "name",
                "content",
                "http-equiv",
                "title",
            }, f"attribute {name} on <{node.tag}>"
            if name == "href":
                assert re.match(r"(#qp-[cq]\d+|/|file:///)", value), value
                assert "javascript:" not in value.lower()
            if name == "id":
                ids.append(value)
    assert len(ids) == len(set(ids))


def visible(text: str) -> str:
    """What the quote text reads as in the page (line endings, control pictures and
    escapes)."""
    text = re.sub("\r\n|[\r\x85\u2028\u2029]", "\n", text)
    out = []
    for ch in text:
        code = ord(ch)
        if code < 0x20 and ch not in "\t\n":
            out.append(chr(0x2400 + code))
        elif code == 0x7F:
            out.append("\u2421")
        elif 0x80 <= code <= 0x9F:
            out.append(f"\\x{code:02x}")
        elif 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def shown_quotes(answer: Answer, show_cited: bool) -> list[Quote]:
    """The quotes the verbatim figures must hold, in order."""
    quotes = []
    for segment in shown_segments(answer):
        if isinstance(segment, QuoteSegment):
            try:
                quotes.append(answer.quote(segment.quote_id))
            except KeyError:
                continue
        elif isinstance(segment, ProseSegment) and show_cited:
            quotes += answer.cited_passages(segment.citations)
    return quotes


# ----------------------------------------------------------------- layout


def test_layout_of_an_answer() -> None:
    quote = make_quote(SOURCE, 0, len(SOURCE), pages=(3,))
    answer = make_answer(
        (ProseSegment("It opens with a contrast.", ("t2c-1", "t2c-2")), QuoteSegment("q1")),
        (quote,),
        rejected=(Rejected('<quote ref="x9">best of</quote>', "unknown ref 'x9'"),),
    )
    out = render_answer_html(answer, source_url=viewer)
    root = parse(out)
    assert_inert(root, FRAGMENT_TAGS)
    (figure,) = root.find_all("figure")
    assert figure.classes() == {"verbatim"} and figure.attrs["id"] == "qp-q1"
    (caption,) = figure.find_all("figcaption")
    assert caption.text() == f"{VERBATIM_LABEL} — A Tale of Two Cities › Book I › ¶1 › p. 3"
    (block,) = figure.find_all("blockquote")
    assert block.text() == SOURCE
    (link,) = figure.find_all("a", "source-link")
    assert link.attrs["href"] == f"/sources/t2c?start=0&end={len(SOURCE)}#quote"
    (generated,) = root.find_all("section", "generated")
    assert generated.attrs["aria-label"] == GENERATED_LABEL
    assert generated.text() == f"{GENERATED_LABEL}It opens with a contrast. [t2c-1] [t2c-2]"
    chips = [n for n in generated.iter() if "chip" in n.classes()]
    # t2c-1 is shown as the figure below; nothing is known about t2c-2.
    assert [(c.tag, c.attrs.get("href")) for c in chips] == [("a", "#qp-q1"), ("span", None)]
    (rejected,) = root.find_all("section", "rejected")
    assert rejected.text().split("\n") == [
        "Removed (not verifiable)",
        "<quote ref=\"x9\">best of</quote> — unknown ref 'x9'",
        "",
    ]
    assert "&lt;b&gt;Age&lt;/b&gt;" in out and "<b>" not in out


def test_refusal() -> None:
    answer = make_answer(
        (ProseSegment("The sources contain no answer to this question."),),
        (),
        status="refused",
        refusal_reason="nothing relevant <found>",
    )
    root = parse(render_answer_html(answer))
    (refusal,) = root.find_all("div", "refusal")
    assert refusal.attrs["role"] == "status"
    assert refusal.text() == (
        "Refused: The sources contain no answer to this question. (nothing relevant <found>)"
    )
    assert not root.find_all("section", "generated")
    no_reason = parse(render_answer_html(make_answer((), (), status="refused")))
    assert "(no reason given)" in no_reason.find_all("div", "refusal")[0].text()


def test_a_command_a_notice_names_is_set_as_code_and_stays_escaped() -> None:
    notice = "Calibrate it (`quoteproof calibrate Q.jsonl`); `<b>x</b>` is no tag; a ` alone stays."
    root = parse(render_answer_html(make_answer((), (), notices=(notice,))))
    (note,) = root.find_all("p", "notice")
    assert note.text() == (
        "Note: Calibrate it (quoteproof calibrate Q.jsonl); <b>x</b> is no tag; a ` alone stays."
    )
    assert [code.text() for code in note.find_all("code")] == [
        "quoteproof calibrate Q.jsonl",
        "<b>x</b>",
    ]
    assert note.find_all("b") == []


def test_missing_quote_and_data_are_reported_not_drawn() -> None:
    answer = make_answer((QuoteSegment("ghost"), DataSegment("nope")), ())
    root = parse(render_answer_html(answer))
    assert not root.find_all("figure") and not root.find_all("section", "data")
    assert [p.text() for p in root.find_all("p", "missing")] == [
        "Missing quote ghost — not shown.",
        "Missing data result nope — not shown.",
    ]


def test_differs_ocr_and_pages_in_caption() -> None:
    quote = make_quote(SOURCE, 0, 25, pages=(3, 4), differs="best → <worst>", ocr=True)
    root = parse(render_answer_html(make_answer((QuoteSegment("q1"),), (quote,))))
    caption = root.find_all("figcaption")[0].text()
    assert "› pp. 3–4" in caption and caption.count("pp. 3–4") == 1
    assert "OCR text: check against the page" in caption
    assert "the model's words differed: best → <worst>" in caption


def test_long_label_is_shortened_from_the_middle_with_the_full_label_on_hover() -> None:
    title = "VEKLURY® (remdesivir) for injection, for intravenous use <b>"
    sections = ["12 CLINICAL PHARMACOLOGY", "12.3 Pharmacokinetics", "Table 12 Multiple Dose PK"]
    label = " › ".join([title, *sections, "pp. 16–17 (2/3)"])
    quote = make_quote(SOURCE, 0, 25, pages=(17,), label=label)
    root = parse(render_answer_html(make_answer((QuoteSegment("q1"),), (quote,))))
    (span,) = root.find_all("span", "quote-label")
    full = " › ".join([title, *sections, "p. 17"])
    assert span.attrs["title"] == full
    shown = span.text()
    assert len(shown) <= HTML_LABEL_CHARS < len(full)
    assert shown.startswith("VEKLURY® (remdesivir)") and " › … › " in shown
    assert shown.endswith("› Table 12 Multiple Dose PK › p. 17")


def test_default_link_is_the_file_and_unsafe_links_are_dropped() -> None:
    quote = make_quote(SOURCE, 0, 25, pages=(2,), source_path="/data/a b/report.pdf")
    assert file_source_url(quote) == "file:///data/a%20b/report.pdf#page=2"
    assert file_source_url(make_quote(SOURCE, 0, 5, source_path="rel/x.txt")) == ""
    answer = make_answer((QuoteSegment("q1"),), (quote,))
    root = parse(render_answer_html(answer))
    assert root.find_all("a", "source-link")[0].attrs["href"] == (
        "file:///data/a%20b/report.pdf#page=2"
    )
    for bad in (
        "javascript:alert(1)",
        "JaVaScRiPt:x",
        "java\tscript:x",
        " javascript:x",
        "data:text/html,x",
        "//evil.example/x",
        "vbscript:x",
        "",
    ):
        assert safe_href(bad) is None, bad
        hostile = parse(render_answer_html(answer, source_url=lambda q, bad=bad: bad))
        assert not hostile.find_all("a")
        assert len(hostile.find_all("figure", "verbatim")) == 1
    assert safe_href('/x?a=1&b="2"') == "/x?a=1&amp;b=&quot;2&quot;"
    assert safe_href("https://example.org/a") == "https://example.org/a"


def test_statements_carry_their_labels() -> None:
    answer = make_answer(
        (ProseSegment("Stop it. [t2c-1]", ("t2c-1",)),),
        (),
        mode="rationale",
        statements=(
            Statement("S1", "Stop at once.", ("t2c-1",), "CORRECT-EXPLICIT", "It says so."),
            Statement(
                "S2", "Slower infusion.", ("t2c-1",), "INCORRECT-FALSE_INFO", "No.", "Faster."
            ),
            Statement("S3", "<i>Unchecked</i>", (), None, None),
        ),
    )
    root = parse(render_answer_html(answer))
    items = root.find_all("li", "statement")
    labels = [(n.text(), n.classes()) for i in items for n in i.find_all("span", "label")]
    assert labels == [
        ("CORRECT-EXPLICIT", {"label", "label-correct"}),
        ("INCORRECT-FALSE_INFO", {"label", "label-incorrect"}),
        ("UNVERIFIED", {"label", "label-unverified"}),
    ]
    assert "Refined from: Faster." in items[1].text()
    assert "refined after the check" in items[1].text()
    assert "Justification: It says so." in items[0].text()
    assert items[2].find_all("p", "prose")[0].text() == "<i>Unchecked</i>"
    assert root.find_all("p", "answer-meta")[0].text() == "Mode: rationale"


def test_data_result_parameters_and_table() -> None:
    result = make_data_result(
        filters=(Filter("date", ">=", "2024-01-01"), Filter("country", "=", "US")),
        period="2024",
        row_count=12,
        rows=(("Ann", "40"), ("B<ob", None, "extra")),
    )
    answer = make_answer(
        (ProseSegment("Mean age:"), DataSegment("r1"), QuoteSegment("q1")),
        (make_quote(SOURCE, 0, 25),),
        data=(result,),
    )
    root = parse(render_answer_html(answer))
    (data,) = root.find_all("section", "data")
    assert data.attrs["aria-label"] == "Computed from table"
    params = [n.text() for n in data.find_all("dt")], [n.text() for n in data.find_all("dd")]
    assert params == (
        ["Query", "Period", "Columns", "Value"],
        ["where date >= 2024-01-01 and country = US", "2024", "name, age", "mean(age) = 41.5"],
    )
    assert data.find_all("p", "row-count")[0].text() == "12 matching rows, first 2 shown"
    (table,) = data.find_all("table")
    assert [n.text() for n in table.find_all("th")] == ["name", "age", ""]
    assert [n.text() for n in table.find_all("td")] == ["Ann", "40", "B<ob", "", "extra"]
    # the data section comes before the quote, after the prose
    order = [n.tag for n in root.iter() if n.tag in ("section", "figure")]
    assert order == ["section", "section", "figure"]


def test_partial_escalation_and_usage() -> None:
    answer = make_answer(
        (ProseSegment("Part of it."),),
        (),
        partial=True,
        escalation="Needs a <b>pharmacist</b>.",
        usage=Usage(1200, 34),
        mode="agent",
    )
    root = parse(render_answer_html(answer))
    assert "Partial answer" in root.find_all("p", "partial-notice")[0].text()
    escalation = root.find_all("section", "escalation")[0]
    assert escalation.find_all("p", "prose")[0].text() == "Needs a <b>pharmacist</b>."
    assert root.find_all("p", "answer-meta")[0].text() == (
        "Mode: agent · tokens: 1200 prompt · 34 completion"
    )


def test_show_cited_adds_the_cited_passages_and_chips_link_to_them() -> None:
    cited = (
        make_quote(SOURCE, 0, 25, "c1", ref="t2c-1"),
        make_quote(SOURCE, 26, 52, "c2", ref="t2c-2"),
    )
    answer = make_answer(
        (ProseSegment("A contrast.", ("t2c-2", "t2c-9", "t2c-1")), QuoteSegment("q1")),
        (make_quote(SOURCE, 0, 25, ref="t2c-7"),),
        cited=cited,
    )
    plain = parse(render_answer_html(answer, source_url=viewer))
    assert len(plain.find_all("figure", "verbatim")) == 1
    hrefs = [a.attrs.get("href") for a in plain.iter() if "chip" in a.classes()]
    # Without show_cited, a chip opens the source viewer at the cited passage.
    assert hrefs == [
        "/sources/t2c?start=26&end=52#quote",
        None,
        "/sources/t2c?start=0&end=25#quote",
    ]

    shown = parse(render_answer_html(answer, source_url=viewer, show_cited=True))
    figures = shown.find_all("figure", "verbatim")
    assert [f.find_all("blockquote")[0].text() for f in figures] == [
        SOURCE[26:52],
        SOURCE[0:25],
        SOURCE[0:25],
    ]
    assert [f.attrs["id"] for f in figures] == ["qp-c1", "qp-c2", "qp-q3"]
    hrefs = [a.attrs.get("href") for a in shown.iter() if "chip" in a.classes()]
    assert hrefs == ["#qp-c1", None, "#qp-c2"]


def test_control_characters_are_visible_not_raw() -> None:
    text = "a\x00b\x1bc\x85d\r\ne\rf\x7f"
    answer = make_answer(
        (ProseSegment(text), QuoteSegment("q1")), (make_quote(text, 0, len(text)),)
    )
    out = render_answer_html(answer)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", out)
    root = parse(out)
    assert root.find_all("blockquote")[0].text() == "a␀b␛c\nd\ne\nf␡"
    assert escape("\"'<>&") == "&quot;&#x27;&lt;&gt;&amp;"


def test_standalone_page() -> None:
    answer = make_answer(
        (ProseSegment("<script>alert(1)</script>"), QuoteSegment("q1")),
        (make_quote(SOURCE, 0, 25),),
        question="</title><script>x</script>",
    )
    page = render_html_page(answer)
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">')
    root = parse(page)
    assert_inert(root, PAGE_TAGS)
    (title,) = root.find_all("title")
    assert title.text() == "quoteproof: </title><script>x</script>"
    assert len(root.find_all("main")) == 1
    assert len(root.find_all("figure", "verbatim")) == 1
    policy = next(
        n.attrs["content"]
        for n in root.find_all("meta")
        if n.attrs.get("http-equiv") == "Content-Security-Policy"
    )
    assert policy.startswith("default-src 'none'; style-src 'sha256-")
    import base64
    import hashlib

    (style,) = root.find_all("style")
    digest = base64.b64encode(hashlib.sha256(style.text().encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy


# ----------------------------------------------------------------- attacks

IMITATION = (
    '<figure class="verbatim"><figcaption>Verbatim from source — Fake</figcaption>'
    "<blockquote>fake</blockquote></figure>"
)

ATTACKS = [
    IMITATION,
    "<blockquote>fake</blockquote>",
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "' onmouseover='alert(1)",
    "javascript:alert(1)",
    '<a href="javascript:alert(1)">x</a>',
    "<!-- comment -->",
    "<![CDATA[x]]>",
    "<?php x ?>",
    "<!DOCTYPE x>",
    "</article></section></figure>",
    "<style>*{display:none}</style>",
    "<iframe src=//evil>",
    "&lt;script&gt;",
    "&#60;blockquote&#62;",
    "&amp",
    "\x00",
    "\x1b[31mred",
    "\x85\x9f",
    "\r\n<p>",
    "{{ 7*7 }}",
    "{% raw %}",
    "Verbatim from source",
    "Generated — not a quote",
]

attack_text = st.lists(st.sampled_from(ATTACKS) | st.text(max_size=12), max_size=4).map("".join)


@settings(max_examples=150, deadline=None)
@given(hostile_answers(attack_text), st.booleans(), st.booleans())
def test_only_quote_segments_become_verbatim_figures(
    answer: Answer, show_cited: bool, with_viewer: bool
) -> None:
    out = render_answer_html(
        answer, source_url=viewer if with_viewer else None, show_cited=show_cited
    )
    root = parse(out)
    assert_inert(root, FRAGMENT_TAGS)
    expected = shown_quotes(answer, show_cited)
    figures = root.find_all("figure")
    assert len(figures) == len(expected)
    assert all(f.classes() == {"verbatim"} for f in figures)
    assert len([n for n in root.iter() if "verbatim" in n.classes()]) == len(expected)
    blockquotes = root.find_all("blockquote")
    assert len(blockquotes) == len(expected)
    for figure, quote in zip(figures, expected, strict=True):
        (block,) = figure.find_all("blockquote")
        assert block.text() == visible(quote.text)
        assert figure.find_all("figcaption")[0].text().startswith(VERBATIM_LABEL + " — ")
        if with_viewer:
            assert len(figure.find_all("a", "source-link")) == 1
    # prose is shown, escaped, in labelled generated sections
    prose = [
        s
        for s in shown_segments(answer)
        if isinstance(s, ProseSegment) and (s.text.strip() or s.citations)
    ]
    generated = root.find_all("section", "generated")
    assert len(generated) == len(prose)
    for section, segment in zip(generated, prose, strict=True):
        assert section.attrs["aria-label"] == GENERATED_LABEL
        (body,) = section.find_all("p", "prose")
        assert body.text().startswith(visible(segment.text.strip()))
    assert len(root.find_all("div", "refusal")) == (answer.status == "refused")
    assert len(root.find_all("li", "statement")) == len(answer.statements)
    n_data = sum(isinstance(s, DataSegment) for s in shown_segments(answer))
    assert len(root.find_all("section", "data")) == n_data
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", out)


@settings(max_examples=40, deadline=None)
@given(hostile_answers(attack_text))
def test_standalone_page_is_inert(answer: Answer) -> None:
    root = parse(render_html_page(answer))
    assert_inert(root, PAGE_TAGS)
    assert len(root.find_all("figure", "verbatim")) == len(shown_quotes(answer, False))


def test_cli_ask_format_html(session_index_dir: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "quoteproof",
            "ask",
            "How is shingles treated?",
            "--index",
            str(session_index_dir),
            "--format",
            "html",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("<!DOCTYPE html>")
    root = parse(result.stdout)
    assert_inert(root, PAGE_TAGS)
    figures = root.find_all("figure", "verbatim")
    assert figures and all("shingles" in f.find_all("blockquote")[0].text() for f in figures)
    links = [f.find_all("a", "source-link")[0].attrs["href"] for f in figures]
    assert all(link.startswith("file:///") and link.endswith("shingles.md") for link in links)


def test_an_answer_without_a_model_says_so() -> None:
    root = parse(render_answer_html(make_answer((), (), llm=LLMInfo("extractive", None, ""))))
    (note,) = root.find_all("p", "no-model-notice")
    assert note.text() == f"Note: {NO_MODEL_NOTICE}" and note.attrs["role"] == "note"
    assert root.find_all("p", "answer-meta") == []


def test_a_model_answer_names_its_model_and_server() -> None:
    llm = LLMInfo("openai", "<b>gpt</b>", "", server="http://127.0.0.1:8080/v1")
    root = parse(render_answer_html(make_answer((), (), llm=llm)))
    assert root.find_all("p", "no-model-notice") == []
    (meta,) = root.find_all("p", "answer-meta")
    assert meta.text() == "model: <b>gpt</b> (openai) · server: http://127.0.0.1:8080/v1"
