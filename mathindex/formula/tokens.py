"""The grammar's two tokenizers: LaTeX source and Lean terms, both onto the vocabulary of `symbols`."""

from __future__ import annotations

import re

from mathindex.formula.symbols import (
    DELIM_MAP,
    GREEK,
    INFIX,
    RDOT,
    SKIP_MACROS,
    SUBSCRIPT_DIGITS,
    UNICODE,
    math_alphabet,
)

MAX_DEPTH = 60  # grouping levels; each level costs a handful of Python frames

_TEXT_CMDS = r"text|textrm|textit|textbf|textsf|texttt|mbox|hbox|emph|textnormal|textup"
_TOKEN_RE = re.compile(
    r"\\begin\s*\{([A-Za-z*]+)\}"  # 1 env name
    r"|\\end\s*\{([A-Za-z*]+)\}"  # 2
    rf"|\\(?:{_TEXT_CMDS})\s*\{{((?:[^{{}}]|\{{[^{{}}]*\}})*)\}}"  # 3 text (one level of inner braces)
    r"|\\(?:mathrm|operatorname\*?|mathop|mathit|mathsf|mathtt|rm|it)\s*\{(?!\s*\\[A-Za-z])([^{}$^_]*)\}"  # 4 named
    r"|\\(?:label|tag\*?|hspace\*?|vspace\*?|phantom|hphantom|vphantom|color|eqref|ref|cite)\s*\{[^{}]*\}"
    r"|\\(?:mathopen|mathclose|mathord|mathbin|mathrel|mathpunct|mathinner)\s*\{\s*\}"  # empty class groups
    r"|\\(?:mathbb|Bbb|mathbbm)\s*(\{\s*[A-Za-z0-9]+\s*\}|[A-Za-z0-9])"  # 5 blackboard: \mathbb Q, \mathbb{CP}
    r"|\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|big|Big|bigg|Bigg|middle)(?![A-Za-z])\s*(\.)?"  # 6 sizer
    r"|(\\[A-Za-z]+\*?)"  # 7 macro
    r"|(\\[^A-Za-z])"  # 8 escaped char / spacing
    r"|([0-9]+(?:\.[0-9]+)?)"  # 9 number
    r"|([A-Za-z])"  # 10 letter
    r"|(\s+)"  # 11 space
    r"|\{\s*\\(?:rm|mathrm|operatorname)\s+([A-Za-z]+)\s*\}"  # 12 grouped roman word: {\rm Hom}, {\rm d}
    r"|(.)",  # 13 any other char
    re.S,
)
_MATH_IN_TEXT = re.compile(r"\$([^$]*)\$")

_LEAN_TOKEN_RE = re.compile(
    r"([A-Za-z_\u03b1-\u03c9\u0391-\u03a9][A-Za-z0-9_'!?\u03b1-\u03c9\u0391-\u03a9\u2080-\u2089]*"
    r"(?:\.(?:[A-Za-z_\u03b1-\u03c9][A-Za-z0-9_'!?\u03b1-\u03c9\u2080-\u2089]*|[0-9]+(?![0-9.])))*)"  # 1 identifier
    r"|([0-9]+(?:\.[0-9]+)?)"  # 2 number
    r"|(:=|=>|->|<->|<=|>=|!=|\.\.|\^\^|<\||\|>)"  # 3 ascii digraph
    r"|(\s+)"  # 4
    r"|(.)",  # 5
    re.S,
)


def tokenize(src: str) -> list[str]:
    """LaTeX tokens; spacing commands dropped, \\left/\\right dropped (\\right. kept as RDOT)."""
    out: list[str] = []
    append = out.append
    for m in _TOKEN_RE.finditer(src):
        g = m.lastindex
        if g == 7:
            t = m.group(7)
            if t in SKIP_MACROS:
                continue
            append(DELIM_MAP.get(t, t))
        elif g == 10 or g == 9:
            append(m.group(g))
        elif g == 11:
            continue
        elif g == 13:
            t = m.group(13)
            if t == "~":
                continue
            u = UNICODE.get(t)
            append(u if u is not None else t)
        elif g == 8:
            t = m.group(8)
            if t in SKIP_MACROS or t in ("\\,", "\\;", "\\:", "\\!", "\\ ", "\\>", "\\/", "\\-"):
                continue
            append(DELIM_MAP.get(t, t))
        elif g == 1:
            append("\\begin{" + m.group(1) + "}")
        elif g == 2:
            append("\\end{" + m.group(2) + "}")
        elif g == 3:
            body = m.group(3)
            if body.isalpha():  # \text{Supp}, \text{d}: a name, like \mathrm{Supp}
                append("\x00m" + body)
            elif "$" in body:  # \text{for all $x \in A$}: words, and the formulas between them
                _text_with_math(body, out)
            else:  # \text{ for all }: words between formulas
                append("\x00t" + " ".join(body.split()))
        elif g == 12:
            append("\x00m" + m.group(12))
        elif g == 4:
            body = m.group(4)
            if not body.isalpha():  # \mathrm{ for all }, \mathit{Finite-}: words, like \text
                append("\x00t" + " ".join(body.split()))
            else:
                append("\x00m" + body)
        elif g == 5:
            append("\x00b" + m.group(5).strip("{} \t\n"))
        elif g == 6:
            if m.group(6) == "." and m.group(0).startswith("\\right"):
                append(RDOT)
        # group None: skipped command with argument (label, hspace, ...)
    if "\\not" in out:  # \not\in -> one negated relation
        merged: list[str] = []
        for tok in out:
            if merged and merged[-1] == "\\not" and ("\\not" + tok) in INFIX:
                merged[-1] = "\\not" + tok
            else:
                merged.append(tok)
        out = merged
    return out



def _text_with_math(body: str, out: list[str]) -> None:
    """The tokens of a text body holding `$…$`: each run of words one text token, each formula its
    own tokens (so `\\text{for all $x \\in A$}` is words, then the relation)."""
    last = 0
    for m in _MATH_IN_TEXT.finditer(body):
        words = " ".join(body[last:m.start()].split())
        if words:
            out.append("\x00t" + words)
        out.extend(tokenize(m.group(1)))
        last = m.end()
    words = " ".join(body[last:].replace("$", " ").split())
    if words:
        out.append("\x00t" + words)


def tokenize_lean(src: str) -> list[str]:
    """Lean tokens mapped onto the LaTeX vocabulary; identifiers kept whole as '\\x00l' tokens."""
    out: list[str] = []
    append = out.append
    for m in _LEAN_TOKEN_RE.finditer(src):
        g = m.lastindex
        if g == 1:
            t = m.group(1)
            if t == "fun":
                append("\\lambda_kw")
            elif t in ("in",):
                append("\\in")
            else:
                append("\x00l" + t)
        elif g == 2:
            append(m.group(2))
        elif g == 3:
            t = m.group(3)
            append({"<=": "\\le", ">=": "\\ge", "!=": "\\ne", "=>": "=>", "->": "\\to",
                    "<->": "\\iff", ":=": ":=", "..": "\\ldots", "^^": "^"}.get(t, t))
        elif g == 5:
            t = m.group(5)
            if t == "\u226b":  # ≫: composition in diagrammatic order
                append("\\ggg_comp")
                continue
            if "\u2080" <= t <= "\u2089":  # ℵ₀: a subscript digit
                out.extend(("_", t.translate(SUBSCRIPT_DIGITS)))
                continue
            if t == "\u2191":  # ↑ coercion: noise for search
                continue
            if t == "\u22a5":  # ⊥ is Lean's `Bot.bot`, a constant like ⊤, never LaTeX's perp relation
                append(t)
                continue
            if t == "{" or t == "}":  # Lean braces: sets and implicit binders, never TeX groups
                append("\\" + t)
                continue
            if t in "\u207b":  # superscript minus (of ⁻¹)
                append("\\inv")
                continue
            if t == "\u00b9" and out and out[-1] == "\\inv":
                continue
            u = UNICODE.get(t)
            if u is not None:
                append(u)
            elif ord(t) >= 0x2100 and math_alphabet(t):
                letter = math_alphabet(t)
                append("\x00b" + letter[3:] if letter.startswith("bb:") else "\x00v" + letter)
            elif t in GREEK:
                append("\x00l" + t)
            else:
                append(DELIM_MAP.get(t, t))
    return out


def brace_depth_ok(src: str, limit: int = MAX_DEPTH) -> bool:
    """A cheap pre-check: False when `{`/`(`/`[`/`\\left` nest deeper than `limit` anywhere."""
    depth = 0
    for ch in src:
        if ch == "{" or ch == "(" or ch == "[":
            depth += 1
            if depth > limit:
                return False
        elif ch == "}" or ch == ")" or ch == "]":
            depth -= 1
    return True
