"""The formula channel: grammar operator trees, MathML fallback, path tokens, SymPy canonical
forms and structural formula search."""

from mathindex.formula.api import analyse, describe_formula, lean_formulas, parse_formulas
from mathindex.formula.index import FormulaIndex

__all__ = ["FormulaIndex", "analyse", "describe_formula", "lean_formulas", "parse_formulas"]
