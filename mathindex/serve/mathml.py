"""The only maker of the MathML the server sends: LaTeX converted by latex2mathml, then rebuilt from
an allowlist of MathML elements and attributes (`sanitise`), so no converter quirk or hostile formula
puts markup, script, links or foreign content (<svg>, <annotation-xml>, HTML) in a browser.

static/app.js keeps the same allowlist (tests/test_serve_mathml.py compares them) and rebuilds
what it receives with DOM calls again."""

from __future__ import annotations

import html
import re
from functools import lru_cache
from xml.etree.ElementTree import Element

from latex2mathml.converter import convert_to_element
from lxml import etree

from mathindex.formula.grammar import brace_depth_ok
from mathindex.latex.plain import pieces

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
# MathML Core's presentation elements and the few the converter writes beyond it (mfenced, menclose)
ELEMENTS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub", "msubsup", "mfrac", "msqrt",
    "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom",
    "menclose", "merror", "mfenced", "mmultiscripts", "mprescripts", "none", "semantics", "annotation",
})  # fmt: skip
# elements whose content is text only: an element inside one is dropped (its tail text kept)
TOKENS = frozenset({"mi", "mn", "mo", "ms", "mtext", "annotation"})
ATTRIBUTES = frozenset({
    "display", "displaystyle", "scriptlevel", "mathvariant", "mathsize", "mathcolor", "mathbackground", "dir",
    "stretchy", "fence", "form", "separator", "lspace", "rspace", "accent", "accentunder", "movablelimits",
    "largeop", "symmetric", "minsize", "maxsize", "width", "height", "depth", "voffset", "linethickness",
    "notation", "columnalign", "rowalign", "columnspan", "rowspan", "columnlines", "rowlines", "columnspacing",
    "rowspacing", "frame", "open", "close", "separators", "encoding",
})  # fmt: skip
# an attribute value: lengths, keywords, colours, fences; no ':' (no scheme), no quotes, no '<', no '&'
VALUE = re.compile(r"[\w#.,%+\- ()\[\]{}|/]{0,64}")
MAX_MATHML_CHARS = 50_000
MAX_DEPTH = 64
MAX_LATEX_CHARS = 2_000
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                          remove_comments=True, remove_pis=True)
_CHAR_REF = re.compile(r"&#(x[0-9A-Fa-f]{1,6}|[0-9]{1,7});")


def sanitise(markup: str) -> str | None:
    """`markup` (one <math> element) rebuilt from the allowlist: other elements are dropped with
    their content, other attributes and values outside VALUE dropped, text escaped; None when it
    is not well-formed XML, not a <math> element, too long or too deep."""
    if not markup or len(markup) > MAX_MATHML_CHARS:
        return None
    try:
        root = etree.fromstring(markup.encode("utf-8"), _PARSER)
    except (etree.XMLSyntaxError, ValueError):
        return None
    if _name(root) != "math":
        return None
    out: list[str] = []
    return "".join(out) if _write(root, out, 0) else None


def latex_mathml(latex: str, display: bool = False) -> str | None:
    """One formula's sanitised MathML, or None when the converter cannot read it (or it is larger
    than MAX_LATEX_CHARS or nested deeper than MAX_DEPTH braces)."""
    latex = latex.strip()
    if not latex or len(latex) > MAX_LATEX_CHARS or not brace_depth_ok(latex, MAX_DEPTH):
        return None
    return _converted(latex, display)


def text_parts(text: str) -> list[dict[str, str]]:
    """`text` (prose with $…$ formulas) as parts to show: {"text": …} for prose and for a formula the
    converter cannot read, {"latex": …, "mathml": …} for one it can."""
    parts: list[dict[str, str]] = []
    for p in pieces(text):
        mathml = latex_mathml(p.text, p.display) if p.math else None
        if mathml is not None:
            parts.append({"latex": p.text, "mathml": mathml})
        elif p.text:
            shown = (f"$${p.text}$$" if p.display else f"${p.text}$") if p.math else p.text
            if parts and "text" in parts[-1]:
                parts[-1] = {"text": parts[-1]["text"] + shown}
            else:
                parts.append({"text": shown})
    return parts


@lru_cache(maxsize=8192)
def _converted(latex: str, display: bool) -> str | None:
    try:
        element = convert_to_element(latex, display="block" if display else "inline")
    except RecursionError:
        return None
    except Exception:  # noqa: BLE001 - latex2mathml raises many exception types on bad input
        return None
    out: list[str] = []
    _serialise(element, out)  # the converter's own serialiser leaves text unescaped (`\text{<img>}`)
    return sanitise("".join(out))


def _serialise(element: Element, out: list[str]) -> None:
    """The converter's tree as XML with every text escaped; its text holds character references
    (`&#x0002B;`) written as text, which are decoded first."""
    attrs = "".join(f' {k}="{html.escape(v, quote=True)}"' for k, v in element.attrib.items())
    out.append(f"<{element.tag}{attrs}>{_escaped(element.text)}")
    for child in element:
        _serialise(child, out)
        out.append(_escaped(child.tail))
    out.append(f"</{element.tag}>")


def _escaped(text: str | None) -> str:
    if not text:
        return ""
    return html.escape(_CHAR_REF.sub(_char, text), quote=False)


def _char(m: re.Match) -> str:
    ref = m.group(1)
    code = int(ref[1:], 16) if ref[0] == "x" else int(ref)
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"


def _name(element) -> str | None:
    """The element's MathML name; None for anything outside the MathML namespace (or no namespace)."""
    if not isinstance(element.tag, str):
        return None  # a comment or processing instruction
    q = etree.QName(element)
    return q.localname if q.namespace in (MATHML_NS, None) else None


def _write(element, out: list[str], depth: int) -> bool:
    """Appends the allowed part of `element` to `out`; False when the tree is deeper than MAX_DEPTH."""
    if depth > MAX_DEPTH:
        return False
    name = _name(element)
    attrs = "".join(f' {k}="{html.escape(v, quote=True)}"' for k, v in sorted(element.attrib.items())
                    if k in ATTRIBUTES and VALUE.fullmatch(v))
    if name == "math":
        attrs = f' xmlns="{MATHML_NS}"' + attrs
    out.append(f"<{name}{attrs}>{_text(element.text)}")
    for child in element:
        child_name = _name(child)
        if name not in TOKENS and child_name in ELEMENTS and child_name != "math":
            if not _write(child, out, depth + 1):
                return False
        out.append(_text(child.tail))
    out.append(f"</{name}>")
    return True


def _text(text: str | None) -> str:
    return html.escape(text, quote=False) if text else ""
