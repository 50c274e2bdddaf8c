"""Formula tasks: operator trees and canonical forms for every formula, and the formula index."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.formula import FormulaIndex, lean_formulas
from mathindex.formula import parse_formulas as parse
from mathindex.schemas.common import concat
from mathindex.schemas.latex import FORMULAS
from mathindex.store.layout import ReleaseLayout
from mathindex.tasks import HOUR_S, IndexBuild, stage


@stage(name="collect_formulas")
def collect_formulas(latex_formulas: pa.Table, declarations: pa.Table) -> pa.Table:
    """LaTeX formulas plus one formula per Lean statement, in one FORMULAS table."""
    return concat([latex_formulas, lean_formulas(declarations)], FORMULAS)


@stage(name="parse_formulas", timeout_seconds=2 * HOUR_S)
def parse_formulas(formulas: pa.Table, budget_s: float, cache_dir: Path | None = None) -> tuple[pa.Table, pa.Table]:
    """FORMULA_TREES and ERRORS rows; results of earlier releases are reused from `cache_dir`
    (the root's cache; `formula.parse_cache`), so a nightly parses only the formulas it has not seen."""
    return parse(formulas, budget_s=budget_s, cache_dir=cache_dir)


@stage(name="build_formula_index")
def build_formula_index(trees: pa.Table, formulas: pa.Table, release_dir: Path, cache_dir: Path | None = None) -> IndexBuild:
    """The formula index of the release; tree features of earlier releases come from `cache_dir`."""
    info = FormulaIndex.build(trees, formulas, ReleaseLayout(release_dir).formula, cache_dir=cache_dir)
    return IndexBuild("formula", info if isinstance(info, dict) else {"formulas": trees.num_rows})
