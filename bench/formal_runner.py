"""The formal statements' facts pass, its local executors compared, cold: the stage's own process
pool of one process a core over shards of SHARD_STATEMENTS (`pool`, the baseline and the local
default: tasks/formal.py LOCAL_POOL), and the content-keyed shards on every core's thread at once,
one shard a core, as Prefect's ThreadPoolTaskRunner runs them (`threads`). Each round parses the
same statements into an empty facts cache; rounds rotate the modes so the machine's noise falls on
each alike. Prints the median wall and CPU seconds (this process and its children) per mode, its
ratio to `pool`, and exits 1 when a mode's facts differ from `pool`'s.

    python -m bench.formal_runner {release} [--limit 40000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.common.machine import cpu_model
from mathindex.formal.formal_index import merge_facts, plan_facts, statement_facts, unique_declarations
from mathindex.formal.shards import facts_shard

MODES = ("pool", "threads")


def cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def threaded(decls: pa.Table, cache_dir: Path) -> pa.Table:
    """The facts by shards on one thread a core (`threads`)."""
    cores = os.cpu_count() or 1
    keyed, found, shards = plan_facts(decls, cache_dir, spread=cores)
    with ThreadPoolExecutor(cores) as pool:
        parsed = list(pool.map(lambda s: facts_shard(s, cache_dir), shards))
    return merge_facts(keyed, found, parsed, cache_dir)[0]


def one_round(mode: str, decls: pa.Table) -> tuple[float, float, pa.Table]:
    """(wall, CPU) seconds of the facts of `decls` cold with `mode`, and the facts it made."""
    with tempfile.TemporaryDirectory(prefix="formal-runner-") as cache_dir:
        t0, c0 = time.perf_counter(), cpu_seconds()
        if mode == "pool":
            facts = statement_facts(decls, Path(cache_dir), workers=os.cpu_count() or 1)[0]
        else:
            facts = threaded(decls, Path(cache_dir))
        return time.perf_counter() - t0, cpu_seconds() - c0, facts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path, help="a release directory (its declarations.parquet)")
    ap.add_argument("--limit", type=int, default=0, help="about N declarations, evenly spaced through the table (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES), help=f"a comma-separated subset of {','.join(MODES)}")
    args = ap.parse_args()
    modes = [m for m in MODES if m in args.modes.split(",")]
    decls = unique_declarations(pq.read_table(args.release / "declarations.parquet"))
    if args.limit and args.limit < decls.num_rows:
        decls = decls.take(pa.array(range(0, decls.num_rows, -(-decls.num_rows // args.limit))))
    print(f"{decls.num_rows} declarations, {args.rounds} rounds, {os.cpu_count()} cores; {cpu_model()}; "
          f"load average {os.getloadavg()[0]:.2f}")
    times: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
    facts: dict[str, pa.Table] = {}
    for r in range(args.rounds):
        for mode in modes[r % len(modes):] + modes[: r % len(modes)]:
            wall, cpu, facts[mode] = one_round(mode, decls)
            times[mode].append((wall, cpu))
            print(f"  round {r + 1} {mode:8s} wall {wall:7.2f} s  CPU {cpu:7.2f} s", flush=True)
    base = statistics.median(w for w, _ in times[modes[0]])
    for mode in modes:
        wall, cpu = statistics.median(w for w, _ in times[mode]), statistics.median(c for _, c in times[mode])
        print(f"{mode:10s} wall {wall:7.2f} s  CPU {cpu:7.2f} s  wall ratio to {modes[0]} {wall / base:.2f}")
    differ = [m for m in modes if not facts[m].equals(facts[modes[0]])]
    print("facts identical across modes" if not differ else f"facts differ from {modes[0]}'s: {', '.join(differ)}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
