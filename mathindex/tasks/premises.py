"""Premise-selection tasks: priors, the held-out suite, fitted weights and figures (mathindex.premises),
each goal's candidates and features computed in content-keyed shards through the flow's task runner
(`premises_in_shards`: a thread a core locally, Dask workers on a cluster) and fitted on in one reduce,
or in the stage's own task (`premise_index`: without a cache, or with LOCAL_IN_PROCESS)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pyarrow as pa
from prefect.logging import get_run_logger

from mathindex.cache.shards import ShardDone
from mathindex.embed.channel import VectorChannel
from mathindex.embed.shards import EmbedderSpec
from mathindex.formal.search import FormalIndex
from mathindex.premises.build import (PremiseGoals, StageEntry, cache_measured, cached_premises, finish_premises,
                                     prepare_premises, reused_premises)
from mathindex.premises.imports import read_imports
from mathindex.premises.shards import (SHARD_GOALS, GoalShard, RankerSource, close_rankers, features_shard, goal_rows,
                                       keep_newest_sets, plan_goal_shards, ranker_source, read_runs, row_names)
from mathindex.tasks import HOUR_S, IndexBuild, io_stage, stage
from mathindex.tasks.shards import run_shards, runner_is_local, size_from_env

SHARD_ENV = "MATHINDEX_PREMISE_SHARD_GOALS"  # smaller shards spread a small corpus over more workers (the tests)
# A local run computes the candidates as shards on the flow's threads (a shard a core, one ranker
# shared), not in the stage's own task on one thread: 1,000 of whole Mathlib's 3,551 goals (seeded),
# 66.1 s wall / 34.5 s CPU against 81.4 s / 38.1 s in-process, faster in each of 3 paired rounds
# (bench/premise_runner.py, medians, 2-core Xeon with AMX, load average 7). True: the stage's task.
LOCAL_IN_PROCESS = False


def shard_goals(default: int = SHARD_GOALS) -> int:
    """Distinct goals a premise features shard: $MATHINDEX_PREMISE_SHARD_GOALS when set, else `default`."""
    return size_from_env(SHARD_ENV, default)


@stage(name="build_premises", timeout_seconds=3 * HOUR_S)
def premise_index(release_dir: Path, declarations: pa.Table, dependencies: pa.Table, vector: VectorChannel | None,
                  model: str | None, cache_dir: Path | None = None, lean_roots: list[str] | None = None) -> IndexBuild:
    """Builds `premises/` in a release whose tables and indexes are written; returns the figures.
    The ranker reads the formal index (opened from the release's files when the stage measures)
    and `vector`, the embed stage's embedding channel. With `cache_dir` (the root's cache),
    unchanged inputs reuse the last build's files. `lean_roots`: the Lean corpora's roots, whose
    file headers give the import graph."""
    imports = read_imports(lean_roots) if lean_roots else None
    return IndexBuild("premises", cached_premises(release_dir, declarations, dependencies,
                                                  lambda: (FormalIndex(release_dir), vector), cache_dir, model,
                                                  imports=imports))


@dataclass(frozen=True)
class PremisePlan:
    """The stage's figures when the premise cache held or carried them (`done`); else the goals it
    ranks, where its measured build goes in that cache, the ranker's source and the goals' shards.
    `started` (perf_counter) for the figures."""

    started: float
    done: dict | None = None
    goals: PremiseGoals | None = field(default=None, repr=False)
    entry: StageEntry | None = field(default=None, repr=False)
    source: RankerSource | None = None
    shards: list[GoalShard] = field(default_factory=list, repr=False)


@stage(name="plan_premise_shards")
def plan_premise_shards(release_dir: Path, declarations: pa.Table, dependencies: pa.Table, spec: EmbedderSpec | None,
                        model: str | None, cache_dir: Path, lean_roots: list[str] | None, shard_size: int,
                        spread: int) -> PremisePlan:
    """The premise cache's entry of these inputs, when it holds or carries one; else `premises/`'s
    priors, statement index and suite written, and the goals to rank as shards (at least `spread`)."""
    started = time.perf_counter()
    imports = read_imports(lean_roots) if lean_roots else None
    done, entry = reused_premises(release_dir, declarations, dependencies, cache_dir, model, imports=imports)
    if done is not None:
        return PremisePlan(started, done)
    goals = prepare_premises(release_dir, declarations, dependencies, token_cache=cache_dir, imports=imports)
    source = ranker_source(release_dir, spec, cache_dir)
    return PremisePlan(started, None, goals, entry, source, plan_goal_shards(goal_rows(goals.ranked()), shard_size, spread))


features_shard_task = io_stage(name="premise_features_shard", task_run_name="premise-shard-{shard.index}")(features_shard)


@stage(name="merge_premise_shards")
def merge_premise_shards(plan: PremisePlan, done: list[ShardDone]) -> IndexBuild:
    """The reduce: every goal's candidates read back in goal order (whatever the shards' number or
    finish order), the weights and the tree model fitted, the figures; stored in the premise cache."""
    source = plan.source
    release = Path(source.release)
    get_run_logger().info("premise features: %d goals in %d shards, %d computed (%.1f s), %d lost runs",
                          sum(s.goals.num_rows for s in plan.shards), len(done), sum(d.computed for d in done),
                          sum(d.seconds for d in done), sum(len(d.lost) for d in done))
    info = finish_premises(release, plan.goals, partial(read_runs, source=source), row_names(release),
                           source.spec is not None)
    close_rankers()  # the flow's own, when its threads ran shards
    keep_newest_sets(Path(source.cache_dir))
    if plan.entry is not None:
        cache_measured(plan.entry, release, info)
    return IndexBuild("premises", {**info, "seconds": round(time.perf_counter() - plan.started, 1)})


def premises_in_shards(release_dir: Path, declarations: pa.Table, dependencies: pa.Table, vector: VectorChannel | None,
                       spec: EmbedderSpec | None, model: str | None, cache_dir: Path | None,
                       lean_roots: list[str] | None = None, shard_size: int = SHARD_GOALS) -> IndexBuild:
    """The premise stage. On the flow's thread pool with LOCAL_IN_PROCESS, or without a cache, one task
    ranking every goal over `vector` (`premise_index`); else the goals as content-keyed shards through
    the flow's task runner (`premises.shards.features_shard`: on Dask all at once, locally a shard a
    core), each opening the ranker from the staging release and `spec` (the embed stage's embedder,
    named) and storing its candidates in the root's cache, and one reduce (`merge_premise_shards`)."""
    local = runner_is_local()
    if (local and LOCAL_IN_PROCESS) or cache_dir is None:
        return premise_index(release_dir, declarations, dependencies, vector, model, cache_dir, lean_roots)
    cores = os.cpu_count() or 1
    plan = plan_premise_shards(release_dir, declarations, dependencies, spec if vector is not None else None, model,
                               cache_dir, lean_roots, shard_size, cores if local else 1)
    if plan.done is not None:
        return IndexBuild("premises", {**plan.done, "seconds": round(time.perf_counter() - plan.started, 1)})
    done = run_shards(features_shard_task, plan.shards, "premise features", cores if local else None, source=plan.source)
    return merge_premise_shards(plan, done)
