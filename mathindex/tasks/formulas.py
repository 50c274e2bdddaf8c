"""Formula tasks: operator trees and canonical forms for every formula, parsed in content-keyed
shards through the flow's task runner (`parse_in_shards`), and the formula index."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
from prefect.logging import get_run_logger

from mathindex.cache.shards import KeyedShard, RowsDone
from mathindex.formula.api import assemble, formula_inputs, lean_formulas, uncached
from mathindex.formula.canonical import close_idle_workers
from mathindex.formula.formula_index import FormulaIndex
from mathindex.formula.parse_cache import parse_cache
from mathindex.formula.shards import SHARD_FORMULAS, parse_shard, plan_shards
from mathindex.schemas.common import concat
from mathindex.schemas.latex import FORMULAS
from mathindex.store.layout import ReleaseLayout
from mathindex.tasks import IndexBuild, io_stage, stage
from mathindex.tasks.shards import run_shards, runner_is_local, size_from_env

SHARD_ENV = "MATHINDEX_FORMULA_SHARD_FORMULAS"


@stage(name="collect_formulas")
def collect_formulas(latex_formulas: pa.Table, declarations: pa.Table) -> pa.Table:
    """LaTeX formulas plus one formula per Lean statement, in one FORMULAS table."""
    return concat([latex_formulas, lean_formulas(declarations)], FORMULAS)


def shard_formulas(default: int = SHARD_FORMULAS) -> int:
    """Distinct formulas a parse shard: $MATHINDEX_FORMULA_SHARD_FORMULAS when set (smaller shards
    spread a small corpus over more workers; the tests use it), else `default`."""
    return size_from_env(SHARD_ENV, default)


@dataclass(frozen=True)
class FormulaPlan:
    """The stage's input rows (`api.formula_inputs`), the parse rows the cache held, and the rest
    of the distinct formulas as content-keyed shards."""

    inputs: pl.DataFrame = field(repr=False)
    found: pl.DataFrame = field(repr=False)
    shards: list[KeyedShard] = field(repr=False)


@stage(name="plan_formula_shards")
def plan_formula_shards(formulas: pa.Table, budget_s: float, cache_dir: Path | None,
                        shard_size: int = SHARD_FORMULAS) -> FormulaPlan:
    """What the parse cache under `cache_dir` holds of `formulas`, and the rest as shards."""
    inputs = formula_inputs(formulas)
    found, todo = uncached(inputs, cache_dir, budget_s)
    return FormulaPlan(inputs, found, plan_shards(todo, shard_size))


parse_shard_task = io_stage(name="parse_formula_shard", task_run_name="formula-shard-{shard.index}")(parse_shard)


@stage(name="merge_formula_shards")
def merge_formula_shards(plan: FormulaPlan, parsed: list[RowsDone], budget_s: float,
                         cache_dir: Path | None) -> tuple[pa.Table, pa.Table]:
    """FORMULA_TREES and ERRORS rows, in input order, from the cached rows and the shards' (whatever
    their number or the order they finished: one row per key, joined to the inputs); the parse
    cache's shards merged when they are many (`ShardStore.compact`, this process the one writer)."""
    rows = pl.concat([plan.found, *(pl.from_arrow(p.rows) for p in parsed)], how="vertical_relaxed")
    if cache_dir is not None:
        parse_cache(cache_dir, budget_s).compact()
    get_run_logger().info("formulas: %d rows, %d distinct, %d cached, %d parsed in %d shards (%.1f s)",
                          plan.inputs.height, rows.height, plan.found.height, sum(p.computed for p in parsed),
                          len(parsed), sum(p.seconds for p in parsed))
    return assemble(plan.inputs, rows)


def parse_in_shards(formulas: pa.Table, budget_s: float, cache_dir: Path | None,
                    shard_size: int = SHARD_FORMULAS) -> tuple[pa.Table, pa.Table]:
    """FORMULA_TREES and ERRORS rows of `formulas`: what the parse cache lacks is parsed as tasks
    through the flow's task runner, one a shard (`formula.shards.parse_shard`), into the root's
    parse cache. Locally one shard at a time, each parsing in a runner thread while one SymPy worker
    process (reused from shard to shard) makes the canonical forms: the grammar is pure Python under
    the GIL, and shards on every core's thread measured slower (bench/formula_runner.py); on Dask
    all at once."""
    local = runner_is_local()
    plan = plan_formula_shards(formulas, budget_s, cache_dir, shard_size)
    try:
        parsed = run_shards(parse_shard_task, plan.shards, "formulas", 1 if local else None,
                            budget_s=budget_s, cache_dir=cache_dir)
    finally:
        close_idle_workers()  # the local shards' SymPy worker; on Dask the workers keep theirs
    return merge_formula_shards(plan, parsed, budget_s, cache_dir)


@stage(name="build_formula_index")
def build_formula_index(trees: pa.Table, formulas: pa.Table, release_dir: Path, cache_dir: Path | None = None) -> IndexBuild:
    """The formula index of the release; tree features of earlier releases come from `cache_dir`."""
    info = FormulaIndex.build(trees, formulas, ReleaseLayout(release_dir).formula, cache_dir=cache_dir)
    return IndexBuild("formula", info if isinstance(info, dict) else {"formulas": trees.num_rows})
