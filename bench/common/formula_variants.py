"""Seeded rewrite rules that make formula variants (bench/suites/formula_variants.yaml).

Each rule maps (latex, rng) to a variant string, or None where it does not apply. The rules act
on the LaTeX text, as a user typing the formula differently would, never on our parse tree.
"""

from __future__ import annotations

import random
import re
import string

_GREEK = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
          "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "phi", "chi", "psi", "omega"]
_SCAN = re.compile(
    r"(\\begin\s*\{[^}]*\}|\\end\s*\{[^}]*\}"
    r"|\\(?:text|textrm|textit|textbf|mathrm|operatorname\*?|mathit|mathsf|mbox|hbox|label|ref"
    r"|mathop|mathbb|Bbb|textsf|texttt)\s*\{[^{}]*\}"
    r"|\\(?:ar|xymatrix)\b(?:@[^\[{]*)?(?:\[[^\]]*\])?"
    r"|\\[A-Za-z]+|\\.|[A-Za-z]|.)",
    re.S,
)


def _tokens(s: str) -> list[str]:
    return _SCAN.findall(s)


def rename(s: str, rng: random.Random) -> str | None:
    """Renames every single-letter variable (case kept) and Greek letter, by a seeded bijection."""
    toks = _tokens(s)
    letters = sorted({t for t in toks if len(t) == 1 and t.isalpha()})
    greek = sorted({t[1:] for t in toks if t[1:] in _GREEK})
    if len(letters) + len(greek) == 0:
        return None
    lower = list(string.ascii_lowercase)
    upper = list(string.ascii_uppercase)
    mapping: dict[str, str] = {}
    for pool in (lower, upper):
        used = [c for c in letters if c in pool]
        targets = pool[:]
        rng.shuffle(targets)
        # a derangement where possible: no letter keeps its name
        for c in used:
            choice = next((t for t in targets if t != c), c)
            targets.remove(choice)
            mapping[c] = choice
    g_targets = _GREEK[:]
    rng.shuffle(g_targets)
    for g in greek:
        choice = next((t for t in g_targets if t != g), g)
        g_targets.remove(choice)
        mapping["\\" + g] = "\\" + choice
    out = []
    for t in toks:
        if t in mapping:
            rep = mapping[t]
            # a Greek macro followed by a letter needs a separator
            out.append(rep + " " if rep.startswith("\\") else rep)
        else:
            out.append(t)
    v = "".join(out)
    return v if v != s else None


_COMM_OPS = ["=", "+", "\\cdot", "\\cup", "\\cap", "\\oplus", "\\cong", "\\simeq", "\\sim"]
_LOWER = {  # tokens of lower precedence that forbid a top-level split at the key operator
    "=": {",", ";", ":", "\\colon", "\\to", "\\mapsto", "\\longrightarrow", "\\rightarrow", "<", ">",
          "\\leq", "\\geq", "\\le", "\\ge", "\\subset", "\\subseteq", "\\in", "\\cong", "\\sim",
          "\\simeq", "\\neq", "\\Rightarrow", "\\iff", "\\quad", "\\qquad", "\\text", "&", "\\\\",
          "\\mid", "\\xrightarrow", "\\longmapsto", "\\leftarrow", "\\supset", "\\equiv", "\\ne"},
}
_REL = _LOWER["="] | {"="}
_LOWER["+"] = _REL | {"-", "\\pm", "\\mp", "\\setminus", "\\cup", "\\cap", "\\oplus", "\\otimes",
                      "\\times", "\\circ", "/", "\\cdot", "\\sum", "\\prod", "\\bigoplus", "\\lim",
                      "\\colim", "\\int"}
_LOWER["\\cdot"] = _LOWER["+"] | {"+"}
for _op in ("\\cup", "\\cap", "\\oplus"):
    _LOWER[_op] = _REL | {"+", "-", "\\setminus", "\\cup", "\\cap", "\\oplus", "\\otimes", "\\times",
                          "/", "\\cdot", "\\circ"} - {_op}
for _op in ("\\cong", "\\simeq", "\\sim"):
    _LOWER[_op] = _LOWER["="] - {_op} | {"="}


def _split_top(toks: list[str], op: str) -> list[list[str]] | None:
    depth = 0
    parts: list[list[str]] = [[]]
    for t in toks:
        if t in ("{", "(", "[", "\\{") or t in ("\\left",):
            depth += 1 if t != "\\left" else 0
        if t in ("}", ")", "]", "\\}"):
            depth -= 1
            if depth < 0:
                return None
        if depth == 0 and t == op:
            parts.append([])
            continue
        if depth == 0 and t in _LOWER[op]:
            return None
        if depth == 0 and t.startswith("\\text"):
            return None
        parts[-1].append(t)
    if depth != 0 or len(parts) < 2 or any(not "".join(p).strip() for p in parts):
        return None
    return parts


def commute(s: str, rng: random.Random) -> str | None:
    """Reverses the operands of the first top-level commutative operator it can split at."""
    toks = _tokens(s)
    for op in _COMM_OPS:
        parts = _split_top(toks, op)
        if parts is None or (op == "=" and len(parts) != 2):
            continue
        if op == "\\cdot" and any(_ends_with_script_op(p) for p in parts):
            continue
        sep = f" {op} "
        v = sep.join("".join(p).strip() for p in reversed(parts))
        if v != s:
            return v
    return None


def _ends_with_script_op(part: list[str]) -> bool:
    text = "".join(part).strip()
    return text.endswith("_") or text.endswith("^")


_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_SLASH = re.compile(r"(?<![\\A-Za-z])([A-Za-z0-9])\s*/\s*([A-Za-z0-9])(?![A-Za-z0-9_^])")
_ATOM = re.compile(r"^\s*(?:[A-Za-z0-9]|\\[A-Za-z]+)\s*$")


def frac_slash(s: str, rng: random.Random) -> str | None:
    """\\frac{a}{b} -> (a)/(b) (parentheses only around compound parts), or a/b -> \\frac{a}{b}."""
    m = _FRAC.search(s)
    if m:
        a, b = m.group(1), m.group(2)
        a = a.strip() if _ATOM.match(a) else f"({a.strip()})"
        b = b.strip() if _ATOM.match(b) else f"({b.strip()})"
        whole = m.start() == 0 and m.end() == len(s.rstrip())
        rep = f"{a}/{b}" if whole else f"({a}/{b})"
        return s[: m.start()] + rep + s[m.end():]
    m = _SLASH.search(s)
    if m:
        return s[: m.start()] + "\\frac{" + m.group(1) + "}{" + m.group(2) + "}" + s[m.end():]
    return None


_JUXT = re.compile(r"(?<![\\A-Za-z{])([0-9]*[a-z])([a-z])(?![A-Za-z{])")


def cdot(s: str, rng: random.Random) -> str | None:
    """\\cdot -> juxtaposition (a space), or two juxtaposed letters -> a \\cdot b."""
    if "\\cdot" in s:
        v = re.sub(r"\s*\\cdot(?![A-Za-z])\s*", " ", s)
        return v if v != s else None
    for m in _JUXT.finditer(s):
        before = s[: m.start()]
        if before.count("{") != before.count("}") and re.search(r"\\(?:text|mathrm|operatorname)\w*\s*\{[^}]*$", before):
            continue
        return s[: m.start()] + m.group(1) + " \\cdot " + m.group(2) + s[m.end():]
    return None


_SIZERS = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big)(?![A-Za-z])\s*")


def left_right(s: str, rng: random.Random) -> str | None:
    """Drops \\left/\\right sizes, or adds them around balanced ( ) and [ ]."""
    if _SIZERS.search(s):
        if "\\left." in s or "\\right." in s:
            return None
        return _SIZERS.sub("", s)
    if s.count("(") != s.count(")") or s.count("(") == 0:
        return None
    out = []
    for i, ch in enumerate(s):
        if ch == "(" and (i == 0 or s[i - 1] != "\\"):
            out.append("\\left(")
        elif ch == ")" and (i == 0 or s[i - 1] != "\\"):
            out.append("\\right)")
        else:
            out.append(ch)
    v = "".join(out)
    depth = 0
    for t in re.findall(r"\\left\(|\\right\)", v):
        depth += 1 if t == "\\left(" else -1
        if depth < 0:
            return None
    return v if depth == 0 else None


_FONT_SWAPS = [("\\mathcal{", "\\mathscr{"), ("\\mathbf{", "\\boldsymbol{"), ("\\text{", "\\mathrm{"),
               ("\\mathit{", "\\textit{")]


def spacing_font(s: str, rng: random.Random) -> str | None:
    """Font commands swapped for their look-alikes, spacing changed (\\, after commas, \\; around =)."""
    v = s
    for a, b in _FONT_SWAPS:
        if a in v:
            v = v.replace(a, b)
        elif b in v:
            v = v.replace(b, a)
    v = " ".join(v.split())
    v = re.sub(r",\s*", r",\\, ", v)
    v = re.sub(r"(?<![\\<>!:])=", r"\\;=\\;", v)
    return v if v != s else None


RULES = {"rename": rename, "commute": commute, "frac_slash": frac_slash, "cdot": cdot,
         "left_right": left_right, "spacing_font": spacing_font}


def apply_rule(name: str, s: str, rng: random.Random) -> str | None:
    """Applies one rule or a `+`-joined chain of rules (None when any step does not apply)."""
    v: str | None = s
    for part in name.split("+"):
        v = RULES[part](v, rng)
        if v is None:
            return None
    return v
