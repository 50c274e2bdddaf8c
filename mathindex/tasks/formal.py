"""Formal-index tasks: the `formal_statements` table and the `formal/` postings (mathindex.formal),
their statement facts parsed in content-keyed shards through the flow's task runner on a cluster
(`formal_in_shards`) and the postings built from them in one reduce."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
from prefect.logging import get_run_logger

from mathindex.cache.shards import KeyedShard, RowsDone
from mathindex.formal import build_formal_index
from mathindex.formal.formal_index import index_statements, merge_facts, plan_facts, unique_declarations
from mathindex.formal.shards import SHARD_STATEMENTS, facts_shard
from mathindex.lean.notations import extract_notations
from mathindex.schemas.common import concat
from mathindex.schemas.lean import NOTATIONS
from mathindex.store.layout import ReleaseLayout
from mathindex.tasks import IndexBuild, TableBuild, io_stage, stage
from mathindex.tasks.shards import run_shards, runner_is_local, size_from_env

SHARD_ENV = "MATHINDEX_FORMAL_SHARD_STATEMENTS"  # smaller shards spread a small corpus over more workers (the tests)
# A local run parses the statement facts in the stage's own process pool, not as shards on the
# flow's threads (the telescope parser is Python: the threads share one GIL): whole Mathlib's 300,691
# declarations cold, 58.3 s wall / 48.4 s CPU against 82.8 s / 50.0 s on one thread a core (1 round,
# bench/formal_runner.py, 2-core Xeon with AMX, loaded).
LOCAL_POOL = True


def shard_statements(default: int = SHARD_STATEMENTS) -> int:
    """Distinct statements a facts shard: $MATHINDEX_FORMAL_SHARD_STATEMENTS when set, else `default`."""
    return size_from_env(SHARD_ENV, default)


def _notations(lean_roots: list[tuple[Path, str]] | None) -> pa.Table:
    return concat([extract_notations(root, corpus) for root, corpus in lean_roots or []], NOTATIONS)


def _with_bytes(statements: pa.Table, info: dict, out_dir: Path) -> TableBuild:
    info["directory_bytes"] = sum(p.stat().st_size for p in out_dir.rglob("*") if p.is_file())
    return TableBuild(statements, IndexBuild("formal", info))


@stage(name="build_formal_index")
def formal_index(declarations: pa.Table, dependencies: pa.Table, release_dir: Path,
                 cache_dir: Path | None = None, lean_roots: list[tuple[Path, str]] | None = None,
                 shard_size: int = SHARD_STATEMENTS) -> TableBuild:
    """The formal_statements table and the `formal/` postings, with the manifest's figures (build
    seconds, bytes on disk of the postings); statement facts are kept by content under
    `cache_dir` (a root's cache directory: `CacheLayout.formal_statements`) between builds, parsed
    in this task's process pool; `lean_roots`: (root, corpus name) of each Lean corpus, whose
    notation commands are read."""
    out_dir = ReleaseLayout(release_dir).formal
    statements, info = build_formal_index(declarations, dependencies, out_dir, cache_dir=cache_dir,
                                          notations=_notations(lean_roots), shard_statements=shard_size)
    return _with_bytes(statements, info, out_dir)


@dataclass(frozen=True)
class FormalPlan:
    """The unique declarations (doc order), their statement keys, the facts the cache held, and
    the other distinct statements as content-keyed shards; `started` (perf_counter) for the figures."""

    decls: pa.Table = field(repr=False)
    keyed: pl.DataFrame = field(repr=False)
    found: pl.DataFrame = field(repr=False)
    shards: list[KeyedShard] = field(repr=False)
    started: float


@stage(name="plan_formal_shards")
def plan_formal_shards(declarations: pa.Table, cache_dir: Path | None, shard_size: int, spread: int) -> FormalPlan:
    """What the facts cache under `cache_dir` holds of the statements, and the rest as shards."""
    started = time.perf_counter()
    decls = unique_declarations(declarations)
    keyed, found, shards = plan_facts(decls, cache_dir, shard_size, spread)
    return FormalPlan(decls, keyed, found, shards, started)


facts_shard_task = io_stage(name="formal_facts_shard", task_run_name="formal-shard-{shard.index}")(facts_shard)


@stage(name="merge_formal_shards")
def merge_formal_shards(plan: FormalPlan, parsed: list[RowsDone], dependencies: pa.Table, release_dir: Path,
                        cache_dir: Path | None, lean_roots: list[tuple[Path, str]] | None) -> TableBuild:
    """The reduce: the facts read back in doc order (whatever the shards' number or finish order),
    notation and constants resolved over the whole corpus, the table and the postings."""
    out_dir = ReleaseLayout(release_dir).formal
    facts, counts = merge_facts(plan.keyed, plan.found, parsed, cache_dir)
    get_run_logger().info("formal statements: %d, %d cached, %d parsed in %d shards (%.1f s)", plan.keyed.height,
                          counts["statements_cached"], counts["statements_parsed"], len(parsed),
                          sum(p.seconds for p in parsed))
    statements, info = index_statements(plan.decls, facts, dependencies, out_dir, _notations(lean_roots))
    info["seconds"] = round(time.perf_counter() - plan.started, 2)
    if cache_dir is not None:
        info |= counts
    return _with_bytes(statements, info, out_dir)


def formal_in_shards(declarations: pa.Table, dependencies: pa.Table, release_dir: Path, cache_dir: Path | None,
                     lean_roots: list[tuple[Path, str]] | None, shard_size: int = SHARD_STATEMENTS) -> TableBuild:
    """The formal stage. On the flow's thread pool with LOCAL_POOL, one task parsing the facts in its
    own process pool (`formal_index`); else the statements the facts cache lacks as shards through the
    flow's task runner (`formal.shards.facts_shard`: on Dask all at once, locally a shard a core), each
    stored in the root's facts cache, and one reduce (`merge_formal_shards`)."""
    local = runner_is_local()
    if local and LOCAL_POOL:
        return formal_index(declarations, dependencies, release_dir, cache_dir, lean_roots, shard_size)
    cores = os.cpu_count() or 1
    plan = plan_formal_shards(declarations, cache_dir, shard_size, cores if local else 1)
    parsed = run_shards(facts_shard_task, plan.shards, "formal statements", cores if local else None,
                        cache_dir=cache_dir)
    return merge_formal_shards(plan, parsed, dependencies, release_dir, cache_dir, lean_roots)
