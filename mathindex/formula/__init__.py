"""The formula channel: grammar operator trees, MathML fallback, path tokens, SymPy canonical
forms and structural formula search.

- `grammar`: regex tokenizer + depth-bounded Pratt parser for LaTeX math and Lean terms, one
  operator vocabulary (commutativity per operator in `grammar.COMMUTATIVE`).
- `mathml`: the never-fail fallback (latex2mathml + lxml symbol layout tree, then a token row).
- `paths`: leaf-to-root path tokens (variables anonymised with their font class, constants kept,
  rank markers under non-commutative operators) and symbol names.
- `canonical`: SymPy canonical keys in a killable worker process under a per-formula budget.
- `api`: describe_formula, parse_formulas, lean_formulas (the stage functions).
- `index`: FormulaIndex (BM25 over path tokens, structural re-score, canonical exact match).
"""

from mathindex.formula.api import analyse, describe_formula, lean_formulas, parse_formulas
from mathindex.formula.formula_index import FormulaIndex

__all__ = ["FormulaIndex", "analyse", "describe_formula", "lean_formulas", "parse_formulas"]
