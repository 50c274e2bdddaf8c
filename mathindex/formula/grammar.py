"""The project's LaTeX-math / Lean-term grammar: a regex tokenizer and a depth-bounded Pratt parser.

A tree is a tuple: (op, child, ...) for an operator node; leaves are ("#v", name) variables,
("#c", name) constants, ("#n", digits) numbers, ("#t", text) and ("#e",) for an empty slot.
Nesting deeper than MAX_DEPTH raises ParseError, so no input can reach Python's recursion limit.
"""

from __future__ import annotations

import re

MAX_DEPTH = 60  # grouping levels; each level costs a handful of Python frames
MAX_CHARS = 20_000  # longer inputs are not parsed by the grammar

EMPTY = ("#e",)

# Operators whose operands may be reordered (no rank marker in path tokens, sorted for hashing).
COMMUTATIVE = frozenset(
    {"add", "mul", "eq", "neq", "and", "or", "iff", "cup", "cap", "oplus", "set", "equiv",
     "cong", "sim", "simeq", "approx", "perp", "parallel", "gcd", "lcm", "max", "min", "sqcup",
     "vee", "lines"}
)
ASSOCIATIVE = frozenset({"add", "mul", "and", "or", "cup", "cap", "oplus", "otimes", "seq",
                         "compose", "sqcup", "times", "lines"})


class ParseError(ValueError):
    """The grammar rejected the input (the caller falls back to the MathML layout tree)."""


# ----------------------------------------------------------------------------------------------
# Tokenizer

_TEXT_CMDS = r"text|textrm|textit|textbf|textsf|texttt|mbox|hbox|emph|textnormal|textup"
_TOKEN_RE = re.compile(
    r"\\begin\s*\{([A-Za-z*]+)\}"  # 1 env name
    r"|\\end\s*\{([A-Za-z*]+)\}"  # 2
    rf"|\\(?:{_TEXT_CMDS})\s*\{{([^{{}}]*)\}}"  # 3 text
    r"|\\(?:mathrm|operatorname\*?|mathop|mathit|mathsf|mathtt|rm|it)\s*\{(?!\s*\\[A-Za-z])([^{}$^_]*)\}"  # 4 named
    r"|\\(?:label|tag\*?|hspace\*?|vspace\*?|phantom|hphantom|vphantom|color|eqref|ref|cite)\s*\{[^{}]*\}"
    r"|\\(?:mathbb|Bbb|mathbbm)\s*\{?\s*([A-Za-z0-9])\s*\}?"  # 5 blackboard
    r"|\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|big|Big|bigg|Bigg|middle)(?![A-Za-z])\s*(\.)?"  # 6 sizer
    r"|(\\[A-Za-z]+\*?)"  # 7 macro
    r"|(\\[^A-Za-z])"  # 8 escaped char / spacing
    r"|([0-9]+(?:\.[0-9]+)?)"  # 9 number
    r"|([A-Za-z])"  # 10 letter
    r"|(\s+)"  # 11 space
    r"|(.)",  # 12 any other char
    re.S,
)
_LEAN_TOKEN_RE = re.compile(
    r"([A-Za-z_\u03b1-\u03c9\u0391-\u03a9][A-Za-z0-9_'!?\u03b1-\u03c9\u0391-\u03a9\u2080-\u2089]*"
    r"(?:\.(?:[A-Za-z_\u03b1-\u03c9][A-Za-z0-9_'!?\u03b1-\u03c9\u2080-\u2089]*|[0-9]+(?![0-9.])))*)"  # 1 identifier
    r"|([0-9]+(?:\.[0-9]+)?)"  # 2 number
    r"|(:=|=>|->|<->|<=|>=|!=|\.\.|\^\^|<\||\|>)"  # 3 ascii digraph
    r"|(\s+)"  # 4
    r"|(.)",  # 5
    re.S,
)

SKIP_MACROS = frozenset(
    r"\, \; \: \! \  \quad \qquad \enspace \thinspace \medspace \thickspace \negthinspace "
    r"\displaystyle \textstyle \scriptstyle \scriptscriptstyle \limits \nolimits \nonumber "
    r"\notag \strut \mathstrut \allowbreak \nobreak \cr \hfill \hfil \relax \smash \noindent "
    r"\nolinebreak \linebreak \newline \protect \kern \mkern \ensuremath \expandafter".split()
) | {"\\ ", "~", "\\>", "\\/", "\\-", "\\@", "\\quad", "\\qquad"}
DELIM_MAP = {
    "\\lvert": "|", "\\rvert": "|", "\\vert": "|", "\\lVert": "\\|", "\\rVert": "\\|",
    "\\Vert": "\\|", "\\|": "\\|", "\\lbrace": "\\{", "\\rbrace": "\\}", "\\lbrack": "[",
    "\\rbrack": "]", "\u27e8": "\\langle", "\u27e9": "\\rangle", "\u2016": "\\|", "\u230a": "\\lfloor",
    "\u230b": "\\rfloor", "\u2308": "\\lceil", "\u2309": "\\rceil",
}
RDOT = "\\right."

# Unicode symbols (Lean statements, unicode LaTeX) mapped onto the LaTeX vocabulary.
UNICODE = {
    "\u2211": "\\sum", "\u220f": "\\prod", "\u222b": "\\int", "\u22c3": "\\bigcup", "\u22c2": "\\bigcap",
    "\u2200": "\\forall", "\u2203": "\\exists", "\u2208": "\\in", "\u2209": "\\notin",
    "\u2286": "\\subseteq", "\u2282": "\\subset", "\u2287": "\\supseteq", "\u2283": "\\supset",
    "\u2192": "\\to", "\u2190": "\\leftarrow", "\u2194": "\\iff", "\u21d4": "\\iff", "\u21d2": "\\implies",
    "\u2227": "\\land", "\u2228": "\\lor", "\u00ac": "\\neg", "\u2264": "\\le", "\u2265": "\\ge",
    "\u2260": "\\ne", "\u2223": "\\mid", "\u2022": "\\bullet", "\u2218": "\\circ", "\u00b7": "\\cdot",
    "\u00d7": "\\times", "\u222a": "\\cup", "\u2229": "\\cap", "\u2205": "\\emptyset", "\u221e": "\\infty",
    "\u2295": "\\oplus", "\u2297": "\\otimes", "\u2243": "\\simeq", "\u2245": "\\cong", "\u2248": "\\approx",
    "\u2261": "\\equiv", "\u21a6": "\\mapsto", "\u00b1": "\\pm", "\u2212": "-", "\u2216": "\\setminus",
    "\u2191": "\\uparrow", "\u207b\u00b9": "\\inv", "\u2115": "\\N", "\u2124": "\\Z", "\u211a": "\\Q",
    "\u211d": "\\R", "\u2102": "\\C", "\u2225": "\\parallel", "\u22a5": "\\perp", "\u22a2": "\\vdash",
    "\u2202": "\\partial", "\u2207": "\\nabla", "\u03bb": "\\lambda", "\u2218": "\\circ",
    "\u2026": "\\ldots", "\u22ef": "\\cdots", "\u226a": "\\ll", "\u2241": "\\nsim",
    "\u2245": "\\cong", "\u227a": "\\prec", "\u227b": "\\succ", "\u2a7d": "\\le", "\u2a7e": "\\ge",
    "\u2194": "\\iff", "\u27f6": "\\to", "\u27f9": "\\implies", "\u2a2f": "\\times", "\u2020": "\\dagger",
    "\u2032": "'", "\u21aa": "\\hookrightarrow", "\u21a0": "\\twoheadrightarrow", "\u2983": "{",
    "\u2984": "}", "\u224c": "\\simeq", "\u2135": "\\aleph", "\u27ea": "\\langle", "\u27eb": "\\rangle", "\u226b": "\\gg", "\u2a01": "\\bigoplus", "\u2a02": "\\bigotimes", "\u2a06": "\\sup", "\u2a05": "\\inf", "\u22c1": "\\bigvee", "\u22c0": "\\bigwedge",
}
BLACKBOARD = {"\\N": "N", "\\Z": "Z", "\\Q": "Q", "\\R": "R", "\\C": "C", "\\NN": "N", "\\ZZ": "Z",
              "\\QQ": "Q", "\\RR": "R", "\\CC": "C", "\\F": "F", "\\FF": "F", "\\PP": "P", "\\A": "A"}


def _greek_names() -> dict[str, str]:
    names = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
             "rho sigma tau upsilon phi chi psi omega").split()
    greek = {}
    for i, n in enumerate(names):
        greek["\\" + n] = n
        greek[chr(0x3B1 + i + (1 if i >= 17 else 0))] = n
        cap = n.capitalize()
        greek["\\" + cap] = cap
    for v in ("epsilon", "theta", "rho", "sigma", "phi", "pi", "kappa"):
        greek["\\var" + v] = v
    greek["\u03d5"] = "phi"
    greek["\u03c6"] = "phi"
    greek["\u03b5"] = "epsilon"
    greek["\u03f5"] = "epsilon"
    greek["\\ell"] = "l"
    greek["\\imath"] = "i"
    greek["\\jmath"] = "j"
    return greek


GREEK = _greek_names()
CONSTANT_MACROS = {
    "\\infty": "inf", "\\emptyset": "empty", "\\varnothing": "empty", "\\ldots": "dots",
    "\\cdots": "dots", "\\dots": "dots", "\\vdots": "dots", "\\ddots": "dots", "\\dotsc": "dots",
    "\\dotsb": "dots", "\\hbar": "hbar", "\\aleph": "aleph", "\\partial": "partial",
    "\\nabla": "nabla", "\\top": "top", "\\bot": "bot", "\\dagger": "dagger", "\\star": "star",
    "\\ast": "ast", "\\bullet": "bullet", "\\Box": "box", "\\square": "box", "\\checkmark": "check",
    "\\wp": "wp", "\\Re": "Re", "\\Im": "Im", "\\prime": "prime", "\\natural": "natural",
    "\\sharp": "sharp", "\\flat": "flat", "\\circ": "circ", "\\Diamond": "diamond",
    "\\triangle": "triangle", "\\angle": "angle", "\\forall": "forall", "\\exists": "exists",
    "\\colon": "colon", "\\cdot": "cdot", "\\times": "times", "\\to": "to", "\\otimes": "otimes",
    "\\amalg": "amalg", "\\coprod": "coprod",
}
FUNCTION_MACROS = frozenset(
    r"\sin \cos \tan \cot \sec \csc \arcsin \arccos \arctan \sinh \cosh \tanh \coth \log \ln \lg "
    r"\exp \det \dim \deg \ker \hom \arg \Pr \gcd \lcm \mod \bmod \Hom \Spec \Proj \Ext \Tor \Pic "
    r"\Gal \Aut \End \Frac \Sym \Div \Cl \Im \Re \id \rank \tr \Tr \codim \coker \Coker \Ker \sgn "
    r"\supp \Supp \Ass \Ann \Der \Mor \Ob \Sh \PSh \Sch \depth \trdeg \length \colim".split()
)
BIGOPS = {
    "\\sum": "sum", "\\prod": "prod", "\\coprod": "coprod", "\\int": "int", "\\iint": "int",
    "\\iiint": "int", "\\oint": "int", "\\bigcup": "bigcup", "\\bigcap": "bigcap",
    "\\bigoplus": "bigoplus", "\\bigotimes": "bigotimes", "\\bigvee": "bigvee",
    "\\bigwedge": "bigwedge", "\\bigsqcup": "bigsqcup", "\\lim": "lim", "\\limsup": "limsup",
    "\\liminf": "liminf", "\\sup": "sup", "\\inf": "inf", "\\max": "max", "\\min": "min",
    "\\varinjlim": "colim", "\\varprojlim": "lim", "\\colim": "colim", "\\injlim": "colim",
    "\\projlim": "lim", "\\bigodot": "bigodot", "\\biguplus": "biguplus", "\\esssup": "sup",
    "\\argmax": "argmax", "\\argmin": "argmin",
}
ACCENTS = {
    "\\hat": "hat", "\\widehat": "hat", "\\bar": "bar", "\\overline": "bar", "\\tilde": "tilde",
    "\\widetilde": "tilde", "\\dot": "dot", "\\ddot": "ddot", "\\vec": "vec", "\\check": "check",
    "\\underline": "underline", "\\breve": "breve", "\\acute": "acute", "\\grave": "grave",
    "\\overrightarrow": "vec", "\\mathring": "ring", "\\widecheck": "check",
}
FONTS = frozenset(
    r"\mathbf \mathcal \mathscr \mathfrak \mathsf \mathit \mathrm \mathtt \boldsymbol \bm \mathbold "
    r"\textbf \textit \operatorname \operatorname* \mathop \mathbin \mathrel \mathord \mathnormal "
    r"\boxed \mathpzc \EuScript \cal \bf \frak \scr \rm \it \sf \tt \pmb \mathring \mathsfit "
    r"\underbrace \overbrace \textup \mathopen \mathclose \mathpunct \mathinner \hbox \fbox".split()
)
# look-alike fonts share a class: a variable's font class is kept in its name ("cal:F") and in
# its anonymised path label ("Vcal"), so \mathcal{F} and \mathscr{F} agree and F differs
FONT_CLASS = {
    "\\mathcal": "cal", "\\mathscr": "cal", "\\cal": "cal", "\\scr": "cal", "\\EuScript": "cal",
    "\\mathpzc": "cal", "\\mathbf": "bf", "\\boldsymbol": "bf", "\\bm": "bf", "\\bf": "bf",
    "\\pmb": "bf", "\\mathbold": "bf", "\\textbf": "bf", "\\mathfrak": "frak", "\\frak": "frak",
    "\\mathsf": "sf", "\\sf": "sf", "\\mathsfit": "sf", "\\mathtt": "tt", "\\tt": "tt",
}


def with_font(node: tuple, cls: str) -> tuple:
    """`node` with its plain variables put in font class `cls` (iterative; constants unchanged)."""
    if node[0] == "#v":
        return node if ":" in node[1] else ("#v", cls + ":" + node[1])
    if node[0][0] == "#":
        return node
    results: list = []
    stack: list = [(node, False)]
    while stack:
        n, done = stack.pop()
        if n[0][0] == "#":
            results.append(("#v", cls + ":" + n[1]) if n[0] == "#v" and ":" not in n[1] else n)
            continue
        if done:
            k = len(n) - 1
            kids = results[len(results) - k:]
            del results[len(results) - k:]
            results.append((n[0], *kids))
            continue
        stack.append((n, True))
        stack.extend((c, False) for c in reversed(n[1:]))
    return results[0]


# infix tokens: token -> (left binding power, op, kind); kind: "l" left, "r" right, "rel", "seq"
_REL = 10
INFIX: dict[str, tuple[int, str, str]] = {}
for _t, _op in {
    "=": "eq", "\\ne": "neq", "\\neq": "neq", "<": "lt", "\\lt": "lt", "\\le": "le", "\\leq": "le",
    "\\leqslant": "le", "\\ge": "ge", "\\geq": "ge", "\\geqslant": "ge", ">": "gt", "\\gt": "gt",
    "\\in": "in", "\\ni": "ni", "\\notin": "notin", "\\subset": "subset", "\\subseteq": "subseteq",
    "\\subsetneq": "subsetneq", "\\supset": "supset", "\\supseteq": "supseteq",
    "\\supsetneq": "supsetneq", "\\equiv": "equiv", "\\cong": "cong", "\\sim": "sim",
    "\\simeq": "simeq", "\\approx": "approx", "\\propto": "propto", "\\mid": "mid",
    "\\nmid": "nmid", "\\parallel": "parallel", "\\perp": "perp", "\\models": "models",
    "\\vdash": "vdash", "\\prec": "prec", "\\succ": "succ", "\\preceq": "preceq",
    "\\succeq": "succeq", "\\ll": "ll", "\\gg": "gg", ":=": "defeq", "\\coloneqq": "defeq",
    "\\triangleleft": "normal", "\\trianglelefteq": "normal", "\\lhd": "normal", "\\unlhd": "normal",
    "\\asymp": "asymp", "\\doteq": "eq", "\\nsim": "nsim", "\\ncong": "ncong", "\\neq": "neq",
    "\\nsubseteq": "nsubseteq", "\\sqsubseteq": "sqsubseteq", "\\leqq": "le", "\\geqq": "ge",
    "\\lneq": "lt", "\\gneq": "gt", "\\cdots=": "eq", "\\owns": "ni", "\\dashv": "dashv",
    "\\between": "between", "\\smile": "smile", "\\frown": "frown",
}.items():
    INFIX[_t] = (_REL, _op, "rel")
for _t, _op in {
    "\\to": "to", "\\rightarrow": "to", "\\longrightarrow": "to", "\\mapsto": "mapsto",
    "\\longmapsto": "mapsto", "\\hookrightarrow": "inj", "\\twoheadrightarrow": "surj",
    "\\leftarrow": "from", "\\longleftarrow": "from", "\\gets": "from", "\\rightrightarrows": "to2",
    "\\leftrightarrow": "leftrightarrow", "\\dashrightarrow": "rational", "\\leadsto": "to",
    "\\rightsquigarrow": "to", "\\longleftrightarrow": "leftrightarrow", "\\uparrow": "up",
    "\\downarrow": "down", "\\searrow": "to", "\\nearrow": "to", "\\xrightarrow": "to",
    "\\xleftarrow": "from", "\\xhookrightarrow": "inj", "\\xmapsto": "mapsto",
    "\\hookleftarrow": "injfrom", "\\leftrightarrows": "adjoint", "\\rightleftarrows": "adjoint",
    "\\rightleftharpoons": "adjoint", "->": "to",
}.items():
    INFIX[_t] = (9, _op, "r")
for _t, _op in {"\\implies": "implies", "\\Rightarrow": "implies", "\\Longrightarrow": "implies",
                "=>": "implies", "\\Leftarrow": "impliedby", "\\Longleftarrow": "impliedby",
                "\\impliedby": "impliedby"}.items():
    INFIX[_t] = (4, _op, "r")
for _t in ("\\iff", "\\Leftrightarrow", "\\Longleftrightarrow", "<->"):
    INFIX[_t] = (3, "iff", "l")
for _t in ("\\land", "\\wedge", "&&"):
    INFIX[_t] = (6, "and", "l")
INFIX["\\wedge"] = (30, "wedge", "l")
for _t in ("\\lor", "\\vee", "||"):
    INFIX[_t] = (5, "or", "l")
INFIX["\\vee"] = (20, "vee", "l")
INFIX[":"] = (7, "typed", "r")
INFIX["<|"] = (8, "pipe", "r")  # Lean `f <| x`: application, built as apply in led
INFIX["|>"] = (8, "rpipe", "l")
INFIX["\\ggg_comp"] = (30, "rcompose", "l")  # Lean `≫`
INFIX["\\colon"] = (7, "typed", "r")
INFIX[","] = (1, "seq", "seq")
INFIX[";"] = (1, "seq", "seq")
for _t, _op in {"+": "add", "-": "sub", "\\pm": "pm", "\\mp": "mp", "\\cup": "cup", "\\cap": "cap",
                "\\setminus": "setminus", "\\backslash": "setminus", "\\oplus": "oplus",
                "\\sqcup": "sqcup", "\\amalg": "sqcup", "\\sqcap": "sqcap", "\\uplus": "uplus",
                "\\triangle": "symdiff", "\\ominus": "ominus"}.items():
    INFIX[_t] = (20, _op, "l")
for _t, _op in {"*": "mul", "\\cdot": "mul", "\\ast": "ast", "\\times": "times", "/": "frac",
                "\\div": "frac", "\\otimes": "otimes", "\\circ": "compose", "\\bullet": "mul",
                "\\star": "star", "\\odot": "odot", "\\boxtimes": "boxtimes",
                "\\rtimes": "rtimes", "\\ltimes": "ltimes", "\\bmod": "mod", "\\mod": "mod",
                "\\wr": "wr", "\\diamond": "diamond", "\\smallsetminus": "setminus",
                "\\centerdot": "mul", "\\cdotp": "mul", "\u2022": "mul", "\\bigstar": "star",
                "\u2022": "mul"}.items():
    INFIX[_t] = (30, _op, "l")
INFIX["\\setminus"] = (20, "setminus", "l")
INFIX["\\smallsetminus"] = (20, "setminus", "l")
_NEGATED = {"eq": "neq", "in": "notin", "mid": "nmid", "sim": "nsim", "cong": "ncong",
            "subseteq": "nsubseteq", "ni": "notni"}
for _t, (_bp, _op, _kind) in list(INFIX.items()):
    if _kind == "rel":  # \not\in, \not=, \not\subset: one negated relation token
        INFIX["\\not" + _t] = (_REL, _NEGATED.get(_op, "not_" + _op), "rel")
INFIX["\\not|"] = (_REL, "nmid", "rel")
_SWAP = {"gt": "lt", "ge": "le", "supset": "subset", "supseteq": "subseteq",
         "supsetneq": "subsetneq", "ni": "in", "from": "to", "impliedby": "implies", "succ": "prec",
         "succeq": "preceq", "injfrom": "inj"}
JUXT_BP = 32
MUL_BP = 30
SCRIPT_BP = 50
UNARY_BP = 25
CLOSERS = frozenset({")", "]", "}", "\\}", "\\rangle", "\\rfloor", "\\rceil", RDOT})


# ----------------------------------------------------------------------------------------------
# token stream


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
        elif g == 12:
            t = m.group(12)
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
            else:  # \text{ for all }: words between formulas
                append("\x00t" + " ".join(body.split()))
        elif g == 4:
            body = m.group(4)
            if not body.isalpha():  # \mathrm{ for all }, \mathit{Finite-}: words, like \text
                append("\x00t" + " ".join(body.split()))
            else:
                append("\x00m" + body)
        elif g == 5:
            append("\\" + m.group(5) if len(m.group(5)) == 1 else m.group(5))
            out[-1] = "\x00b" + m.group(5)
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


_LETTERLIKE = {"\u2112": "cal:L", "\u210b": "cal:H", "\u2110": "cal:I", "\u211b": "cal:R",
               "\u212c": "cal:B", "\u2130": "cal:E", "\u2131": "cal:F", "\u2133": "cal:M",
               "\u212d": "frak:C", "\u210c": "frak:H", "\u2111": "frak:I", "\u211c": "frak:R",
               "\u2128": "frak:Z"}


def math_alphabet(ch: str) -> str | None:
    """`𝓝` -> `cal:N`, `𝔪` -> `frak:m`, `𝔽` -> `bb:F`: a unicode math letter as a font-classed name."""
    if ch in _LETTERLIKE:
        return _LETTERLIKE[ch]
    cp = ord(ch)
    for base, cls in ((0x1D49C, "cal"), (0x1D4D0, "cal"), (0x1D504, "frak"), (0x1D56C, "frak"),
                      (0x1D538, "bb"), (0x1D400, "bf")):
        if base <= cp < base + 52:
            k = cp - base
            return cls + ":" + (chr(ord("A") + k) if k < 26 else chr(ord("a") + k - 26))
    return None


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
                out.extend(("_", t.translate(_SUBSCRIPT_DIGITS)))
                continue
            if t == "\u2191":  # ↑ coercion: noise for search
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


# ----------------------------------------------------------------------------------------------
# the parser


def _is_leaf(node: tuple) -> bool:
    return node[0][0] == "#"


def _flat(op: str, a: tuple, b: tuple) -> tuple:
    if op in ASSOCIATIVE:
        left = a[1:] if a[0] == op else (a,)
        right = b[1:] if b[0] == op else (b,)
        return (op, *left, *right)
    return (op, a, b)


class _Parser:
    """One parse over a token list; `lean` switches juxtaposition of identifiers to application."""

    __slots__ = ("toks", "i", "n", "depth", "lean")

    def __init__(self, toks: list[str], lean: bool) -> None:
        self.toks = toks
        self.i = 0
        self.n = len(toks)
        self.depth = 0
        self.lean = lean

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < self.n else None

    def next(self) -> str:
        if self.i >= self.n:
            raise ParseError("unexpected end of formula")
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, *options: str) -> str:
        t = self.peek()
        if t not in options:
            raise ParseError(f"expected {options[0]!r}, found {t!r}")
        self.i += 1
        return t

    # -- expressions -----------------------------------------------------------------------

    def expr(self, rbp: int, stops: frozenset) -> tuple:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ParseError("nesting too deep")
        t = self.peek()
        if t is None or t in stops or t in CLOSERS or t == "," or t == ";" or (
                t == "|" and self.lean and not self._bar_closes()):
            self.depth -= 1
            return EMPTY
        self.i += 1
        left = self.nud(t, stops)
        while True:
            t = self.peek()
            if t is None or t in stops:
                break
            inf = INFIX.get(t)
            if inf is not None:
                lbp = inf[0]
                if lbp <= rbp:
                    break
                self.i += 1
                left = self.led(t, inf, left, stops)
                continue
            if t[:2] == "\x00t" and len(t) > 3:
                # words between formulas: `a = 0 \text{ for } i > 0`
                if rbp >= 2:
                    break
                self.i += 1
                right = self.expr(2, stops)
                left = ("textsep", left, ("#t", t[2:]), right)
                continue
            if t == "^" or t == "_":
                if SCRIPT_BP <= rbp:
                    break
                left = self.scripts(left)
                continue
            if t == "'" or t == "!" or t == "\\inv" or t == "\\dagger" or t == "\\ast_post":
                self.i += 1
                left = ("prime" if t == "'" else "factorial" if t == "!" else "inv" if t == "\\inv"
                        else "dagger", left)
                continue
            if self.lean and t == "." and self.i + 1 < self.n and self.toks[self.i + 1][:2] == "\x00l":
                # `(chartAt H x).source`: a field of a parenthesised term
                self.i += 2
                left = ("apply", ("#c", self.toks[self.i - 1][2:].split(".")[-1]), left)
                continue
            if (t == "\\|" or (t == "|" and self.lean and self._bar_closes())) and t not in stops \
                    and JUXT_BP > rbp:
                right = self.expr(JUXT_BP, stops)  # `max ‖q‖ ‖r‖`: a norm opens here
                left = self.juxt(left, right)
                continue
            if t in CLOSERS or t == "&" or t == "\\\\" or t.startswith("\\end{") or t == "|" or t == "\\|":
                if t == "|" and self.i + 1 < self.n and self.toks[self.i + 1] in ("_", "^"):
                    self.i += 1
                    left = ("restrict", left, self.scripts(("#c", "restrict"))[2])
                    continue
                if t == "|" and "|" not in stops:
                    # `a | b` used as "divides" / "such that"
                    if _REL <= rbp:
                        break
                    self.i += 1
                    left = self.led("\\mid", INFIX["\\mid"], left, stops)
                    continue
                break
            if JUXT_BP <= rbp:
                break
            right = self.expr(JUXT_BP, stops)
            if right is EMPTY:
                break
            left = self.juxt(left, right)
        self.depth -= 1
        return left

    def _bar_closes(self) -> bool:
        """Lean: does the `|` at the cursor open |x| (another `|` follows at the same depth)?
        If not, it separates, as in `μ[t | s]`."""
        depth = 0
        for j in range(self.i + 1, min(self.n, self.i + 200)):
            t = self.toks[j]
            if t in ("(", "[", "{", "\\{", "\\langle"):
                depth += 1
            elif t in (")", "]", "}", "\\}", "\\rangle"):
                depth -= 1
                if depth < 0:
                    return False
            elif t == "|" and depth == 0:
                return True
        return False

    def juxt(self, left: tuple, right: tuple) -> tuple:
        """Juxtaposition: application after a function-like head, else multiplication."""
        if self.lean:
            if left[0] == "apply":
                return (*left, right)
            if left[0] in ("#v", "#c") or left[0] in ("sub",):
                return ("apply", left, right)
            return _flat("mul", left, right)
        if left[0] == "mul" and right[0] in ("paren", "tuple"):  # 2f(x): mul(2, apply(f, x))
            last = self.juxt(left[-1], right)
            if last[0] == "apply":
                return (*left[:-1], last)
        head = left
        while head[0] in ("sub", "pow", "prime") and len(head) > 1:  # \Ext^1_A(M, N), f'(x)
            head = head[1]
        if head[0] == "#c" and head[1][:1].isalpha() and len(head[1]) > 1 and head[1] not in (
                "inf", "dots", "empty", "partial", "nabla", "hbar", "aleph"):
            return ("apply", left, *(right[1:] if right[0] == "tuple" else (right,)))
        if right[0] == "tuple" and head[0] == "#v":  # C(X, Y): application to several arguments
            return ("apply", left, *right[1:])
        if right[0] == "bracket" and head[0] == "#v":  # k[x], μ[t | s]
            return ("apply", left, right)
        if right[0] == "paren" and head[0] == "#v":
            # f(x), a(W), \xi_{V/R}(m): application whatever the letter, so that renaming a
            # variable never changes the tree (an explicit \cdot keeps a product)
            return ("apply", left, right[1])
        if right[0] == "paren":
            right = right[1]
        if left[0] == "paren":
            left = left[1]
        return _flat("mul", left, right)

    def led(self, t: str, inf: tuple, left: tuple, stops: frozenset) -> tuple:
        lbp, op, kind = inf
        if left[0] == "paren":
            left = left[1]
        label = None
        if t in ("\\xrightarrow", "\\xleftarrow", "\\xhookrightarrow", "\\xmapsto"):
            if self.peek() == "[":
                self.i += 1
                self.expr(0, frozenset({"]"}))
                self.expect("]")
            label = self.arg()
        elif kind != "seq" and self.peek() in ("_", "^"):
            # an operator with scripts: \otimes_R, \times_S, \to^{f}, \otimes^{\mathbf{L}}
            label = self.scripts(("#c", "op"))
        if kind == "seq":
            right = self.expr(lbp, stops)
            if left[0] == "seq":
                return (*left, right)
            return ("seq", left, right)
        if kind == "r":
            right = self.expr(lbp - 1, stops)
        else:
            right = self.expr(lbp, stops)
        if right[0] == "paren":
            right = right[1]
        if op == "sub":
            return _flat("add", left, ("neg", right))
        if op == "pipe":
            return (*left, right) if left[0] == "apply" else ("apply", left, right)
        if op == "rpipe":
            return ("apply", right, left)
        if op == "rcompose":  # f ≫ g = g ∘ f
            return _flat("compose", right, left)
        if op in _SWAP:
            op = _SWAP[op]
            node = (op, right, left)
        elif kind == "rel" and left[0] == op and op in COMMUTATIVE and label is None:
            return (*left, right)  # a = b = c: eq(a, b, c)
        elif kind == "rel" and left[0] in _RELOPS and len(left) >= 3:
            # a chain a < b <= c: and(lt(a, b), le(b, c))
            return ("and", left, (op, left[-1], right))
        elif kind == "rel" and left[0] == "and" and left[-1][0] in _RELOPS:
            return (*left, (op, left[-1][-1], right))
        else:
            node = _flat(op, left, right)
        if label is not None:
            node = (*node, label)
        return node

    def scripts(self, base: tuple) -> tuple:
        sub = sup = None
        while True:
            t = self.peek()
            if t == "_" and sub is None:
                self.i += 1
                sub = self.arg()
            elif t == "^" and sup is None:
                self.i += 1
                sup = self.arg()
            else:
                break
        if sub is not None:
            base = ("sub", base, sub)
        if sup == _MINUS_ONE:  # x^{-1} is the inverse, as Lean's x⁻¹: one operator for both
            base = ("inv", base)
        elif sup is not None:
            base = ("pow", base, sup)
        return base

    def arg(self) -> tuple:
        """A macro argument or script: a braced group or one token."""
        t = self.peek()
        if t is None:
            raise ParseError("missing argument")
        if t == "{":
            self.i += 1
            e = self.expr(0, _BRACE_STOPS)
            self.expect("}")
            return e
        if t[0].isdigit() and len(t) > 1:  # \frac12, x^23: one digit only
            self.toks[self.i] = t[1:]
            return ("#n", t[0])
        self.i += 1
        if t in INFIX or t in CLOSERS or t in ("^", "_", "&", "\\\\"):
            if t in ("'",):
                return ("#c", "prime")
            return ("#c", t.lstrip("\\"))
        return self.nud(t, frozenset(), scripts=False)

    # -- prefix positions -----------------------------------------------------------------

    def nud(self, t: str, stops: frozenset, scripts: bool = True) -> tuple:
        c = t[0]
        if c == "\x00":
            kind, body = t[1], t[2:]
            if kind == "l":
                if body == "if":
                    return self.ite(stops)
                node = self.lean_ident(body)
            elif kind == "t":
                node = ("#t", body)
            elif kind == "b":
                node = ("#c", "bb" + body)
            elif kind == "v":
                node = ("#v", body)
            else:  # named operator \mathrm{word}
                node = ("#c", body) if len(body) > 1 else ("#v", body)
        elif c.isalpha() and len(t) == 1:
            node = ("#v", t)
        elif c.isdigit():
            node = ("#n", t)
        elif t == "(":
            inner = self.expr(0, _PAREN_STOPS)
            self.expect(")", "]", RDOT)
            node = ("tuple", *inner[1:]) if inner[0] == "seq" else ("paren", inner)
        elif t == "[":
            inner = self.expr(0, _BRACK_STOPS)
            self.expect("]", ")", RDOT)
            node = ("bracket", *(inner[1:] if inner[0] == "seq" else (inner,)))
        elif t == "{":
            inner = self.expr(0, _BRACE_STOPS)
            self.expect("}")
            node = inner if inner[0] != "paren" else inner[1]
        elif t == "\\{":
            node = self.set_braces()
        elif t == "|" or t == "\\|":
            inner = self.expr(0, _ABS_STOPS if t == "|" else _NORM_STOPS)
            if self.peek() == RDOT:
                self.i += 1
                node = ("restrict", inner)
            else:
                self.expect(t)
                node = ("abs", inner)  # |x| and ‖x‖: one magnitude operator for search
        elif t in ("\\langle", "\\lfloor", "\\lceil"):
            close = {"\\langle": "\\rangle", "\\lfloor": "\\rfloor", "\\lceil": "\\rceil"}[t]
            inner = self.expr(0, frozenset({close, RDOT}))
            self.expect(close, RDOT)
            op = {"\\langle": "angle", "\\lfloor": "floor", "\\lceil": "ceil"}[t]
            node = (op, *(inner[1:] if inner[0] == "seq" else (inner,)))
        elif t in GREEK:
            node = ("#v", GREEK[t])
        elif t in BIGOPS:
            node = self.bigop(BIGOPS[t], stops)
            scripts = False
        elif t in ("\\frac", "\\dfrac", "\\tfrac", "\\cfrac", "\\over"):
            node = ("frac", self.arg(), self.arg())
        elif t in ("\\binom", "\\dbinom", "\\tbinom", "\\choose"):
            node = ("binom", self.arg(), self.arg())
        elif t == "\\sqrt":
            if self.peek() == "[":
                self.i += 1
                idx = self.expr(0, frozenset({"]"}))
                self.expect("]")
                node = ("root", self.arg(), idx)
            else:
                node = ("sqrt", self.arg())
        elif t in ACCENTS:
            node = (ACCENTS[t], self.arg())
        elif t in FONTS:
            a = self.arg()
            cls = FONT_CLASS.get(t, "")
            node = with_font(a, cls) if cls else a
        elif t in ("\\overset", "\\underset", "\\stackrel"):
            over = self.arg()
            base = self.arg()
            node = (base[0], *base[1:], over) if base[0] in _RELOPS or base[0] == "#c" else ("stack", base, over)
            if base[0] == "#c" and base[1] in _REL_NAMES:
                node = ("#c", base[1])
        elif t in ("\\mathbb", "\\Bbb"):
            a = self.arg()
            node = ("#c", "bb" + (a[1] if _is_leaf(a) and len(a) > 1 else "?"))
        elif t in BLACKBOARD:
            node = ("#c", "bb" + BLACKBOARD[t])
        elif t in ("\\neg", "\\lnot", "\\not"):
            return ("not", self.expr(UNARY_BP, stops))
        elif t == "-" or t == "\\pm" or t == "\\mp" or t == "+":
            inner = self.expr(UNARY_BP, stops)
            if inner is EMPTY:
                return ("#c", t.lstrip("\\"))
            if t == "+":
                return inner
            return ("neg" if t == "-" else t[1:], inner)
        elif t in ("\\forall", "\\exists", "\\nexists", "\\exists!", "\\lambda_kw", "\\Pi_kw"):
            return self.binder({"\\forall": "forall", "\\exists": "exists", "\\nexists": "nexists",
                                "\\lambda_kw": "lambda"}.get(t, "exists"), stops)
        elif t.startswith("\\begin{"):
            node = self.environment(t[7:-1])
        elif t in ("\\xymatrix", "\\xy"):
            node = self.xymatrix()
        elif t == "\\pmod" or t == "\\pod":
            node = ("mod", self.arg())
        elif t in ("\\ar", "\\arrow"):
            node = self.xy_arrow()
        elif t in CONSTANT_MACROS:
            node = ("#c", CONSTANT_MACROS[t])
        elif t in FUNCTION_MACROS:
            node = ("#c", t[1:])
        elif t in INFIX:
            # an operator in prefix position: a partial formula such as `\to` or `= 0`
            right = self.expr(INFIX[t][0], stops) if INFIX[t][2] != "seq" else EMPTY
            op = INFIX[t][1]
            if t in ("\\xrightarrow", "\\xleftarrow"):
                right = self.arg()
            if right is EMPTY:
                return ("#c", op)
            return (_SWAP.get(op, op), EMPTY, right)
        elif t == "\\inv":
            node = ("#c", "inv")
        elif t == "\\uparrow":
            node = ("coe", self.expr(UNARY_BP, stops))
            return node
        elif t == "#":  # Lean `#s`: the cardinality, |s| in LaTeX
            node = ("abs", self.expr(SCRIPT_BP, stops))
            return node
        elif c == "\\":
            if t in ("\\right", "\\left", "\\\\", "\\end"):
                raise ParseError(f"unexpected {t}")
            if t in ("\\hline", "\\cline", "\\noalign"):
                return EMPTY
            name = t[1:].rstrip("*")
            node = ("#c", name) if len(name) > 1 else ("#v", name)
        elif t == "&" or t == "\\\\":
            raise ParseError(f"unexpected {t}")
        elif t in CLOSERS:
            raise ParseError(f"unbalanced {t}")
        elif t == "'":
            node = ("#c", "prime")
        elif t in ("^", "_"):
            self.i -= 1
            node = self.scripts(EMPTY)
            return node
        elif t == "@" or t == "$" or t == "?" or t == "." or t == '"' or t == "\\%" or t == "\\#":
            node = ("#c", t.lstrip("\\"))
        elif c.isalpha():  # unicode letters
            node = ("#v", t)
        else:
            node = ("#c", t)
        if scripts:
            nxt = self.peek()
            if nxt == "_" or nxt == "^":
                node = self.scripts(node)
        return node

    def lean_ident(self, name: str) -> tuple:
        """A Lean identifier: `n.divisors` is the application of `divisors` to `n`."""
        parts = name.split(".")
        if len(parts) == 1:
            return _lean_atom(name)
        if parts[0][:1].isupper() and len(parts[0]) > 1:  # Nat.card, Finset.sum: a qualified constant
            return ("#c", parts[-1])
        node = _lean_atom(parts[0])
        for field in parts[1:]:
            field = {"1": "fst", "2": "snd"}.get(field, field)
            node = ("apply", ("#c", field), node)
        return node

    def ite(self, stops: frozenset) -> tuple:
        """Lean `if c then a else b` (also `if h : c then ...`)."""
        cond = self.expr(0, _THEN)
        self.expect("\x00lthen")
        yes = self.expr(0, _ELSE)
        self.expect("\x00lelse")
        no = self.expr(2, stops)
        return ("ite", cond, yes, no)

    def set_braces(self) -> tuple:
        elem = self.expr(0, _SETB_STOPS)
        t = self.peek()
        if t in ("\\mid", "|", ":", "\\colon"):
            self.i += 1
            if self.lean and t == ":":  # Lean `{b : B | p b}`
                typ = self.expr(0, _SETB_STOPS)
                elem = ("typed", elem, typ)
                if self.peek() in ("|", "\\mid"):
                    self.i += 1
            cond = self.expr(0, _SETB_COND_STOPS)
            self.expect("\\}", RDOT)
            return ("setb", elem, cond)
        if t == RDOT or t is None:
            if t == RDOT:
                self.i += 1
            return ("cases", elem)
        self.expect("\\}")
        return ("set", *(elem[1:] if elem[0] == "seq" else (elem,))) if elem is not EMPTY else ("set",)

    def bigop(self, op: str, stops: frozenset) -> tuple:
        lo = hi = EMPTY
        while True:
            t = self.peek()
            if t == "_":
                self.i += 1
                lo = self.arg()
            elif t == "^":
                self.i += 1
                hi = self.arg()
            else:
                break
        binders = None
        if self.lean or (self.peek() is not None and self._lean_binder_ahead()):
            binders = self.lean_binders()
            if self.peek() == ",":
                self.i += 1
            lo = binders
        if op in ("lim", "sup", "inf", "max", "min", "limsup", "liminf", "colim", "argmax", "argmin"):
            body = self.expr(MUL_BP - 1, stops)
        else:
            body = self.expr(MUL_BP - 1, stops)
        if body[0] == "paren":
            body = body[1]
        if lo is EMPTY and hi is EMPTY and body is EMPTY:
            return ("#c", op)
        return (op, lo, hi, body)

    def _lean_binder_ahead(self) -> bool:
        # `\sum x \in s, f x` written without scripts (unicode LaTeX / Lean)
        j = self.i
        n = min(self.n, j + 12)
        depth = 0
        while j < n:
            t = self.toks[j]
            if t in ("(", "{", "["):
                depth += 1
            elif t in (")", "}", "]"):
                depth -= 1
            elif t == "," and depth == 0:
                return self.toks[self.i][:2] == "\x00l" or self.toks[self.i].isalpha()
            j += 1
        return False

    def lean_binders(self, ends: frozenset = frozenset({","})) -> tuple:
        """Binders up to the comma (or `=>`/`↦` of a lambda): `x y : T`, `(x : T)`, `{x}`,
        `[C x]`, `d ∈ s`, `x < n`."""
        names: list[tuple] = []
        conds: list[tuple] = []
        while True:
            t = self.peek()
            if t is None or t in ends:
                break
            if t in ("(", "{", "[", "\u2983", "\\{"):
                self.i += 1
                close = {"(": ")", "{": "}", "[": "]", "\u2983": "\u2984", "\\{": "\\}"}[t]
                inner = self.expr(0, frozenset({close}))
                self.expect(close)
                conds.append(inner)
                continue
            if t in INFIX and t not in (",",):
                lbp, op, kind = INFIX[t]
                self.i += 1
                right = self.expr(lbp if kind != "r" else lbp - 1, ends)
                if op == "typed":
                    conds.append(("typed", *names, right) if names else right)
                    names = []
                else:
                    var = names.pop() if names else EMPTY
                    conds.append((_SWAP.get(op, op), var, right) if op not in _SWAP else (_SWAP[op], right, var))
                continue
            self.i += 1
            node = self.nud(t, ends, scripts=False)
            names.append(node)
        items = conds + names
        if not items:
            return EMPTY
        return items[0] if len(items) == 1 else ("bind", *items)

    def binder(self, op: str, stops: frozenset) -> tuple:
        if self.lean or self._lean_binder_ahead():
            b = self.lean_binders(_LAMBDA_ENDS if op == "lambda" else _COMMA_STOPS)
            if self.peek() == ",":
                self.i += 1
            if op == "lambda" and self.peek() in ("=>", "\\mapsto"):
                self.i += 1
        else:
            b = self.expr(8, stops | _QUANT_STOPS)
            if self.peek() in (",", ":", "\\colon", "."):
                self.i += 1
        if op == "lambda" and self.peek() in ("=>", "\\mapsto"):
            self.i += 1
        body = self.expr(2, stops)
        return (op, b, body)

    def environment(self, name: str) -> tuple:
        base = name.rstrip("*")
        if base in ("array", "tabular") and self.peek() == "{":
            depth = 0
            while self.i < self.n:
                t = self.next()
                depth += t == "{"
                depth -= t == "}"
                if depth == 0:
                    break
        if base in ("alignat", "alignedat") and self.peek() == "{":
            self.arg()
        end = "\\end{" + name + "}"
        stops = frozenset({"&", "\\\\", end})
        rows: list[tuple] = []
        cells: list[tuple] = []
        lines = base in _LINE_ENVS
        while True:
            cell = self.expr(0, stops)
            t = self.next()
            if lines:
                if t == "&":
                    cells.append(cell)
                    continue
                cells.append(cell)
                merged = cells[0]
                for c in cells[1:]:
                    merged = _join_cells(merged, c)
                rows.append(merged)
                cells = []
            else:
                cells.append(cell)
                if t == "&":
                    continue
                rows.append(("row", *cells))
                cells = []
            if t == "\\\\":
                if self.peek() == "[":  # \\[2pt]
                    while self.i < self.n and self.next() != "]":
                        pass
                if self.peek() == end:
                    self.i += 1
                    break
                continue
            if t == end:
                break
            raise ParseError(f"unexpected {t} in {name}")
        while rows and rows[-1] in (EMPTY, ("row", EMPTY)):
            rows.pop()
        if lines:
            merged = rows[0] if rows else EMPTY
            for r in rows[1:]:
                merged = _join_cells(merged, r, line=True)
            return merged
        op = {"cases": "cases", "dcases": "cases", "vmatrix": "det", "Vmatrix": "norm"}.get(base, "matrix")
        return (op, *rows)

    def xymatrix(self) -> tuple:
        """`\\xymatrix{A \\ar[r]^f & B}`: a matrix of objects whose arrows are ("arrow", dir, label)."""
        while self.peek() not in ("{", None):  # @C=1em, @R=..., @!
            self.i += 1
        self.expect("{")
        stops = frozenset({"&", "\\\\", "}", "\\ar", "\\arrow"})
        rows: list[tuple] = []
        cells: list[tuple] = []
        while True:
            obj = self.expr(0, stops)  # the object, then its arrows
            arrows = []
            while self.peek() in ("\\ar", "\\arrow"):
                self.i += 1
                arrows.append(self.xy_arrow())
            cell = ("cell", obj, *arrows) if arrows else obj
            t = self.next()
            cells.append(cell)
            if t == "&":
                continue
            rows.append(("row", *cells))
            cells = []
            if t == "}":
                break
        return ("diagram", *rows)

    def xy_arrow(self) -> tuple:
        direction = ""
        while self.peek() == "@":  # \ar@{->>}, \ar@<1ex>
            self.i += 1
            if self.peek() in ("{", "<", "("):
                opener = self.next()
                close = {"{": "}", "<": ">", "(": ")"}[opener]
                depth = 1
                while self.i < self.n and depth:  # balanced: \ar@{^{(}->}
                    t = self.next()
                    depth += (t == opener) - (t == close)
            elif self.peek() is not None and self.peek() not in ("[",):
                self.i += 1
        if self.peek() == "[":
            self.i += 1
            parts = []
            while self.i < self.n and self.peek() != "]":
                parts.append(self.next())
            self.expect("]")
            direction = "".join(parts)
        label = EMPTY
        while self.peek() in ("^", "_", "|"):
            self.i += 1
            while self.peek() in ("<", ">", "-", "(", ")", "|"):  # ^-{f}, ^<(0.3){f}
                self.i += 1
            label = self.arg()
        return ("arrow", ("#c", direction or "?"), label)


_SUBSCRIPT_DIGITS = str.maketrans("\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089",
                                  "0123456789")


def _lean_atom(name: str) -> tuple:
    base = name.rstrip("\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089")
    if base and base != name:  # s₁ -> sub(s, 1), as LaTeX s_1
        return ("sub", _lean_atom(base), ("#n", name[len(base):].translate(_SUBSCRIPT_DIGITS)))
    if name in GREEK:
        return ("#v", GREEK[name])
    if len(name) == 1 or (len(name) <= 3 and name[1:].isdigit()) or name.endswith("'") and len(name) <= 3:
        return ("#v", name)
    if name in ("true", "True", "false", "False"):
        return ("#c", name.lower())
    return ("#c", name)


def _join_cells(a: tuple, b: tuple, line: bool = False) -> tuple:
    """Joins aligned cells: `a &= b` and continued lines `\\\\ &= c` into one relation chain."""
    if a is EMPTY:
        return b
    if b is EMPTY:
        return a
    if b[0] in _RELOPS and len(b) == 3 and b[1] is EMPTY:
        prev = a[-1] if a[0] in _RELOPS else a
        if a[0] == "and" and a[-1][0] in _RELOPS:
            prev = a[-1][-1]
            return (*a, (b[0], prev, b[2]))
        if a[0] in _RELOPS:
            if a[0] == b[0] and a[0] in COMMUTATIVE:
                return (*a, b[2])
            return ("and", a, (b[0], prev, b[2]))
        return (b[0], a, b[2])
    if b[0] == "add" and line and a[0] in _RELOPS:
        return (*a[:-1], _flat("add", a[-1], b))
    return ("lines", a, b) if line else _flat("mul", a, b)


_MINUS_ONE = ("neg", ("#n", "1"))
_RELOPS = frozenset(v[1] for v in INFIX.values() if v[2] == "rel") | frozenset(_SWAP.values()) | {
    "to", "mapsto", "inj", "surj", "implies", "iff"}
_REL_NAMES = frozenset(v[1] for v in INFIX.values())
_LINE_ENVS = frozenset({"align", "aligned", "eqnarray", "split", "gather", "gathered", "multline",
                        "alignat", "alignedat", "flalign", "equation", "displaymath", "math"})
_PAREN_STOPS = frozenset({")", "]", RDOT})
_BRACK_STOPS = frozenset({"]", ")", RDOT})
_BRACE_STOPS = frozenset({"}"})
_ABS_STOPS = frozenset({"|", RDOT})
_NORM_STOPS = frozenset({"\\|", RDOT})
_SETB_STOPS = frozenset({"\\}", "\\mid", "|", ":", "\\colon", RDOT})
_SETB_COND_STOPS = frozenset({"\\}", RDOT})
_COMMA_STOPS = frozenset({","})
_THEN = frozenset({"\x00lthen"})
_ELSE = frozenset({"\x00lelse"})
_LAMBDA_ENDS = frozenset({",", "=>", "\\mapsto"})
_QUANT_STOPS = frozenset({",", ":", "\\colon", "."})


def parse_tokens(toks: list[str], lean: bool = False) -> tuple:
    """The operator tree of a token list; raises ParseError when the grammar rejects it."""
    while toks and toks[-1] in (".", ",", ";", "\\\\"):
        toks = toks[:-1]
    if not toks:
        raise ParseError("empty formula")
    p = _Parser(toks, lean)
    stops = frozenset({"&", "\\\\"})
    rows: list[tuple] = []
    cells: list[tuple] = []
    while True:
        cell = p.expr(0, stops)
        t = p.peek()
        if t is None:
            cells.append(cell)
            break
        if t == "&":
            p.i += 1
            cells.append(cell)
            continue
        if t == "\\\\":
            p.i += 1
            cells.append(cell)
            merged = cells[0]
            for c in cells[1:]:
                merged = _join_cells(merged, c)
            rows.append(merged)
            cells = []
            if p.peek() == "[":
                while p.i < p.n and p.next() != "]":
                    pass
            continue
        raise ParseError(f"unexpected {t!r}")
    merged = cells[0]
    for c in cells[1:]:
        merged = _join_cells(merged, c)
    rows.append(merged)
    tree = rows[0]
    for r in rows[1:]:
        tree = _join_cells(tree, r, line=True)
    if tree is EMPTY:
        raise ParseError("empty formula")
    return strip_parens(tree)


def strip_parens(tree: tuple) -> tuple:
    """Removes grouping-only ("paren", x) nodes, iteratively (the tree may be deep)."""
    results: list = []
    stack: list = [(tree, False)]
    while stack:
        node, done = stack.pop()
        while node[0] == "paren":
            node = node[1]
        if node[0][0] == "#":
            results.append(node)
            continue
        if done:
            k = len(node) - 1
            kids = results[len(results) - k:]
            del results[len(results) - k:]
            op = node[0]
            if op in ASSOCIATIVE:
                flat: list = []
                for kid in kids:
                    if kid[0] == op:
                        flat.extend(kid[1:])
                    else:
                        flat.append(kid)
                kids = flat
            results.append((op, *kids))
            continue
        stack.append((node, True))
        for child in reversed(node[1:]):
            stack.append((child, False))
    return results[0]


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


def parse_latex(src: str) -> tuple:
    """The operator tree of a LaTeX formula; raises ParseError when the grammar rejects it."""
    if len(src) > MAX_CHARS:
        raise ParseError(f"formula longer than {MAX_CHARS} characters")
    return parse_tokens(tokenize(src.replace("\x00", "")), lean=False)


def parse_lean(src: str) -> tuple:
    """The operator tree of a Lean statement type, in the same vocabulary as parse_latex."""
    if len(src) > MAX_CHARS:
        raise ParseError(f"statement longer than {MAX_CHARS} characters")
    return parse_tokens(tokenize_lean(src.replace("\x00", "")), lean=True)


# ----------------------------------------------------------------------------------------------
# printing


def tree_text(tree: tuple) -> str:
    """One-line s-expression: (op child ...), variables bare, constants quoted with ', numbers bare."""
    out: list[str] = []
    stack: list = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.append(node)
            continue
        tag = node[0]
        if tag[0] == "#":
            if tag == "#v":
                out.append(node[1])
            elif tag == "#n":
                out.append(node[1])
            elif tag == "#e":
                out.append("_")
            elif tag == "#t":
                out.append('"' + node[1].replace('"', "'") + '"')
            else:
                out.append("'" + node[1])
            continue
        out.append("(" + tag)
        stack.append(")")
        for child in reversed(node[1:]):
            stack.append(child)
            stack.append(" ")
    return "".join(out)


def tree_json(tree: tuple) -> list:
    """The compact JSON form stored in FORMULA_TREES.tree (lists instead of tuples)."""
    return _convert(tree, lambda n, kids: [n[0], *kids] if n[0][0] != "#" else list(n))


def tree_dict(tree: tuple) -> dict:
    """The readable nested form printed by `mathindex formula`: op, comm, args / var / const."""
    def leaf(n: tuple) -> dict:
        kind = {"#v": "var", "#c": "const", "#n": "num", "#t": "text", "#e": "empty"}[n[0]]
        return {kind: n[1] if len(n) > 1 else ""}

    return _convert(tree, lambda n, kids: leaf(n) if n[0][0] == "#" else
                    {"op": n[0], "comm": n[0] in COMMUTATIVE, "args": kids})


def _convert(tree: tuple, make) -> object:
    """Post-order conversion without recursion (trees may be deep after a MathML fallback)."""
    results: list = []
    stack: list = [(tree, False)]
    while stack:
        node, done = stack.pop()
        if node[0][0] == "#":
            results.append(make(node, None))
            continue
        if done:
            k = len(node) - 1
            kids = results[len(results) - k:] if k else []
            del results[len(results) - k:]
            results.append(make(node, kids))
            continue
        stack.append((node, True))
        for child in reversed(node[1:]):
            stack.append((child, False))
    return results[0]


def from_json(obj: list) -> tuple:
    """Inverse of tree_json."""
    results: list = []
    stack: list = [(obj, False)]
    while stack:
        node, done = stack.pop()
        if node[0][0] == "#":
            results.append(tuple(node))
            continue
        if done:
            k = len(node) - 1
            kids = results[len(results) - k:] if k else []
            del results[len(results) - k:]
            results.append((node[0], *kids))
            continue
        stack.append((node, True))
        for child in reversed(node[1:]):
            stack.append((child, False))
    return results[0]
