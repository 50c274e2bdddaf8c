"""Shared helpers of the formula benchmarks: Stacks formulas from the project's LaTeX extractor."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STACKS = Path("/work/shared/corpora/stacks-project")


def stacks_formulas(cache: Path | None = None) -> tuple[pa.Table, float]:
    """All Stacks formulas via mathindex.latex.extract_latex_tree (cached as Parquet when asked)."""
    if cache is not None and cache.exists():
        return pq.read_table(cache), 0.0
    if not STACKS.exists():
        raise SystemExit(f"{STACKS} is absent: the formula benchmarks need the Stacks Project")
    from mathindex.latex import extract_latex_tree

    t0 = time.perf_counter()
    ex = extract_latex_tree(STACKS, "stacks")
    took = time.perf_counter() - t0
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(ex.formulas, cache)
    return ex.formulas, took


def quantile(sorted_values: list[float], q: float) -> float:
    """The q-quantile of an ascending list (nearest rank)."""
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[i]


MATHLIB = Path("/work/corpora/mathlib4")
MATHLIBQR = Path("/work/shared/bench/mathlibqr-dev.json")


def mathlib_declarations(cache: Path | None = None) -> pa.Table:
    """Mathlib declarations (name, type, place) via mathindex.lean.extract_lean_tree, cached."""
    cols = ["full_name", "type", "signature", "corpus", "file", "line_start"]
    if cache is not None and cache.exists():
        return pq.read_table(cache)
    if not (MATHLIB / "Mathlib").exists():
        raise SystemExit(f"{MATHLIB}/Mathlib is absent: this benchmark needs Mathlib")
    from mathindex.lean import extract_lean_tree

    decls = extract_lean_tree(MATHLIB / "Mathlib", "mathlib").declarations.select(cols)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(decls, cache)
    return decls
