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
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.common.machine import cpu_model, cpu_seconds
from bench.common.rounds import paired_rounds
from mathindex.formal.formal_index import merge_facts, plan_facts, statement_facts, unique_declarations
from mathindex.formal.shards import facts_shard

MODES = ("pool", "threads")


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
    sys.exit(paired_rounds(modes, args.rounds, lambda mode, _: one_round(mode, decls), "facts", lambda a, b: a.equals(b)))


if __name__ == "__main__":
    main()
