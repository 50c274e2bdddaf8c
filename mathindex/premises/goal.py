"""A Lean goal (and its context) checked before it is ranked: a bad one is a `GoalError`, one line
with the 1-based position of what is wrong, which the CLI, the HTTP API and the MCP server show as
it is."""

from __future__ import annotations

import re

from mathindex.formal.query import FormalQueryError, offending_position, split_terms
from mathindex.formula.grammar import ParseError, parse_lean

_BINARY = r"[*/^=<>≤≥≠∣∈∉⊆⊂∪∩•∧∨↔→+]"
_LEADING_OP = re.compile(r"(?![→↔])" + _BINARY)  # `= a`
_TRAILING_OP = re.compile(_BINARY + r"$")  # `a =`
# `(* b)`, `(a *)`, `a + * b`; not a bracketed operator (`𝓝[≠] x`, `(· + ·)`) or `ℕ+ → ℕ`
_INNER_OP = re.compile(r"[(\[{,]\s*(?![→↔])[*/^=<>≤≥≠∣∈∉⊆⊂∪∩•∧∨+]\s|(?<=\s)" + _BINARY + r"\s*[)\]},]"
                       r"|(?<=\s)" + _BINARY + r"\s+" + _BINARY + r"(?=\s)")


class GoalError(ValueError):
    """A goal or context that does not parse: a one-line message with the 1-based position."""


def check_goal(goal: str, context: str = "") -> None:
    """Raises GoalError for an empty goal, a goal or context with unbalanced brackets (where the
    bracket is), an operator without an operand (`a = `, `a + * b`) or a goal the Lean grammar
    rejects (at the offending token). The grammar itself is lenient (`(⊥ : α)` parses with empty
    slots), so a missing operand is found on the text, as the formal query parser finds it."""
    if not goal.strip():
        raise GoalError("empty goal at position 1")
    for what, text in (("goal", goal), ("context", context)):
        try:
            split_terms(text)
        except FormalQueryError as exc:
            raise GoalError(f"{what}: {exc}") from None
    lead = len(goal) - len(goal.lstrip())
    body = goal.strip()
    m = _LEADING_OP.match(body) or _TRAILING_OP.search(body) or _INNER_OP.search(body)
    if m:
        at = m.start() + (1 if body[m.start()] in "([{," else 0) if m.re is _INNER_OP else m.start()
        raise GoalError(f"goal: an operator lacks an operand at position {lead + at + 1}")
    try:
        parse_lean(goal)
    except (ParseError, RecursionError) as exc:
        raise GoalError(f"goal: does not parse: {exc} at position {lead + offending_position(body, str(exc)) + 1}") from None
