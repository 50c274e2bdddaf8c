"""The project's LaTeX-math / Lean-term grammar: its public names, in one place for callers.

The pieces live along their seams: `symbols` (tables, binding powers), `tokens` (the LaTeX and
Lean tokenizers), `parser` (the depth-bounded Pratt parser with its prefix dispatch table) and
`trees` (printers and their inverse). A tree is a tuple: (op, child, ...) for an operator node;
leaves are ("#v", name) variables, ("#c", name) constants, ("#n", digits) numbers, ("#t", text)
and ("#e",) for an empty slot. Nesting deeper than MAX_DEPTH raises ParseError, so no input can
reach Python's recursion limit.
"""

from __future__ import annotations

from mathindex.formula.parser import (
    MAX_CHARS,
    ParseError,
    parse_latex,
    parse_lean,
    parse_partial,
    parse_tokens,
)
from mathindex.formula.symbols import ASSOCIATIVE, COMMUTATIVE, EMPTY, GREEK, INFIX
from mathindex.formula.tokens import MAX_DEPTH, brace_depth_ok, tokenize, tokenize_lean
from mathindex.formula.optree import from_json, strip_parens, tree_dict, tree_json, tree_text, with_font

__all__ = [
    "ASSOCIATIVE", "COMMUTATIVE", "EMPTY", "GREEK", "INFIX", "MAX_CHARS", "MAX_DEPTH", "ParseError",
    "brace_depth_ok", "from_json", "parse_latex", "parse_lean", "parse_partial", "parse_tokens", "strip_parens",
    "tokenize", "tokenize_lean", "tree_dict", "tree_json", "tree_text", "with_font",
]
