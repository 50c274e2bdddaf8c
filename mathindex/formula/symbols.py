"""The grammar's vocabulary: symbol tables mapping LaTeX, unicode and Lean spellings onto one set of
operator names, binding powers and the tree constants the parser and the printers share."""

from __future__ import annotations

EMPTY = ("#e",)

# Operators whose operands may be reordered (no rank marker in path tokens, sorted for hashing).
COMMUTATIVE = frozenset(
    {"add", "mul", "eq", "neq", "and", "or", "iff", "cup", "cap", "oplus", "set", "equiv",
     "cong", "sim", "simeq", "approx", "perp", "parallel", "gcd", "lcm", "max", "min", "sqcup",
     "vee", "lines"}
)
ASSOCIATIVE = frozenset({"add", "mul", "and", "or", "cup", "cap", "oplus", "otimes", "seq",
                         "compose", "sqcup", "times", "lines"})


SKIP_MACROS = frozenset(
    r"\, \; \: \! \  \quad \qquad \enspace \thinspace \medspace \thickspace \negthinspace "
    r"\displaystyle \textstyle \scriptstyle \scriptscriptstyle \limits \nolimits \nonumber "
    r"\notag \strut \mathstrut \allowbreak \nobreak \cr \hfill \hfil \relax \smash \noindent "
    r"\nolinebreak \linebreak \newline \protect \kern \mkern \ensuremath \expandafter \xspace".split()
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



REL_BP = 10
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
    INFIX[_t] = (REL_BP, _op, "rel")
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
for _t, _op in {"\\over": "frac", "\\choose": "binom", "\\atop": "atop", "\\brack": "binom",
                "\\above": "frac"}.items():  # TeX's generalized fractions: the whole group is split
    INFIX[_t] = (1, _op, "over")
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
NEGATED = {"eq": "neq", "in": "notin", "mid": "nmid", "sim": "nsim", "cong": "ncong",
            "subseteq": "nsubseteq", "ni": "notni"}
for _t, (_bp, _op, _kind) in list(INFIX.items()):
    if _kind == "rel":  # \not\in, \not=, \not\subset: one negated relation token
        INFIX["\\not" + _t] = (REL_BP, NEGATED.get(_op, "not_" + _op), "rel")
INFIX["\\not|"] = (REL_BP, "nmid", "rel")
SWAP = {"gt": "lt", "ge": "le", "supset": "subset", "supseteq": "subseteq",
         "supsetneq": "subsetneq", "ni": "in", "from": "to", "impliedby": "implies", "succ": "prec",
         "succeq": "preceq", "injfrom": "inj"}
JUXT_BP = 32
MUL_BP = 30
SCRIPT_BP = 50
UNARY_BP = 25
# old-style font switches: `{\\bf M x}` sets the rest of its group in the font
SWITCHES = {"\\bf": "bf", "\\cal": "cal", "\\frak": "frak", "\\scr": "cal", "\\sf": "sf", "\\tt": "tt",
            "\\rm": "", "\\it": "", "\\boldmath": "bf", "\\mit": ""}
STACKERS = frozenset({"\\overset", "\\underset", "\\stackrel"})
CLOSERS = frozenset({")", "]", "}", "\\}", "\\rangle", "\\rfloor", "\\rceil", RDOT})
MINUS_ONE = ("neg", ("#n", "1"))
RELOPS = frozenset(v[1] for v in INFIX.values() if v[2] == "rel") | frozenset(SWAP.values()) | {
    "to", "mapsto", "inj", "surj", "implies", "iff"}
REL_NAMES = frozenset(v[1] for v in INFIX.values())
LINE_ENVS = frozenset({"align", "aligned", "eqnarray", "split", "gather", "gathered", "multline",
                        "alignat", "alignedat", "flalign", "equation", "displaymath", "math"})

SUBSCRIPT_DIGITS = str.maketrans("\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089",
                                  "0123456789")


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

