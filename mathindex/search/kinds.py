"""What kind of query a text is, as the engine sees it at query time: prose (`words`), TeX or math
symbols (`formula`), Lean (`lean`: backticks, Loogle syntax, dotted constant names); whether the
formula channel runs on it and what the lexical channel searches for it. Why a query cannot be
searched at all is `mathindex.limits`'."""

from __future__ import annotations

import re

from mathindex.formal.search import looks_like_loogle
from mathindex.search.hint import FORMULA_HINT, looks_like_formula
from mathindex.search.latexquery import unicode_math

# What the lexical channel sees of a formula-like query: its math pieces as the Unicode Mathlib prints
# (search/latexquery.py `unicode_math`: `\mathrm{Sylow}_p(G) \ne \emptyset` -> Sylow_p(G) ≠ ∅, s_1 -> s₁),
# or "raw", the text as typed. bench/experiments/latex_queries.py on the whole-Mathlib release 20261201T182722Z,
# MathlibQR dev nDCG@10: q1b_latex 48.46 -> 49.88 (without subscripts; 50.70 with them on the 120
# formula-like queries' re-fusion), both folds chose it; the embedding channel keeps the text as typed
# (unicode or english renderings lowered it: 47.64 / 48.29).
LEXICAL_TEXT = "unicode"
_DOTTED_CONSTANT = re.compile(r"\b[A-Z][A-Za-z0-9]*\.[A-Za-z_]")


_PROSE_WORD = re.compile(r"(?<![\\\w])[a-z]{3,}\b")
# prose with a symbol: no TeX, `$` or backtick, at least PROSE_WORDS distinct lowercase words and at
# most PROSE_SYMBOLS formula characters (`npow (m + n) a = npow m a * npow n a` is a formula)
PROSE_WORDS, PROSE_SYMBOLS = 3, 2


def runs_formula_channel(query: str) -> bool:
    """Formula-like and not prose with a symbol in it: the formula channel parses a query without
    `$…$`, backtick or TeX as one formula, and `DFA appending one symbol = one transition step` is
    none (bench/experiments/formula_fusion.py). Lean-looking queries always run it."""
    if not looks_like_formula(query):
        return False
    if any(c in query for c in "$`\\") or looks_like_lean(query):
        return True
    return len(set(_PROSE_WORD.findall(query))) < PROSE_WORDS or len(FORMULA_HINT.findall(query)) > PROSE_SYMBOLS


def lexical_text(query: str) -> str:
    """The text the lexical channel searches for a formula-like query (LEXICAL_TEXT)."""
    return unicode_math(query) if LEXICAL_TEXT == "unicode" else query


def looks_like_lean(query: str) -> bool:
    """Lean in backticks, Loogle syntax (`⊢`, `?x`, `_`, "fragments", constant lists) or a dotted
    constant name, and no TeX (`$`, backslash)."""
    if "$" in query or "\\" in query:
        return False
    return "`" in query or looks_like_loogle(query) or bool(_DOTTED_CONSTANT.search(query))


def query_kind(query: str) -> str:
    """`lean` for Lean-looking queries, `formula` when the query has TeX or math symbols, else `words`."""
    if looks_like_lean(query):
        return "lean"
    return "formula" if looks_like_formula(query) else "words"

