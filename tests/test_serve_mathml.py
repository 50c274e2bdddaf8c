"""What the server sends a browser is safe: MathML rebuilt from an allowlist (hostile inputs), the
page's script has no HTML sinks and keeps the same allowlist, pages escape corpus strings and carry
no inline script; LaTeX titles are clean reading text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml import etree

from mathindex.latex.plain import pieces, plain_statement, shorten
from mathindex.search.nodes import statement_title
from mathindex.serve.mathml import ATTRIBUTES, ELEMENTS, MATHML_NS, TOKENS, latex_mathml, sanitise, text_parts
from mathindex.serve.pages import declaration_page, source_page
from mathindex.serve.responses import Citation, DeclarationResponse, Dependency, Location, Node

STATIC = Path(__file__).resolve().parent.parent / "mathindex" / "serve" / "static"
NS = 'xmlns="http://www.w3.org/1998/Math/MathML"'


def _safe(out: str | None) -> str:
    """`out` is one <math> element of allowed elements and attributes, no value with a scheme; any
    markup of the input survives only as escaped text."""
    assert out is not None
    root = etree.fromstring(out.encode("utf-8"))
    for e in root.iter():
        assert isinstance(e.tag, str) and etree.QName(e).namespace == MATHML_NS, out
        assert etree.QName(e).localname in ELEMENTS, out
        assert set(e.attrib) <= ATTRIBUTES and not any(":" in v for v in e.attrib.values()), out
    assert not re.search(r"<(?!/?m[a-z]*[ >]|/?none>|/?semantics>|/?annotation>)", out), out
    return out


HOSTILE = [
    # event handlers on allowed elements, and elements that are not MathML
    f'<math {NS}><mi onclick="alert(1)" onmouseover="alert(2)">x</mi><img src="x" onerror="alert(3)"/></math>',
    # links: href and xlink:href with javascript:
    f'<math {NS} xmlns:xlink="http://www.w3.org/1999/xlink"><mrow href="javascript:alert(1)">'
    f'<mi xlink:href="javascript:alert(2)">x</mi></mrow></math>',
    # SVG inside MathML (with its script and onload) and annotation-xml with HTML
    f'<math {NS}><mtext><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script>'
    f'</svg></mtext><semantics><mi>y</mi><annotation-xml encoding="text/html"><img src="x" onerror="alert(3)"/>'
    f'</annotation-xml></semantics></math>',
    # HTML in another namespace inside a token, a style element, foreign objects
    f'<math {NS} xmlns:h="http://www.w3.org/1999/xhtml"><mtext><h:img src="x" onerror="alert(1)"/>t</mtext>'
    f'<style>*{{background:url(//evil)}}</style><mrow><foreignObject><a href="javascript:x">l</a></foreignObject></mrow></math>',
    # attribute values: a scheme, CSS, quotes
    f'<math {NS}><mstyle mathcolor="url(javascript:alert(1))" mathbackground="expression(alert(1))" '
    f'style="background:url(//evil)"><mi mathvariant="bold&quot; onclick=&quot;x">x</mi></mstyle></math>',
    # comments, processing instructions, CDATA holding markup
    f'<math {NS}><!-- <img src=x onerror=alert(1)> --><?xml-stylesheet href="javascript:x"?>'
    f'<mtext><![CDATA[<img src=x onerror=alert(1)>]]></mtext></math>',
]


@pytest.mark.parametrize("markup", HOSTILE)
def test_sanitise_drops_script_links_and_foreign_content(markup):
    out = _safe(sanitise(markup))
    assert out.startswith(f"<math {NS}") and out.endswith("</math>")


def test_sanitise_keeps_text_as_escaped_text_and_allowed_attributes():
    out = sanitise(f'<math {NS} display="block"><mstyle mathcolor="#c00"><mtext>&lt;img src=x&gt;</mtext>'
                   f'<mo stretchy="false" lspace="0.278em">(</mo></mstyle></math>')
    assert out == (f'<math {NS} display="block"><mstyle mathcolor="#c00"><mtext>&lt;img src=x&gt;</mtext>'
                   f'<mo lspace="0.278em" stretchy="false">(</mo></mstyle></math>')


@pytest.mark.parametrize("markup", [
    "", "not xml", "<mi>x</mi>", f"<math {NS}><mi>x</math>", '<svg><math/></svg>',
    '<!DOCTYPE math [<!ENTITY x "y">]><math><mi>&x;</mi></math>',
    f"<math {NS}>" + "<mrow>" * 100 + "</mrow>" * 100 + "</math>",  # deeper than MAX_DEPTH
])
def test_sanitise_refuses_what_is_not_one_math_element(markup):
    out = sanitise(markup)
    assert out is None or "&x;" not in out and "y" not in out


def test_latex_mathml_escapes_the_converters_raw_text():
    """latex2mathml passes \\text{...} through unescaped (the page ran the issue's payload)."""
    out = _safe(latex_mathml("\\text{<img/src='x'/onerror='alert(1)'>}"))
    assert "<mtext>&lt;img/src='x'/onerror='alert(1)'&gt;</mtext>" in out
    _safe(latex_mathml("\\href{javascript:alert(1)}{x}"))
    _safe(latex_mathml("\\text{<svg/onload=alert(1)>}"))
    assert "<mo>≥</mo>" in latex_mathml("a^2 + b^2 \\ge 2ab") and "<msup>" in latex_mathml("a^2")
    assert latex_mathml("\\frac{") is None and latex_mathml("x" * 5000) is None


def test_text_parts_split_prose_and_formulas():
    parts = text_parts("Let $G$ be a group with $$g^2 = e$$ and $\\frac{$ broken")
    assert parts[0] == {"text": "Let "} and parts[1]["latex"] == "G" and "<mi>G</mi>" in parts[1]["mathml"]
    assert 'display="block"' in parts[3]["mathml"]
    assert parts[-1] == {"text": " and $\\frac{$ broken"}  # unreadable: shown as typed


def _js_set(name: str) -> set[str]:
    js = (STATIC / "app.js").read_text(encoding="utf-8")
    body = re.search(rf"const {name} = new Set\(\[(.*?)\]\);", js, re.S)
    assert body, name
    return set(re.findall(r'"([^"]+)"', body.group(1)))


def test_the_pages_script_keeps_the_servers_allowlist():
    assert _js_set("MATHML_ELEMENTS") == ELEMENTS
    assert _js_set("MATHML_TOKENS") == TOKENS
    assert _js_set("MATHML_ATTRIBUTES") == ATTRIBUTES


def test_no_html_sinks_and_no_inline_script_or_style():
    sinks = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\s*\(|new\s+Function|"
                       r"srcdoc|createContextualFragment|text/html|setTimeout\s*\(\s*['\"`]")
    for js in STATIC.glob("*.js"):
        found = sinks.findall(js.read_text(encoding="utf-8"))
        assert not found, (js.name, found)
    for page in STATIC.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert all(re.search(r'src="/static/[a-z]+\.js"', tag) for tag in re.findall(r"<script[^>]*>", text))
        assert not re.search(r"<script[^>]*>\s*[^<\s]", text) and "<style" not in text
        assert not re.search(r"\son[a-z]+\s*=|\sstyle\s*=|javascript:", text, re.I)


def test_pages_escape_every_corpus_string():
    evil = "<img src=x onerror=alert(1)>\"'"
    page = source_page(evil, evil + ".tex", f"line {evil}\n</pre><script>alert(2)</script>")
    assert "<img" not in page and "<script" not in page and "&lt;script&gt;" in page
    d = DeclarationResponse(
        release_id=evil, node=Node(name=evil, kind=evil, title=evil, location=Location()),
        row={"body": f"Let $x$ be {evil} and $\\text{{{evil}}}$", "title": evil, "tag": evil, "slogan": evil},
        dependencies=[Dependency(target=evil, resolved=True, role=evil), Dependency(target=evil, resolved=False, role="proof")],
        dependencies_total=5, cited_by=[Citation(name=evil, role=evil)], cited_by_total=1,
        defined_at=Location(file=evil, line=3, source_url='/source/c/x"onmouseover="alert(1)'), informal=evil)
    page = declaration_page(d)
    assert "<img" not in page and "<script" not in page and "onerror=alert" not in page.replace("onerror=alert(1)&gt;", "")
    assert 'href="/source/c/x&quot;onmouseover=&quot;alert(1)"' in page
    assert page.count("<math") == 2 and "and 3 more" in page
    assert f'href="/decl/%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E%22%27"' in page


def test_statement_titles_are_clean_text():
    body = ("\\label{lemma-x}\\index{prime} Let $p$ be {\\it prime}, see \\cite[Thm 2]{Serre}. Then Sierpi\\'nski"
            "\n\\begin{equation}\\label{eq-x} a^2 \\ge 0 \\end{equation} holds.")
    title = statement_title(None, body)
    assert title == "Let $p$ be prime, see [Serre, Thm 2]. Then Sierpiński $$a^2 \\ge 0$$ holds."
    assert statement_title("B\\'ezout--Heine \\label{t}", body) == "Bézout–Heine"
    assert statement_title("", "  a \n body\twith  space ") == "a body with space"
    assert plain_statement("\\begin{align*} a &= b \\\\ c &= d \\end{align*}") == \
        "$$\\begin{aligned}a &= b \\\\ c &= d\\end{aligned}$$"
    long = "word " * 100 + "$x^2$"
    assert len(shorten(long, 50)) <= 50 and shorten(long, 50).endswith("…")
    cut = shorten("ab $" + "x+" * 100 + "1$ tail", 50)
    assert cut == "ab…" and all(p.text.count("$") == 0 for p in pieces(cut))  # a formula is never cut
