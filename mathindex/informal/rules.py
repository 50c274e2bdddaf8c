"""Deterministic Lean-to-English rendering (the `rules` informaliser backend).

Pure string functions: binders become English clauses, Lean notation becomes words, Mathlib names
are split from camelCase / snake_case / dots. The same input always gives the same text.
"""

from __future__ import annotations

import re

from mathindex.lean.binders import groups, split_colon

RULES_VERSION = "rules-v1"

# Words for name fragments that are abbreviations in Mathlib naming.
NAME_WORDS = {
    "add": "add", "mul": "multiplication", "sub": "subtraction", "div": "division",
    "inv": "inverse", "neg": "negation", "pow": "power", "zpow": "integer power",
    "nsmul": "natural scalar multiplication", "smul": "scalar multiplication",
    "comm": "commutative", "assoc": "associative", "le": "less or equal", "lt": "less than",
    "ge": "greater or equal", "gt": "greater than", "eq": "equal", "ne": "not equal",
    "iff": "if and only if", "mem": "membership", "nat": "natural number", "int": "integer",
    "rat": "rational", "real": "real", "succ": "successor", "pred": "predecessor",
    "sup": "supremum", "inf": "infimum", "sSup": "supremum of a set", "sInf": "infimum of a set",
    "iSup": "indexed supremum", "iInf": "indexed infimum", "dvd": "divides", "gcd": "gcd",
    "lcm": "lcm", "abs": "absolute value", "norm": "norm", "nnnorm": "nonnegative norm",
    "deriv": "derivative", "fderiv": "Fréchet derivative", "inj": "injective",
    "injective": "injective", "surj": "surjective", "bij": "bijective", "coe": "coercion",
    "cast": "cast", "zero": "zero", "one": "one", "two": "two", "pos": "positive",
    "nonneg": "nonnegative", "nonpos": "nonpositive", "sq": "square", "sqrt": "square root",
    "exp": "exponential", "log": "logarithm", "card": "cardinality", "fin": "finite",
    "finset": "finite set", "fintype": "finite type", "symm": "symmetric", "trans": "transitive",
    "refl": "reflexive", "irrefl": "irreflexive", "antisymm": "antisymmetric", "def": "definition",
    "ext": "extensionality", "cancel": "cancel", "left": "left", "right": "right",
    "mono": "monotone", "strictMono": "strictly monotone", "antitone": "antitone",
    "cont": "continuous", "continuous": "continuous", "tendsto": "tends to", "nhds": "neighbourhoods",
    "prod": "product", "sum": "sum", "tsum": "infinite sum", "tprod": "infinite product",
    "min": "minimum", "max": "maximum", "compl": "complement", "diff": "difference",
    "union": "union", "inter": "intersection", "subset": "subset", "ssubset": "strict subset",
    "empty": "empty", "univ": "universal set", "singleton": "singleton", "insert": "insert",
    "image": "image", "preimage": "preimage", "range": "range", "comp": "composition",
    "id": "identity", "map": "map", "hom": "homomorphism", "iso": "isomorphism",
    "equiv": "equivalence", "mk": "constructor", "apply": "apply", "congr": "congruence",
    "of": "of", "to": "to", "self": "self", "mod": "mod", "emod": "euclidean mod",
    "floor": "floor", "ceil": "ceiling", "fract": "fractional part", "dist": "distance",
    "ball": "ball", "closure": "closure", "interior": "interior", "frontier": "frontier",
    "isOpen": "is open", "isClosed": "is closed", "isCompact": "is compact",
    "nnreal": "nonnegative real", "ennreal": "extended nonnegative real", "ereal": "extended real",
    "natIso": "natural isomorphism", "natTrans": "natural transformation",
}
# Acronym-like humps that camelCase splitting would tear apart.
NAME_PARTS = {"SMul": "Smul", "NNReal": "Nnreal", "ENNReal": "Ennreal", "EReal": "Ereal",
              "NNRat": "Nnrat", "VAdd": "Vadd", "ZMod": "Zmod", "SNorm": "Snorm", "NNNorm": "Nnnorm"}
NAME_PARTS_RE = re.compile("|".join(sorted(NAME_PARTS, key=len, reverse=True)))

# Lean / Mathlib notation -> English, applied to statement text (longest symbols first).
SYMBOL_WORDS = [
    ("↔", " if and only if "), ("→", " implies "), ("⇒", " implies "), ("¬", " not "),
    ("∧", " and "), ("∨", " or "), ("≠", " is not equal to "), ("≤", " is at most "),
    ("≥", " is at least "), ("<", " is less than "), (">", " is greater than "),
    ("∉", " is not in "), ("∈", " is in "), ("⊆", " is a subset of "),
    ("⊂", " is a strict subset of "), ("⊇", " is a superset of "), ("∩", " intersect "),
    ("∪", " union "), ("∅", " the empty set "), ("ᶜ", " complement "), ("∣", " divides "),
    ("∘", " composed with "), ("⁻¹", " inverse "), ("•", " scalar times "), ("×ˢ", " product "),
    ("≃", " is equivalent to "), ("≅", " is isomorphic to "), ("⊤", " top "), ("⊥", " bottom "),
    ("⊔", " sup "), ("⊓", " inf "), ("√", " square root of "), ("‖", " norm "),
    ("∞", " infinity "), ("≈", " approximately equals "), ("≡", " is congruent to "),
    ("∂", " derivative "), ("⥤", " functor to "), ("⟶", " morphism to "), ("≫", " then "),
    ("⋙", " composed with "), ("𝟙", " identity "), ("⟪", " inner product "), ("⟫", " "), ("ℕ", " natural numbers "),
    ("ℤ", " integers "), ("ℚ", " rationals "), ("ℝ", " real numbers "),
    ("ℂ", " complex numbers "), ("⇑", ""), ("↑", ""), ("=", " equals "),
]
TYPE_WORDS = {"ℕ": "natural number", "ℤ": "integer", "ℚ": "rational", "ℝ": "real number",
              "ℂ": "complex number", "ℝ≥0": "nonnegative real", "ℝ≥0∞": "extended nonnegative real",
              "Prop": "proposition", "Bool": "boolean"}
BIG_OPERATORS = {"∑": "the sum", "∏": "the product", "⋃": "the union", "⋂": "the intersection",
                 "⨆": "the supremum", "⨅": "the infimum", "∫": "the integral"}
KEYWORDS = ("theorem", "lemma", "def", "abbrev", "instance", "structure", "class", "inductive",
            "axiom", "opaque", "example", "noncomputable", "protected", "private", "irreducible_def")
RELATION_RE = re.compile(r"[=≠≤≥<>↔∈∉⊆⊂∣¬∀∃]|\b(Tendsto|Continuous|Injective|Surjective|Monotone|Differentiable)")
CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")


def split_name(full_name: str) -> list[str]:
    """Lowercase words of a Lean name, split on dots, underscores and camelCase humps."""
    words: list[str] = []
    for part in re.split(r"[._'\s]+", full_name):
        words.extend(w.lower() for w in CAMEL_RE.findall(part))
    return [w for w in words if w]


def name_words(full_name: str) -> str:
    """A Lean name read as words, abbreviations expanded (`Nat.add_comm` -> `natural number add commutative`)."""
    out = []
    for part in re.split(r"[._'\s]+", full_name):
        if part in NAME_WORDS:
            out.append(NAME_WORDS[part])
            continue
        part = NAME_PARTS_RE.sub(lambda m: NAME_PARTS[m.group(0)], part)
        for word in CAMEL_RE.findall(part):
            out.append(NAME_WORDS.get(word.lower(), word.lower()))
    return " ".join(w for w in out if w)


def strip_header(signature: str, full_name: str) -> str:
    """The signature without leading keywords and the declaration's own name."""
    s = signature.strip()
    short = full_name.rsplit(".", 1)[-1]
    while True:
        head, _, rest = s.partition(" ")
        if head in KEYWORDS or head.startswith("@["):
            s = rest.lstrip()
        elif head in (full_name, short) or (head and full_name.endswith("." + head)):
            s = rest.lstrip()
            break
        else:
            break
    return s.split(":=", 1)[0].strip() if ":=" in s and not s.startswith(":=") else s


def parse_binders(text: str) -> list[tuple[str, list[str], str]]:
    """The binder groups anywhere in a Lean header read as (bracket, names, type), in order; a group
    without a type colon has no names and its text as type (`{x}` -> ("{", [], "x"))."""
    return [(g.bracket, list(g.names), g.after.strip()) if g.colon else (g.bracket, [], g.inner) for g in groups(text)]


def english(expr: str) -> str:
    """Lean notation in `expr` replaced by English words; whitespace normalised."""
    s = re.sub(r"([∀∃∑∏⋃⋂⨆⨅∫]!?\s*[\w' ]+?)\s*∈", lambda m: f"{m.group(1)} in ", expr)
    for op, word in BIG_OPERATORS.items():
        s = re.sub(re.escape(op) + r"\s*([^,]+?)\s*,", lambda m, w=word: f" {w} over {m.group(1)} of ", s)
    s = re.sub(r"∀\s*([^,]+?)\s*,", lambda m: f" for all {m.group(1)}, ", s)
    s = re.sub(r"([∀∃]!?\s*[\w' ]+?)\s*:\s*([^,]+?)\s*,", lambda m: f"{m.group(1)} in {m.group(2)},", s)
    s = re.sub(r"∃!\s*([^,]+?)\s*,", lambda m: f" there exists a unique {m.group(1)} such that ", s)
    s = re.sub(r"∃\s*([^,]+?)\s*,", lambda m: f" there exists {m.group(1)} such that ", s)
    s = re.sub(r"\b(?:fun|λ)\s+([^=↦]+?)\s*(?:=>|↦)", lambda m: f" the function sending {m.group(1)} to ", s)
    s = re.sub(r"\(\s*↑?\s*([\w.']+)\s*:\s*([^()]+?)\s*\)", lambda m: f"({m.group(1)} as {TYPE_WORDS.get(m.group(2), m.group(2))})", s)
    s = re.sub(r"‖([^‖]+)‖", lambda m: f" the norm of {m.group(1)} ", s)
    s = re.sub(r"\|([^|{}]+)\|", lambda m: f" the absolute value of {m.group(1)} ", s)
    for sym, word in SYMBOL_WORDS:
        s = s.replace(sym, word)
    return " ".join(s.split())


def binder_clauses(groups: list[tuple[str, list[str], str]]) -> tuple[list[str], list[str]]:
    """English clauses for binders: (quantifier clauses, hypothesis clauses)."""
    quantifiers, hypotheses = [], []
    for bracket, names, typ in groups:
        if bracket == "[":
            words = typ.split()
            if not words:
                continue
            cls, args = name_words(words[0]), [a for a in words[1:] if a not in ("(", ")")]
            if len(args) == 1:
                article = "an" if cls[:1] in "aeiou" else "a"
                hypotheses.append(f"{args[0]} is {article} {cls}")
            elif args:
                hypotheses.append(f"a {cls} structure on {', '.join(args)}")
            else:
                hypotheses.append(cls)
            continue
        if not names:
            continue
        if re.match(r"^(Type|Sort)\b|^Type\*|^Sort\*", typ):
            quantifiers.append(f"any type {' '.join(names)}" if len(names) == 1 else f"any types {', '.join(names)}")
        elif RELATION_RE.search(typ) or all(n.startswith("h") for n in names) and not typ[:1].isupper():
            hypotheses.append(english(typ))
        else:
            plural = "s" if len(names) > 1 else ""
            word = TYPE_WORDS.get(typ)
            if "→" in typ and not word:
                typ = typ.replace("→", " to ")
                label = f"function{plural} {', '.join(names)} from {english(typ)}"
            else:
                label = f"{word}{plural}" if word else f"{', '.join(names)} in {english(typ)}"
            quantifiers.append(f"{label} {', '.join(names)}" if word and "→" not in typ else label)
    return quantifiers, hypotheses


def first_sentence(text: str, cap: int = 160) -> str:
    """The first sentence of `text` (to a full stop), at most `cap` characters, one line."""
    flat = " ".join(text.split())
    m = re.match(r"(.+?[.!?])(\s|$)", flat)
    out = m.group(1) if m else flat
    return out if len(out) <= cap else out[: cap - 1].rstrip() + "…"


def render_rules(
    full_name: str, kind: str, signature: str, type_: str, docstring: str,
    context: tuple[tuple[str, str], ...] = (),
) -> str:
    """The rule-based English rendering of one declaration; never empty for a named declaration."""
    header = strip_header(signature or "", full_name)
    head, colon, after = split_colon(header)
    binders_text = head if colon else ""
    statement = (type_ or (after if colon else header)).strip()
    quantifiers, hypotheses = binder_clauses(parse_binders(binders_text))
    lead = f"{(kind or 'declaration').replace('_', ' ')} {full_name} ({name_words(full_name)})"
    clauses = []
    if quantifiers:
        clauses.append("for " + "; ".join(quantifiers))
    if hypotheses:
        clauses.append("assuming " + "; ".join(hypotheses))
    body = english(statement)
    sentence = lead[0].upper() + lead[1:] + ": " + ", ".join(clauses + ([body] if body else [])) + "."
    out = [sentence.replace(": .", ".")]
    if docstring and docstring.strip():
        out.append(" ".join(docstring.split()))
    if context:
        out.append(CONTEXT_LEAD + "; ".join(f"{name}: {first_sentence(text, 120)}" for name, text in context))
    return " ".join(out)


CONTEXT_LEAD = "Uses "  # the glosses of the constants a rendering uses, last in the text


GLOSS_PATTERN = re.compile(r" " + CONTEXT_LEAD + r"[\w.'«»⁻¹₀-₉]+: ")


def without_context(rendering: str) -> str:
    """A rendering without its trailing glosses of used constants (they describe other nodes, and
    as words of this node's lexical document they cost MathlibQR dev 2.3 points of R@10)."""
    m = GLOSS_PATTERN.search(rendering)
    return rendering[: m.start()] if m else rendering
