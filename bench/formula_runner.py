"""The formulas stage's local executors compared, cold: the stage as it ran before shards, one call
parsing in the flow process with one SymPy worker beside it (`flow`, the baseline); the content-keyed
shards one at a time, each parsing in a runner thread with one SymPy worker reused from shard to
shard (`serial`: the local default now, tasks/formulas.py parse_in_shards); the shards on every
core's thread at once, as Prefect's ThreadPoolTaskRunner would run them (`threads`); and the shards
on a process pool of one process a core (`processes`, spawned). Each round parses the same formulas
into an empty parse cache; rounds rotate the modes so the machine's noise falls on each alike.
Prints the median wall and CPU seconds (this process and its children, SymPy's included) per mode,
its ratio to `flow`, and exits 1 when a mode's formula_trees or errors rows differ from `flow`'s.

    python -m bench.formula_runner {release} [--limit 3000] [--rounds 3] [--shard-formulas 25000]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bench.common.machine import cpu_model, cpu_seconds
from bench.common.rounds import paired_rounds
from mathindex.formula import api
from mathindex.formula.canonical import close_idle_workers
from mathindex.cache.shards import KeyedShard, RowsDone
from mathindex.formula.shards import SHARD_FORMULAS, parse_shard, plan_shards

BUDGET_S = 2.0  # the release's SymPy budget (flows/release.py SYMPY_BUDGET_S)
MODES = ("flow", "serial", "threads", "processes")


def parse_in_process(shard: KeyedShard, cache_dir: Path) -> RowsDone:
    """One shard in a pool process, its SymPy worker stopped after (so its CPU is counted)."""
    try:
        return parse_shard(shard, BUDGET_S, cache_dir)
    finally:
        close_idle_workers()


def sharded(mode: str, formulas: pa.Table, cache_dir: Path, shard_formulas: int) -> tuple[pa.Table, pa.Table]:
    """The stage's rows by `mode`'s shards (all but `flow`)."""
    cores = os.cpu_count() or 1
    inputs = api.formula_inputs(formulas)
    found, todo = api.uncached(inputs, cache_dir, BUDGET_S)
    shards = plan_shards(todo, shard_formulas, 1 if mode == "serial" else cores)
    if mode == "processes":
        with ProcessPoolExecutor(cores, mp_context=multiprocessing.get_context("spawn")) as pool:
            done = list(pool.map(parse_in_process, shards, [cache_dir] * len(shards)))
    else:
        with ThreadPoolExecutor(1 if mode == "serial" else cores) as pool:
            done = list(pool.map(lambda s: parse_shard(s, BUDGET_S, cache_dir), shards))
        close_idle_workers()
    return api.assemble(inputs, pl.concat([found, *(pl.from_arrow(d.rows) for d in done)], how="vertical_relaxed"))


def one_round(mode: str, formulas: pa.Table, shard_formulas: int) -> tuple[float, float, tuple[pa.Table, pa.Table]]:
    """(wall, CPU) seconds of parsing `formulas` cold with `mode`, and the rows it made."""
    with tempfile.TemporaryDirectory(prefix="formula-runner-") as cache_dir:
        t0, c0 = time.perf_counter(), cpu_seconds()
        if mode == "flow":
            out = api.parse_formulas(formulas, BUDGET_S, Path(cache_dir))
        else:
            out = sharded(mode, formulas, Path(cache_dir), shard_formulas)
        return time.perf_counter() - t0, cpu_seconds() - c0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path, help="a release directory (its formulas.parquet)")
    ap.add_argument("--limit", type=int, default=0, help="about N formulas, evenly spaced through the table (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shard-formulas", type=int, default=SHARD_FORMULAS,
                    help="`serial`: distinct formulas a shard (the other modes: one shard a core)")
    ap.add_argument("--modes", default=",".join(MODES), help=f"a comma-separated subset of {','.join(MODES)}")
    args = ap.parse_args()
    modes = [m for m in MODES if m in args.modes.split(",")]
    formulas = pq.read_table(args.release / "formulas.parquet")
    if args.limit and args.limit < formulas.num_rows:
        formulas = formulas.take(pa.array(range(0, formulas.num_rows, -(-formulas.num_rows // args.limit))))
    print(f"{formulas.num_rows} formulas, {args.rounds} rounds, {os.cpu_count()} cores; {cpu_model()}; "
          f"load average {os.getloadavg()[0]:.2f}")
    sys.exit(paired_rounds(modes, args.rounds, lambda mode, _: one_round(mode, formulas, args.shard_formulas), "rows",
                           lambda a, b: a[0].equals(b[0]) and a[1].equals(b[1])))


if __name__ == "__main__":
    main()
