"""`x^{-1}` (LaTeX) and `x⁻¹` (Lean) are one operator, so a LaTeX query finds the Lean statement."""

from mathindex.formula.api import describe_formula


def test_latex_inverse_and_lean_inverse_share_a_tree():
    latex, lean = describe_formula("(g^{-1})^{-1} = g"), describe_formula("g⁻¹⁻¹ = g")
    assert latex["tree_text"] == lean["tree_text"] == "(eq (inv (inv g)) g)"
    assert latex["path_tokens"] == lean["path_tokens"]


def test_other_negative_powers_stay_powers():
    assert describe_formula("x^{-2}")["tree_text"] == "(pow x (neg 2))"
    assert describe_formula("x^{-1} x = 1")["canonical_status"] == "ok"
