"""The embedder's training pairs a release gives, per kind, and what engine negatives cost.

Mines every pair kind (`embed.pairs.KINDS`, or `--kind`) from a release as `mathindex
train-embedder` does (the suites the project ships kept out), and prints the pairs per kind, what
the leak guard dropped and the seconds mining took. With `--engine-anchors N`, it then searches the
first N distinct anchors the default recipe's schedule draws (`embed.train.schedule`) in the
release's own engine (`search.negatives.near_misses`, uncached unless `--cache`), and prints the
engine's opening time and the wall and CPU seconds per 1,000 anchors, with how many negatives the
near-misses replaced. The engine writes the renderings it embeds into its root's cache when it is
closed: point it at a root of your own (hard links of a release and its cache will do).

Usage: python -m bench.training_pairs RELEASE [--kind K ...] [--engine-anchors 1000] [--cache DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import polars as pl

from mathindex.embed.pairs import KINDS, engine_negatives, mine_pairs, read_release_tables
from mathindex.embed.train import Recipe, schedule
from mathindex.evaluation.suites import project_suite_queries
from mathindex.search.negatives import near_misses
from mathindex.store.layout import ReleaseLayout


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--kind", action="append", choices=KINDS, help="a pair kind to mine (default: every kind)")
    ap.add_argument("--engine-anchors", type=int, default=0, help="anchors to search in the release's engine (0: none)")
    ap.add_argument("--cache", type=Path, help="a cache directory for the near-misses (default: none, every anchor searched)")
    args = ap.parse_args()
    kinds = args.kind or list(KINDS)
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    w0, c0 = time.perf_counter(), time.process_time()
    tables = read_release_tables(args.release, kinds)
    queries, targets, files = project_suite_queries(args.release)
    pairs, info = mine_pairs(tables, queries, targets, 0, kinds)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(f"suites kept out: {len(files)} files, {len(queries)} queries, {len(targets)} targets")
    for kind in kinds:
        print(f"pairs {kind}: {info['pairs'].get(kind, 0):,}")
    print(f"pairs total: {pairs.num_rows:,}")
    print("dropped: " + ", ".join(f"{k} {v:,}" for k, v in info["dropped"].items()))
    print(f"mining (tables read, module docs read, mined): {wall:.1f} s wall, {cpu:.1f} s CPU")
    if args.engine_anchors <= 0:
        return
    mix = {k: 1.0 for k in info["pairs"]}
    rows = list(dict.fromkeys(schedule(pairs, Recipe(mix=mix)).ravel().tolist()))[: args.engine_anchors]
    anchors = pairs.column("anchor").take(rows).to_pylist()
    w0, c0 = time.perf_counter(), time.process_time()
    hits, stats = near_misses(args.release, anchors, args.cache)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    per = 1000 / max(stats["searched"], 1)
    print(f"engine anchors: {len(anchors):,} ({stats['cached']:,} cached, {stats['searched']:,} searched)")
    print(f"engine open: {stats['open_s']:.1f} s wall")
    print(f"engine per 1,000 anchors: {stats['search_s'] * per:.1f} s wall, {cpu * per:.1f} s CPU (open included)")
    texts = pl.read_parquet(ReleaseLayout(args.release).table("embedding_texts"), columns=["node_id", "name", "facet", "text"])
    _, counts = engine_negatives(pairs, rows, hits, texts, queries, targets)
    print(f"engine negatives: {counts['replaced']:,} replaced, {counts['kept_module']:,} kept from the module "
          f"({np.mean([len(h) for h in hits.values()]):.1f} hits per anchor)")


if __name__ == "__main__":
    main()
