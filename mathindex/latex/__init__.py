"""LaTeX and XML extraction: theorem-like statements, labels, tags, proofs and formulas."""

from mathindex.latex.tree import LatexExtraction, extract_latex_tree

__all__ = ["LatexExtraction", "extract_latex_tree"]
