"""The informalise stage with the rules, its local executors compared, cold: each level rendered in
one call on one thread, as the stage's own task runs it (`task`, the baseline and the local default:
tasks/informalise.py LOCAL_IN_PROCESS), and each level's content-keyed shards on every core's thread
at once, a shard a core, as Prefect's ThreadPoolTaskRunner runs them (`threads`). Each round renders
the same declarations into an empty informal cache; rounds rotate the modes so the machine's noise
falls on each alike. Prints the median wall and CPU seconds per mode, its ratio to `task`, and exits
1 when a mode's informalisations differ from `task`'s.

    python -m bench.informal_runner {release} [--limit 40000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.common.machine import cpu_model, cpu_seconds
from bench.common.rounds import paired_rounds
from mathindex.informal import RuleInformaliser, informalise_reported
from mathindex.informal.shards import SHARD_ITEMS, render_shard, sharded_renderer

MODES = ("task", "threads")


def one_round(mode: str, decls: pa.Table, deps: pa.Table, shard_items: int) -> tuple[float, float, pa.Table]:
    """(wall, CPU) seconds of the informalisations of `decls` cold with `mode`, and the table it made."""
    rules, cores = RuleInformaliser(), os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="informal-runner-") as cache_dir, ThreadPoolExecutor(cores) as pool:
        render = None
        if mode == "threads":
            render = sharded_renderer(lambda shards: list(pool.map(lambda s: render_shard(s, rules, Path(cache_dir)),
                                                                   shards)), shard_items, cores)
        t0, c0 = time.perf_counter(), cpu_seconds()
        table, _ = informalise_reported(decls, rules, Path(cache_dir), deps, render)
        return time.perf_counter() - t0, cpu_seconds() - c0, table


def _sample(decls: pa.Table, limit: int) -> pa.Table:
    if not limit or limit >= decls.num_rows:
        return decls
    return decls.take(pa.array(range(0, decls.num_rows, -(-decls.num_rows // limit))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path, help="a release directory (its declarations and dependencies)")
    ap.add_argument("--limit", type=int, default=0, help="about N declarations, evenly spaced through the table (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shard-items", type=int, default=SHARD_ITEMS, help="declarations a shard (threads)")
    ap.add_argument("--modes", default=",".join(MODES), help=f"a comma-separated subset of {','.join(MODES)}")
    args = ap.parse_args()
    modes = [m for m in MODES if m in args.modes.split(",")]
    decls = _sample(pq.read_table(args.release / "declarations.parquet"), args.limit)
    deps = pq.read_table(args.release / "dependencies.parquet")
    print(f"{decls.num_rows} declarations, {args.rounds} rounds, {os.cpu_count()} cores, shards of "
          f"{args.shard_items}; {cpu_model()}; load average {os.getloadavg()[0]:.2f}")
    sys.exit(paired_rounds(modes, args.rounds, lambda mode, _: one_round(mode, decls, deps, args.shard_items),
                           "informalisations", lambda a, b: a.equals(b)))


if __name__ == "__main__":
    main()
