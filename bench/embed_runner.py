"""The embed stage's local executors compared, cold: the embed shards one at a time, each through
the embedder's process pool of single-threaded workers (`pool`: the local default before shards),
against the shards on a thread pool as Prefect's ThreadPoolTaskRunner runs them, each in the flow
process with one ONNX thread (`threads`: the local default now, tasks/embed.py embedder_spec), and
one shard at a time with every core as ONNX intra-op threads (`intra`). Each round embeds the same distinct texts into an empty cache through
`embed.shards.embed_shard`; rounds rotate the modes so the machine's noise falls on each alike.
Prints the median wall and CPU seconds (process and children) per mode, and its ratio to `pool`.

    python -m bench.embed_runner {sample_release} [--limit 6000] [--rounds 3] [--shard-texts 1000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow.parquet as pq

from bench.common.machine import cpu_model, cpu_seconds
from mathindex.embed.embedder import EMBED_BACKEND, EmbeddingCache
from mathindex.embed.shards import EmbedderSpec, embed_shard, load_embedder, missing_texts, plan_shards
from mathindex.embed.texts import embedded_texts

MODES = ("pool", "threads", "intra")


def spec_of(mode: str, onnx_dir: Path) -> tuple[EmbedderSpec, int]:
    """The embedder spec and the number of shards in flight of one mode."""
    cores = os.cpu_count() or 1
    if mode == "pool":
        return EmbedderSpec(None, EMBED_BACKEND, str(onnx_dir), workers=0), 1
    if mode == "threads":
        return EmbedderSpec(None, EMBED_BACKEND, str(onnx_dir), workers=1, threads=1), cores
    return EmbedderSpec(None, EMBED_BACKEND, str(onnx_dir), workers=1, threads=cores), 1


def one_round(mode: str, table, onnx_dir: Path, shard_texts: int, parallel_min: int) -> tuple[float, float]:
    """(wall, CPU) seconds of embedding `table`'s texts cold with `mode`."""
    spec, window = spec_of(mode, onnx_dir)
    embedder = load_embedder(spec)  # loaded before the clock: the flow loads it for the index anyway
    spec = spec.named(embedder)
    embedder.parallel_min, embedder.keep_workers = parallel_min, True
    with tempfile.TemporaryDirectory(prefix="embed-runner-") as cache_dir:
        cache = EmbeddingCache(Path(cache_dir), embedder.name, embedder.revision, embedder.dim)
        t0, c0 = time.perf_counter(), cpu_seconds()
        shards = plan_shards(*missing_texts(table, cache), shard_texts)
        with ThreadPoolExecutor(window) as pool:
            list(pool.map(lambda s: embed_shard(s, spec, Path(cache_dir)), shards))
        embedder.close()
        return time.perf_counter() - t0, cpu_seconds() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path, help="a release directory (its embedding_texts.parquet)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N embedded texts (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shard-texts", type=int, default=0, help="texts a shard (0: the texts over the cores, at least 1)")
    ap.add_argument("--parallel-min", type=int, default=2048,
                    help="`pool`: shards of at least this many texts use the process pool (the embedder's default)")
    args = ap.parse_args()
    table = embedded_texts(pq.read_table(args.release / "embedding_texts.parquet")).sort_by("text_id")
    if args.limit:
        table = table.slice(0, args.limit)
    cores = os.cpu_count() or 1
    shard_texts = args.shard_texts or max(1, -(-table.num_rows // cores))
    print(f"{table.num_rows} texts, shards of {shard_texts}, {args.rounds} rounds; {cpu_model()}; "
          f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="embed-runner-onnx-") as onnx_dir:
        times: dict[str, list[tuple[float, float]]] = {m: [] for m in MODES}
        for r in range(args.rounds):
            for mode in MODES[r % len(MODES):] + MODES[: r % len(MODES)]:
                times[mode].append(one_round(mode, table, Path(onnx_dir), shard_texts, args.parallel_min))
    base = statistics.median(w for w, _ in times["pool"])
    for mode in MODES:
        wall, cpu = statistics.median(w for w, _ in times[mode]), statistics.median(c for _, c in times[mode])
        print(f"{mode:8s} wall {wall:7.2f} s  CPU {cpu:7.2f} s  wall ratio to pool {wall / base:.2f}")


if __name__ == "__main__":
    main()
