"""Lean 4 source scanner: `extract_lean_tree(root, corpus, cache_dir)` -> `LeanExtraction`."""

from mathindex.lean.extract import LeanExtraction, extract_lean_tree

__all__ = ["LeanExtraction", "extract_lean_tree"]
