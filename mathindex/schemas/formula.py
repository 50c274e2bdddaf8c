"""Schemas of the formula channel: FORMULA_TREES, one parse result per input formula."""

from __future__ import annotations

import pyarrow as pa

from mathindex.schemas.columns import column, described

# parser: grammar (the project's Pratt grammar) | mathml (latex2mathml symbol layout tree)
#         | tokens (flat token row: the last resort when both fail or the input is too large)
# status: ok (grammar) | partial (grammar, after dropping the tokens it stumbled on) | fallback (mathml)
#         | error (tokens)
# tree: compact JSON of the operator tree: ["op", child, ...] for an operator node,
#       ["#v", name] variable, ["#c", name] constant, ["#n", digits] number, ["#t", text],
#       ["#e"] an empty slot. Operator commutativity is a property of the op name
#       (mathindex.formula.grammar.COMMUTATIVE).
# canonical_status: ok | unsupported (the tree is not in a class SymPy normalises) | timeout | error
FORMULA_TREES = described(
    "One parse result per formula (formulas.formula_id): operator tree, path tokens, SymPy canonical form.",
    [
        column("formula_id", pa.string(), "the formula (formulas.formula_id)", nullable=False),
        column("parser", pa.string(), "grammar, mathml or tokens (the last resort)", nullable=False),
        column("status", pa.string(), "ok (grammar), partial (grammar, malformed input repaired), fallback (mathml) or error (tokens)", nullable=False),
        column("tree", pa.string(), "compact JSON operator tree", nullable=False),
        column("tree_text", pa.string(), "the tree as a one-line s-expression", nullable=False),
        column("path_tokens", pa.list_(pa.string()), "root-to-leaf path tokens the formula index searches", nullable=False),
        column("canonical", pa.string(), "SymPy canonical form; null unless canonical_status is ok"),
        column("canonical_status", pa.string(), "ok, unsupported, timeout or error", nullable=False),
    ],
)

# Files of the formula index directory (mathindex.formula.formula_index.FormulaIndex); row i of groups is group i.
FORMULA_INDEX_GROUPS = pa.schema([
    pa.field("group", pa.int32(), nullable=False),  # formulas with identical operator trees
    pa.field("members", pa.list_(pa.string()), nullable=False),  # their formula_ids, sorted
    pa.field("size", pa.int32(), nullable=False),  # nodes in the tree
])
FORMULA_INDEX_VOCAB = pa.schema([pa.field("token", pa.string(), nullable=False)])  # row = token id
FORMULA_INDEX_CANONICAL = pa.schema([
    pa.field("canonical", pa.string(), nullable=False),  # SymPy canonical key
    pa.field("group", pa.int32(), nullable=False),
])
