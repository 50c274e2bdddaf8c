"""Code shared by several benchmarks: re-scoring cached channel lists, formula corpora, Mathlib
subsets, the formula variant rules, the load-test client and staged releases for premise runs."""
