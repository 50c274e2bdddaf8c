"""Never-fail fallback: a symbol layout tree from Presentation MathML (latex2mathml, read with lxml).

Layout nodes use the same tuple form as operator trees; `row` is a non-commutative sequence whose
leaves include operators as constants. Inputs the converter cannot take become a flat token row.
"""

from __future__ import annotations

import logging

from latex2mathml.converter import convert
from lxml import etree

from mathindex.formula.grammar import EMPTY, GREEK, brace_depth_ok, tokenize

log = logging.getLogger(__name__)

MAX_MATHML_CHARS = 5_000
MAX_TOKENS_ROW = 400
_PARSER = etree.XMLParser(recover=True, resolve_entities=False, no_network=True)
_LAYOUT = {
    "mfrac": "frac", "msup": "pow", "msub": "sub", "msubsup": "subsup", "msqrt": "sqrt",
    "mroot": "root", "mover": "over", "munder": "under", "munderover": "underover",
    "mtable": "matrix", "mtr": "row", "mtd": "cell", "menclose": "enclose", "mpadded": "row",
    "mstyle": "row", "mrow": "row", "math": "row", "mphantom": None, "semantics": "row",
    "mfenced": "paren", "mmultiscripts": "multiscripts",
}


def mathml_tree(latex: str) -> tuple:
    """The symbol layout tree of `latex`; raises ValueError when latex2mathml cannot convert it."""
    if len(latex) > MAX_MATHML_CHARS or not brace_depth_ok(latex, 200):
        raise ValueError("formula too large or too deeply nested for the MathML converter")
    try:
        xml = convert(latex)
    except RecursionError as exc:  # the converter is recursive; the pre-check makes this rare
        raise ValueError("MathML converter recursion") from exc
    except Exception as exc:  # noqa: BLE001 - latex2mathml raises many exception types on bad input
        raise ValueError(f"MathML converter: {type(exc).__name__}: {exc}") from exc
    root = etree.fromstring(xml.encode("utf-8"), _PARSER)
    if root is None:
        raise ValueError("MathML converter produced no XML")
    return _element_tree(root)


def _local(tag: object) -> str:
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def _element_tree(root: etree._Element) -> tuple:
    """Post-order conversion of the MathML element tree, without recursion."""
    results: list = []
    stack: list = [(root, False)]
    while stack:
        el, done = stack.pop()
        tag = _local(el.tag)
        if tag in ("mi", "mn", "mo", "mtext", "ms"):
            text = " ".join((el.text or "").split())
            if not text:
                results.append(EMPTY)
            elif tag == "mn":
                results.append(("#n", text))
            elif tag == "mtext":
                results.append(("#t", text))
            elif tag == "mi" and (len(text) == 1 or ("\\" + text) in GREEK):
                results.append(("#v", GREEK.get(text, text)))
            else:
                results.append(("#c", text))
            continue
        kids = [c for c in el if isinstance(c.tag, str)]
        if not done:
            stack.append((el, True))
            for child in reversed(kids):
                stack.append((child, False))
            continue
        k = len(kids)
        args = results[len(results) - k:] if k else []
        del results[len(results) - k:]
        args = [a for a in args if a is not EMPTY]
        op = _LAYOUT.get(tag, "row")
        if op is None:
            results.append(EMPTY)
        elif op in ("row", "cell") and len(args) == 1:
            results.append(args[0])
        elif not args:
            results.append(EMPTY)
        else:
            results.append((op, *args))
    out = results[0] if results else EMPTY
    if out is EMPTY:
        raise ValueError("empty MathML tree")
    return out


def token_row(latex: str) -> tuple:
    """The last resort: the first MAX_TOKENS_ROW tokens as a flat row of leaves."""
    leaves: list[tuple] = []
    for tok in tokenize(latex[:8_000])[:MAX_TOKENS_ROW]:  # 400 tokens lie well within 8,000 characters
        if tok[0] == "\x00" and len(tok) > 1:  # a command marker; a NUL typed by the user is not one
            leaves.append(("#c", tok[2:]) if tok[1] != "t" else ("#t", tok[2:]))
        elif tok.isdigit():
            leaves.append(("#n", tok))
        elif len(tok) == 1 and tok.isalpha():
            leaves.append(("#v", tok))
        elif tok in GREEK:
            leaves.append(("#v", GREEK[tok]))
        else:
            leaves.append(("#c", tok.lstrip("\\") or tok))
    if not leaves:
        return ("row", EMPTY)
    return ("row", *leaves)
