"""XML reading: MediaWiki, LaTeXML and JATS documents into the same tables; hostile XML is refused."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from mathindex.latex import extract_latex_tree
from mathindex.latex.xmlreader import extract_xml_file

XML = Path(__file__).parent / "fixtures" / "latex" / "xml"

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol9 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
]>
<lolz><p>&lol9;</p></lolz>
"""
XXE = """<?xml version="1.0"?>
<!DOCTYPE doc [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<document><theorem class="ltx_theorem_lemma"><p>&xxe;</p></theorem></document>
"""
EXTERNAL_DTD = """<?xml version="1.0"?>
<!DOCTYPE document SYSTEM "http://example.invalid/evil.dtd">
<document><para><Math tex="a" mode="inline"/></para></document>
"""


def _rows(path: Path, rel: str):
    result = extract_xml_file(path, rel, "x")
    return result.statements, result.formulas, result.errors


def test_mediawiki_pages():
    statements, formulas, errors = _rows(XML / "wiki.xml", "wiki.xml")
    assert errors == []
    by_label = {s["label"]: s for s in statements}
    assert sorted(by_label) == ["Definition:Even Number", "Squares", "Sum of Odd Numbers"]
    odd = by_label["Sum of Odd Numbers"]
    assert odd["kind"] == "theorem" and odd["env"] == "Theorem" and odd["source"] == "xml"
    assert odd["body_normalised"].startswith("The sum of the first $n$ odd numbers is $n^2$:")
    assert odd["proof"].startswith("By [[Principle of Mathematical Induction|induction]]")
    assert odd["cites"] == ["Principle of Mathematical Induction", "Sum of Arithmetic Sequence"]
    assert odd["line_start"] == 6
    assert by_label["Definition:Even Number"]["kind"] == "definition"
    square = by_label["Squares"]
    assert (square["kind"], square["title"]) == ("lemma", "Square of a sum")
    assert "{{nowrap|all}} reals." in square["body"]
    tex = [(f["latex"], f["display"], f["role"], f["line"]) for f in formulas]
    assert ("\\sum_{k=1}^n (2k - 1) = n^2", "display", "statement", 8) in tex
    assert ("n", "inline", "proof", 11) in tex
    assert ("x^2 \\ge 0", "inline", None, 33) in tex
    assert not any(t[0] == "ignored" for t in tex)  # template namespace skipped
    assert [f["position"] for f in formulas] == list(range(len(formulas)))


def test_latexml_document():
    statements, formulas, errors = _rows(XML / "latexml.xml", "latexml.xml")
    assert errors == []
    (lemma,) = statements
    assert (lemma["kind"], lemma["label"], lemma["section_path"]) == ("lemma", "lem:first", ["Preliminaries"])
    assert lemma["body"] == "For every $x$ we have $x+0=x$."
    assert lemma["proof"].startswith("Trivial") and lemma["cites"] == ["lem:zero"]
    got = [(f["latex"], f["display"], f["role"]) for f in formulas]
    assert got == [("x", "inline", "statement"), ("x+0=x", "inline", "statement"),
                   ("0 + 0 = 0", "display", "proof"), ("y", "inline", None)]


def test_jats_article_with_external_dtd_not_loaded():
    statements, formulas, errors = _rows(XML / "jats.xml", "jats.xml")
    assert errors == []
    (thm,) = statements
    assert (thm["kind"], thm["title"], thm["label"], thm["section_path"]) == ("theorem", "Main", "thm1", ["Results"])
    assert thm["proof"] == "Add $c$, see Lemma 2." and thm["cites"] == ["lem2"]
    got = [(f["latex"], f["display"], f["role"]) for f in formulas]
    assert got == [("a < b", "inline", "statement"), ("a + c < b + c", "display", "statement"),
                   ("c", "inline", "proof"), ("z^2", "inline", None)]


@pytest.mark.parametrize("text", [BILLION_LAUGHS, XXE], ids=["billion-laughs", "external-entity"])
def test_entity_documents_are_refused(tmp_path, text):
    path = tmp_path / "evil.xml"
    path.write_text(text)
    start = time.monotonic()
    statements, formulas, errors = _rows(path, "evil.xml")
    assert time.monotonic() - start < 2
    assert statements == [] and formulas == []
    assert len(errors) == 1 and "refused" in errors[0][1]


def test_external_dtd_is_not_fetched(tmp_path):
    path = tmp_path / "ext.xml"
    path.write_text(EXTERNAL_DTD)
    _, formulas, errors = _rows(path, "ext.xml")
    assert errors == [] and [f["latex"] for f in formulas] == ["a"]


def test_malformed_and_oversized_xml(tmp_path):
    broken = tmp_path / "broken.xml"
    broken.write_text("<document>\n<para><Math tex='q' mode='inline'/>\n</document>")
    _, _, errors = _rows(broken, "broken.xml")
    assert len(errors) == 1 and errors[0][1].startswith("XML syntax error") and errors[0][0] == 3
    big = tmp_path / "big.xml"
    big.write_text("<document>" + "<p>x</p>" * 2000 + "</document>")
    result = extract_xml_file(big, "big.xml", "x", max_bytes=1000)
    assert "too large" in result.errors[0][1]


def test_xml_in_tree_next_to_tex(tmp_path):
    shutil.copy(XML / "latexml.xml", tmp_path / "paper.xml")
    (tmp_path / "evil.xml").write_text(BILLION_LAUGHS)
    (tmp_path / "notes.tex").write_text("\\begin{theorem} $t$ \\end{theorem}\n")
    result = extract_latex_tree(tmp_path, "mix", workers=1)
    assert result.statements.column("source").to_pylist() == ["latex", "xml"]
    assert result.formulas.column("file").to_pylist() == ["notes.tex"] + ["paper.xml"] * 4
    assert result.errors.column("file").to_pylist() == ["evil.xml"]
