"""The premise stage's candidates and features, its local executors compared: one ranker in this
process ranking every goal in turn (`in-process`, the baseline and the local default:
tasks/premises.py LOCAL_IN_PROCESS), and content-keyed shards on every core's thread at once, one
shard a core, as Prefect's ThreadPoolTaskRunner runs them (`threads`: the plan's digest of the
ranker's files, the ranker opened from them once and shared by the threads, each shard's rows stored
in the features cache and read back in goal order). Each round opens the ranker anew and ranks the
same goals (the stage's goals, or a seeded sample of them: `--limit`) into an empty cache; rounds
rotate the modes so the machine's noise falls on each alike. The embedder is loaded once, before
the rounds (the embed stage has loaded it when the premise stage runs). Prints the median wall and
CPU seconds (every thread of this process) per mode, its ratio to `in-process`, and exits 1 when a
mode's candidates differ from `in-process`'s.

    python -m bench.premise_runner {release} [--limit 400] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from bench.common.machine import cpu_model, cpu_seconds
from bench.common.rounds import paired_rounds
from mathindex.embed.channel import spec_channel
from mathindex.embed.embedder import EMBED_BACKEND, onnx_dir_for
from mathindex.embed.models import reference_path
from mathindex.embed.shards import EmbedderSpec, load_embedder
from mathindex.formal.search import FormalIndex
from mathindex.premises.build import EVAL_QUERIES, PremiseGoals
from mathindex.premises.fit import FIT_QUERIES, MODEL_QUERIES, collect, sample_queries
from mathindex.premises.ranker import DEFAULT_WEIGHTS, Candidates, PremiseRanker
from mathindex.premises.shards import (SHARD_GOALS, close_rankers, features_shard, goal_key, goal_rows, plan_goal_shards,
                                       ranker_source, read_candidates)
from mathindex.premises.split import SEED, TEST, TUNE
from mathindex.premises.suite import build_suite
from mathindex.store.integrity import read_manifest
from mathindex.store.layout import ReleaseLayout

MODES = ("in-process", "threads")


def stage_goals(release: Path) -> list[dict]:
    """The goals the premise stage ranks for the release's tables: the tune goals its fits sample,
    then the held-out goals it evaluates (`PremiseGoals.ranked`)."""
    layout = ReleaseLayout(release)
    decls, deps = pq.read_table(layout.table("declarations")), pq.read_table(layout.table("dependencies"))
    tune = build_suite(decls, deps, SEED, TUNE)["queries"]
    held_out = build_suite(decls, deps, SEED, TEST)["queries"]
    goals = PremiseGoals({}, {}, {}, sample_queries(tune, FIT_QUERIES, SEED), sample_queries(tune, MODEL_QUERIES, SEED),
                         sample_queries(held_out, EVAL_QUERIES, SEED))
    return goals.ranked()


def release_spec(release: Path) -> EmbedderSpec:
    """The embedder spec of the release's index, as its flow made it (the root's model and ONNX exports)."""
    root = release.parent.parent
    model = reference_path(read_manifest(release).vector_index.model, root)
    spec = EmbedderSpec(None if model is None else str(model), EMBED_BACKEND, str(onnx_dir_for(root / "cache")),
                        workers=1, threads=1)
    return spec.named(load_embedder(spec))


def in_process(release: Path, spec: EmbedderSpec, goals: list[dict], cache_dir: Path) -> list[Candidates]:
    """Every goal's candidates by one ranker on this thread (`in-process`)."""
    ranker = PremiseRanker(release, FormalIndex(release), spec_channel(release, spec, cache_dir),
                           weights=dict(DEFAULT_WEIGHTS))
    return [r.candidates for r in collect(ranker, goals)]


def threaded(release: Path, spec: EmbedderSpec, goals: list[dict], cache_dir: Path) -> list[Candidates]:
    """Every goal's candidates by shards on one thread a core, read back in goal order (`threads`)."""
    cores = os.cpu_count() or 1
    source = ranker_source(release, spec, cache_dir)
    shards = plan_goal_shards(goal_rows(goals), SHARD_GOALS, spread=cores)
    with ThreadPoolExecutor(cores) as pool:
        list(pool.map(lambda s: features_shard(s, source), shards))
    try:
        return read_candidates([goal_key(g) for g in goals], source)
    finally:
        close_rankers()


def one_round(mode: str, release: Path, spec: EmbedderSpec, goals: list[dict]) -> tuple[float, float, list[Candidates]]:
    """(wall, CPU) seconds of the goals' candidates with `mode` into an empty cache, and the candidates."""
    with tempfile.TemporaryDirectory(prefix="premise-runner-") as cache_dir:
        t0, c0 = time.perf_counter(), cpu_seconds()
        run = in_process if mode == "in-process" else threaded
        got = run(release, spec, goals, Path(cache_dir))
        return time.perf_counter() - t0, cpu_seconds() - c0, got


def same(a: list[Candidates], b: list[Candidates]) -> bool:
    def eq(x, y):
        return (x is None and y is None) or (x is not None and y is not None and x.dtype == y.dtype and np.array_equal(x, y))
    return len(a) == len(b) and all(eq(x.docs, y.docs) and eq(x.features, y.features) and eq(x.extra, y.extra)
                                    and x.constants == y.constants and x.fallback == y.fallback for x, y in zip(a, b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path, help="a release directory (its tables, premises/, formal/ and vector/)")
    ap.add_argument("--limit", type=int, default=0, help="a seeded sample of N of the stage's goals (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES), help=f"a comma-separated subset of {','.join(MODES)}")
    args = ap.parse_args()
    modes = [m for m in MODES if m in args.modes.split(",")]
    goals = stage_goals(args.release)
    if args.limit and args.limit < len(goals):
        goals = sorted(random.Random(0).sample(goals, args.limit), key=lambda g: g["id"])
    spec = release_spec(args.release)
    print(f"{len(goals)} goals, {args.rounds} rounds, {os.cpu_count()} cores; {cpu_model()}; "
          f"load average {os.getloadavg()[0]:.2f}")
    sys.exit(paired_rounds(modes, args.rounds, lambda mode, _: one_round(mode, args.release, spec, goals), "candidates", same))


if __name__ == "__main__":
    main()
