"""The formal index build, timed against a baseline revision's code on the same tables.

Each round builds the index from a release's `declarations` and `dependencies` tables with the
baseline's code (`git archive REV mathindex`, default `main`), with this checkout's code from an
empty statement cache (cold) and again with the cache that run left (warm: a nightly rebuild on
unchanged Mathlib). Each build runs in its own process, in turn (the order alternates between
rounds), and reports its CPU and wall seconds; printed are the medians and the median of the
per-round ratios. Every output is then compared with the baseline's: the `formal_statements` table
and each file of `formal/` must be identical, unless `--changed` (a change to what is indexed: the
files that differ and the sizes are printed instead). `--corpus`: the Lean corpus whose notation
commands a build that takes them reads (as the release's formal stage does, reading included).

    .venv/bin/python -m bench.formal_build RELEASE_DIR [--rev main] [--rounds 3] [--sample N] [--work DIR]
        [--corpus LEAN_DIR] [--changed]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.formal.formal_index import build_formal_index
from mathindex.lean.notations import extract_notations

REPO = Path(__file__).resolve().parents[1]
HASH_SEED = "0"


def build_once(src: Path, release: Path, out: Path, cache: Path | None, sample: int, corpus: Path | None = None) -> dict:
    """One build with the code under `src` (run in a child process whose path puts `src` first);
    CPU and wall seconds, and the bytes of its outputs."""
    decls = pq.read_table(release / "declarations.parquet")
    deps = pq.read_table(release / "dependencies.parquet")
    if sample:
        rows = np.sort(np.random.default_rng(0).choice(decls.num_rows, min(sample, decls.num_rows), replace=False))
        decls = decls.take(pa.array(rows))
    cpu, wall = _cpu(), time.perf_counter()
    args = (decls, deps, out / "formal") + ((cache,) if cache is not None else ())
    kwargs = {}
    if corpus is not None and "notations" in inspect.signature(build_formal_index).parameters:
        kwargs["notations"] = extract_notations(corpus, "mathlib")
    statements, info = build_formal_index(*args, **kwargs)
    cpu, wall = _cpu() - cpu, time.perf_counter() - wall
    pq.write_table(statements, out / "formal_statements.parquet")
    sizes = {"formal_statements": (out / "formal_statements.parquet").stat().st_size,
             "formal/": sum(p.stat().st_size for p in (out / "formal").iterdir())}
    return {"cpu": cpu, "wall": wall, "info": info, "bytes": sizes}


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the build's worker pool)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def run(config: str, src: Path, args, work: Path) -> dict:
    out = work / config
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cache = work / "cache" if config != "baseline" else None
    if config == "cold":
        shutil.rmtree(work / "cache", ignore_errors=True)
    # -P: the child's path is PYTHONPATH alone, `src` (its mathindex) first, then this checkout (bench)
    cmd = [sys.executable, "-P", "-m", "bench.formal_build", str(args.release.resolve()), "--one", str(src), str(out),
           "--sample", str(args.sample)] + (["--corpus", str(args.corpus)] if args.corpus else [])
    if cache is not None:
        cmd += ["--cache", str(cache)]
    # one hash seed for every build: main's ConstantResolver picks among several type namespaces in
    # set order (`card` beside both `Finset` and `Multiset`), which follows the process's hash seed
    res = subprocess.run(cmd, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(REPO)]), "PYTHONHASHSEED": HASH_SEED})
    if res.returncode != 0:
        sys.exit(f"error: the {config} build failed: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else res.returncode}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def same_output(a: Path, b: Path) -> list[str]:
    """What differs between two builds' outputs (empty: identical)."""
    diffs = []
    if not pq.read_table(a / "formal_statements.parquet").equals(pq.read_table(b / "formal_statements.parquet")):
        diffs.append("formal_statements")
    for f in sorted(p.name for p in (a / "formal").iterdir()):
        if (a / "formal" / f).read_bytes() != (b / "formal" / f).read_bytes():
            diffs.append("formal/" + f)
    return diffs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--rev", default="main", help="the baseline revision (its mathindex/ is archived)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sample", type=int, default=0, help="a seeded sample of declarations (0: all)")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "bench-formal-build")
    ap.add_argument("--one", nargs=2, type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--corpus", type=Path, help="the Lean corpus whose notation commands the builds read")
    ap.add_argument("--changed", action="store_true", help="the change alters the index: report, do not require, differences")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(build_once(args.one[0], args.release, args.one[1], args.cache, args.sample, args.corpus)))
        return
    if not (args.release / "declarations.parquet").is_file():
        sys.exit(f"error: {args.release} has no declarations.parquet")
    base = args.work / f"baseline-{args.rev}"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", args.rev, "mathindex"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
    times: dict[str, list[dict]] = {"baseline": [], "cold": [], "warm": []}
    for r in range(args.rounds):
        order = ["baseline", "cold", "warm"] if r % 2 == 0 else ["cold", "warm", "baseline"]
        for config in order:
            times[config].append(run(config, base if config == "baseline" else REPO, args, args.work))
        row = {c: times[c][-1] for c in times}
        print(f"round {r + 1}: " + ", ".join(f"{c} cpu {row[c]['cpu']:.1f} s wall {row[c]['wall']:.1f} s" for c in row), flush=True)
        for c in ("cold", "warm"):
            diffs = same_output(args.work / "baseline", args.work / c)
            if diffs and not args.changed:
                sys.exit(f"error: the {c} build differs from the baseline's in {', '.join(diffs)}")
        if args.changed:
            print(f"differs from {args.rev}'s: {', '.join(same_output(args.work / 'baseline', args.work / 'cold')) or 'nothing'}")
    info = times["cold"][-1]["info"]
    print(f"{info['declarations']} declarations, {info['keys']} keys, {info['postings']} postings"
          + ("" if args.changed else f"; outputs identical to {args.rev}'s in every round (formal_statements, formal/*)"))
    for c in ("baseline", "cold"):
        print(f"{c:<8} bytes: " + ", ".join(f"{k} {v:,}" for k, v in times[c][-1]["bytes"].items()))
    for c in ("baseline", "cold", "warm"):
        cpu = statistics.median(t["cpu"] for t in times[c])
        wall = statistics.median(t["wall"] for t in times[c])
        line = f"{c:<8} median cpu {cpu:7.2f} s  wall {wall:7.2f} s"
        if c != "baseline":
            rc = statistics.median(b["cpu"] / t["cpu"] for b, t in zip(times["baseline"], times[c]))
            rw = statistics.median(b["wall"] / t["wall"] for b, t in zip(times["baseline"], times[c]))
            line += f"  baseline/this: cpu {rc:.2f}x, wall {rw:.2f}x"
        print(line)


if __name__ == "__main__":
    main()
