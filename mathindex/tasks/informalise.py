"""Informalisation tasks: English renderings of Lean statements, cached across releases; each
dependency level's renderings in content-keyed shards through the flow's task runner on a cluster
(`informalise_in_shards`), the levels one after another in the flow."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from mathindex.cache.codes import INFORMAL
from mathindex.cache.stages import StageCache
from mathindex.informal import Informaliser, RuleInformaliser, informalise_reported
from mathindex.informal.informalise import report_of_table
from mathindex.informal.http import HttpInformaliser
from mathindex.informal.shards import InformalShard, RenderedShard, default_shard_items, render_shard, sharded_renderer
from mathindex.schemas.embed import INFORMALISATIONS
from mathindex.schemas.manifest import InformaliserEntry, InformaliserSpec
from mathindex.tasks import HOUR_S, io_stage, stage
from mathindex.tasks.shards import run_shards, runner_is_local, size_from_env

SHARD_ENV = "MATHINDEX_INFORMAL_SHARD_ITEMS"  # smaller shards spread a small corpus over more workers (the tests)
# A local run renders each level in the stage's own task, on one thread, not as shards on the flow's
# threads (the rules are Python: the threads share one GIL): whole Mathlib's 300,689 declarations
# cold, 93.7 s wall / 37.6 s CPU against 122.0 s / 49.2 s (median of 3, bench/informal_runner.py,
# 2-core Xeon with AMX, loaded).
LOCAL_IN_PROCESS = True
# A remote backend's shards in flight at once, on any runner: each asks `concurrency` requests at a
# time, so at most SHARDS_IN_FLIGHT * concurrency requests reach the endpoint, however many workers.
SHARDS_IN_FLIGHT = 8


@dataclass(frozen=True)
class Informalised:
    """The informalisations table and the report of the informaliser that made it."""

    table: pa.Table
    report: InformaliserEntry


def informaliser_for(spec: InformaliserSpec) -> Informaliser:
    """The backend a release's informaliser settings name (`sources.load_informaliser`)."""
    return HttpInformaliser.from_spec(spec) if spec.backend == "http" else RuleInformaliser()


def timeout_s(spec: InformaliserSpec) -> int:
    """The stage's Prefect timeout: an hour, plus the time the HTTP backend may spend asking."""
    return HOUR_S + (int(spec.budget_s) if spec.backend == "http" else 0)


def _no_fallback(table: pa.Table) -> bool:
    return not pc.any(pc.equal(table.column("status"), "fallback")).as_py()


def shard_items(informaliser: Informaliser) -> int:
    """Declarations an informal shard: $MATHINDEX_INFORMAL_SHARD_ITEMS when set, else the backend's
    default (`informal.shards.default_shard_items`)."""
    return size_from_env(SHARD_ENV, default_shard_items(informaliser))


def _stage_cached(declarations: pa.Table, dependencies: pa.Table, cache_dir: Path | None, informaliser: Informaliser,
                  compute: Callable[[], tuple[pa.Table, InformaliserEntry]]) -> Informalised:
    """The table and report of `compute`, or the whole table from the stage cache when declarations
    and dependencies are those of an earlier run with the same informaliser (`cache.stages.StageCache`;
    a table with fallbacks is never stored there, so they are asked again)."""
    made: list[InformaliserEntry] = []

    def table() -> pa.Table:
        out, report = compute()
        made.append(report)
        return out

    got, _ = StageCache(cache_dir).run(
        "informalise", INFORMAL, table, {"declarations": declarations, "dependencies": dependencies},
        {"backend": informaliser.backend, "model": informaliser.model, "prompt": informaliser.prompt_version},
        schema=INFORMALISATIONS, keep=_no_fallback)
    return Informalised(got, made[0] if made else report_of_table(informaliser, got))


@stage(name="informalise")
def informalise_declarations(declarations: pa.Table, dependencies: pa.Table, cache_dir: Path,
                             spec: InformaliserSpec | None = None) -> Informalised:
    """The informalisations table and its report, from the stage cache (`_stage_cached`), else each
    rendering from the per-statement cache (`informal.informalise.InformalCache`) or the informaliser,
    here. Run with `timeout_s(spec)` as its timeout."""
    informaliser = informaliser_for(spec or InformaliserSpec())
    return _stage_cached(declarations, dependencies, cache_dir, informaliser,
                         lambda: informalise_reported(declarations, informaliser, cache_dir, dependencies))


render_shard_task = io_stage(name="informalise_shard",
                             task_run_name="informal-shard-{shard.level}-{shard.index}")(render_shard)


def informalise_in_shards(declarations: pa.Table, dependencies: pa.Table, cache_dir: Path | None,
                          spec: InformaliserSpec | None = None) -> Informalised:
    """The informalise stage. On the flow's thread pool with LOCAL_IN_PROCESS, one task
    (`informalise_declarations`); else, level by level in the flow, the declarations the informal cache
    lacks as shards through the flow's task runner (`informal.shards.render_shard`; the rules' on Dask
    all at once, locally a shard a core; a remote backend's SHARDS_IN_FLIGHT at a time, each carrying
    why the endpoint was given up by a shard before it), each stored in the root's informal cache."""
    spec = spec or InformaliserSpec()
    local = runner_is_local()
    if local and LOCAL_IN_PROCESS:
        return informalise_declarations.with_options(timeout_seconds=timeout_s(spec))(
            declarations, dependencies, cache_dir, spec)
    informaliser = informaliser_for(spec)
    remote = informaliser.endpoint is not None
    cores = os.cpu_count() or 1
    window = SHARDS_IN_FLIGHT if remote else cores if local else None

    def gave_up(done: RenderedShard) -> None:
        if done.closed is not None:
            informaliser.close(done.closed)

    def run(shards: list[InformalShard]) -> list[RenderedShard]:
        return run_shards(render_shard_task, shards, "informalise", window, gave_up, informaliser=informaliser,
                          cache_dir=cache_dir)

    render = sharded_renderer(run, shard_items(informaliser), window or 1)
    return _stage_cached(declarations, dependencies, cache_dir, informaliser,
                         lambda: informalise_reported(declarations, informaliser, cache_dir, dependencies, render))
