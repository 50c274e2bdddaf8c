"""The formula channel: grammar operator trees, MathML fallback, path tokens, SymPy canonical
forms and structural formula search.

- `grammar`: regex tokenizer + depth-bounded Pratt parser for LaTeX math and Lean terms, one
  operator vocabulary (commutativity per operator in `grammar.COMMUTATIVE`).
- `mathml`: the never-fail fallback (latex2mathml + lxml symbol layout tree, then a token row).
- `paths`: leaf-to-root path tokens (variables anonymised with their font class, constants kept,
  rank markers under non-commutative operators) and symbol names.
- `canonical`: SymPy canonical keys in a killable worker process under a per-formula budget.
- `api`: describe_formula, parse_formulas, lean_formulas (the stage functions).
- `formula_index`: FormulaIndex (BM25 over path tokens, structural re-score, canonical exact match).

The package itself imports nothing, so that `canonical` loads without the rest (cli/prestart.py).
"""
