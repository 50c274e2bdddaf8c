"""The formal statements' facts as content-keyed shards: the distinct statement texts the facts
cache lacks, cut into shards by key (`plan_shards`), and one shard parsed into FACTS rows and
stored in the root's facts cache (`CacheLayout.formal_statements`) under its key by whichever
process runs it (`facts_shard`: a task runner's thread, a Dask worker or the stage's process pool).
A statement's facts depend only on its text, so `aligned_facts` reads them back in doc order and
the index is the same whatever ran the shards or in what order they finished."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.cache.codes import FORMAL as FORMAL_CODE
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import KeyedShard, RowsDone, RunMarks, ShardStore, plan_keyed, run_keyed, worker_id
from mathindex.formal.facts import FACTS, facts_rows, statement_key


# distinct statements a shard parses: whole Mathlib's ~250k statements make 13 shards, each a few
# seconds of one core; a worker holds one shard's rows at a time
SHARD_STATEMENTS = 20_000
MAX_PARTS = 16  # more facts cache shards than this are merged into one by the reduce step
_TEXT = ("signature", "type", "variables", "origin")


def facts_cache(cache_dir: Path | None) -> ShardStore:
    """The statement facts under a root's cache directory (None: nowhere), for this code
    (`cache.codes.FORMAL`: a grammar change never reuses old trees)."""
    where = CacheLayout(cache_dir).formal_statements(FORMAL_CODE.digest()) if cache_dir is not None else None
    return ShardStore(where, FACTS, MAX_PARTS)


def statement_keys(decls: pa.Table) -> pl.DataFrame:
    """`key` (`facts.statement_key`) of each row of `decls`, with its text columns."""
    cols = {c: decls.column(c).to_pylist() if c in decls.column_names else [None] * decls.num_rows for c in _TEXT}
    keys = [statement_key(s, t, v, o == "to_additive") for s, t, v, o in zip(*(cols[c] for c in _TEXT))]
    return pl.DataFrame({"key": keys, **cols}, schema={"key": pl.String, **{c: pl.String for c in _TEXT}})


def plan_shards(todo: pl.DataFrame, shard_statements: int = SHARD_STATEMENTS, spread: int = 1) -> list[KeyedShard]:
    """`todo` (key and text columns: distinct statements to parse) sorted by key and cut into shards
    of `shard_statements`, or fewer so that there are at least `spread`, each named by its content."""
    return plan_keyed(todo.select("key", *_TEXT).unique("key").sort("key"), shard_statements, spread)


def facts_shard(shard: KeyedShard, cache_dir: Path | None) -> RowsDone:
    """Parses one shard and stores its rows in the facts cache under `cache_dir` (None: nowhere);
    when that cache shard is there already (a rerun after a lost worker that had stored it) its
    rows are read back instead. The run is marked first, so that a rerun names a lost one. Its rows:
    FACTS; `computed`: the statements parsed."""
    store = facts_cache(cache_dir) if cache_dir is not None else None
    done = run_keyed(shard, store, "formal shard", lambda: pl.from_arrow(parse_facts(shard)[0]))
    return replace(done, rows=done.rows.cast(FACTS))


def parse_facts(shard: KeyedShard) -> tuple[pa.Table, float]:
    """FACTS rows of one shard and the seconds they took; pyarrow only (no polars), so that a
    forked pool worker may run it."""
    t0 = time.perf_counter()
    todo = shard.todo.to_pylist()
    return facts_rows([r["key"] for r in todo], todo), time.perf_counter() - t0


def keep_facts(shard: KeyedShard, rows: pa.Table, cache_dir: Path | None, seconds: float,
               lost: tuple[str, ...] = ()) -> RowsDone:
    """Stores a parsed shard's rows in the facts cache under `cache_dir` (None: nowhere) under its
    key, and clears its run marks."""
    if cache_dir is not None:
        store = facts_cache(cache_dir)
        store.put(pl.from_arrow(rows))
        RunMarks(store.dir, shard.key).done()
    return RowsDone(shard.index, shard.key, worker_id(), lost, rows.num_rows, seconds, rows)


def aligned_facts(keyed: pl.DataFrame, found: pl.DataFrame, parsed: list[RowsDone]) -> pa.Table:
    """FACTS rows aligned with `keyed` (doc order) from the cached rows and the shards' (one row a
    key whatever the shards' number or finish order)."""
    rows = pl.concat([found, *(pl.from_arrow(p.rows) for p in parsed)], how="vertical_relaxed").unique(
        "key", keep="first", maintain_order=True)
    return keyed.select("key").join(rows, on="key", how="left", maintain_order="left").to_arrow().cast(FACTS)
