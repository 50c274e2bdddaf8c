"""The cheapest test of a query's kind, needing nothing beyond `re`: whether it holds TeX, `$` or a
math symbol. search/kinds.py builds the query kinds on it; the CLI asks it before it loads the query
path, to start the SymPy worker early (cli/prestart.py)."""

from __future__ import annotations

import re

FORMULA_HINT = re.compile(r"[\\^_=<>+$]|[∀∃∑∏∫→↔∈∉⊆⊂∪∩≤≥≠∣⁻¹√ℕℤℚℝℂ×•∘]")


def looks_like_formula(query: str) -> bool:
    """TeX, `$` or a math symbol in the query."""
    return bool(FORMULA_HINT.search(query))


# what SymPy's canonical keys are mostly made from (formula/canonical.py `to_spec`): relations, sums,
# powers, TeX. A query without any (a Lean name: `Nat.Prime.two_le`) seldom asks for a key; one that
# does gets its worker all the same, started when the formula index opens
_ARITHMETIC = re.compile(r"[\\=<>+^$≤≥≠]")


def may_ask_sympy(query: str) -> bool:
    """Whether the formula channel might ask SymPy for the query's canonical key: formula-like, with
    a relation, an arithmetic operator or TeX in it. A guess (no parse): a yes may still ask nothing."""
    return looks_like_formula(query) and bool(_ARITHMETIC.search(query))
