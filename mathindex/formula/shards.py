"""The formulas stage as content-keyed shards: the distinct formulas the parse cache lacks, cut
into shards by key (`plan_shards`), and one shard parsed, with its SymPy canonical forms, and
stored in the root's parse cache under its key by whichever process runs it (`parse_shard`: a
task runner's thread or a Dask worker). A formula's row depends only on its text and source, so
the tables are the same whatever ran the shards (`api.assemble` joins the rows in input order).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mathindex.cache.shards import KeyedShard, RowsDone, plan_keyed, run_keyed
from mathindex.formula import api
from mathindex.formula import canonical as canon
from mathindex.formula.parse_cache import parse_cache


# distinct formulas a shard parses: 2-3 s of one core for whole Mathlib's statement types (about
# 0.1 ms each), 11 shards for its 276,525; a worker holds one shard's rows (about 15 MB) at a time
SHARD_FORMULAS = 25_000


def plan_shards(todo: pl.DataFrame, shard_formulas: int = SHARD_FORMULAS, spread: int = 1) -> list[KeyedShard]:
    """`todo` (key, text, lean: the distinct formulas to parse) sorted by key and cut into shards of
    `shard_formulas`, or fewer so that there are at least `spread` shards, each named by its content:
    the same formulas give the same shards whatever their order or whatever runs them."""
    return plan_keyed(todo.select("key", "text", "lean").sort("key"), shard_formulas, spread)


def parse_shard(shard: KeyedShard, budget_s: float, cache_dir: Path | None) -> RowsDone:
    """Parses one shard (SymPy in this process's lent worker, `canonical.lent_worker`) and stores its
    rows in the parse cache under `cache_dir` (None: nowhere); when that cache shard is there
    already (a rerun after a lost worker that had stored it) its rows are read back instead. The
    run is marked before anything else, so that a rerun names a lost one (`RunMarks`). Its rows:
    `parse_cache.SCHEMA`; `computed`: the formulas parsed."""
    def parse() -> pl.DataFrame:
        with canon.lent_worker() as worker:
            return api.parse_rows(pl.from_arrow(shard.todo), budget_s, worker)

    store = parse_cache(cache_dir, budget_s) if cache_dir is not None else None
    return run_keyed(shard, store, "formula shard", parse, api.cacheable)
