"""The formal channel: Loogle-style search by constants, name fragments and term patterns over
every Lean declaration of a release.

- `normal`: one notation normalisation for statement trees and query patterns (x⁻¹ / x^{-1},
  ∑ x ∈ s, f x / Finset.sum s f, bound names, type ascriptions, η-reduction).
- `telescope`: a declaration as hypotheses and conclusion (signature binders, `variable`s,
  ∀ and → of its type) and the names it declares; instance binders are left out.
- `notation`: the corpus's notation commands as the constants behind statement leaves (`φ` is
  `Nat.totient`, `#s` is `Finset.card s`), resolved by file and namespace.
- `query`: the Loogle query language (constants, "fragments", `_` / `?x` patterns, `⊢`), with
  error positions.
- `match`: pattern matching on operator trees (`?x` bound consistently, hypotheses in any order).
- `index`: the build (the `formal_statements` table and the `formal/` postings directory) and
  `FormalIndex`, which answers queries strictly (Loogle) and softly (the fused channel).
"""

from mathindex.formal.formal_index import FORMAL_DIR, build_formal_index
from mathindex.formal.query import FormalQueryError, UnknownConstant

__all__ = ["FORMAL_DIR", "FormalQueryError", "UnknownConstant", "build_formal_index"]
