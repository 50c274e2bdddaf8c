"""Cold whole-corpus embedding time of embedding configurations, projected from a uniform sample.

Each configuration (model, facets embedded, int8 or not) embeds a seeded uniform sample of its own
distinct texts through the pipeline (`embed_texts`, empty cache, worker processes as in a release),
in rotated rounds so that the machine's noise falls on every configuration alike; the projection
for the whole corpus is (distinct texts of the configuration) / (median rate). The first
configuration is the baseline the ratios are against: the bundled model over every facet, which
is what releases embedded before.

    .venv/bin/python bench/embed_cost.py build/tables/mathlib-stacks --model build/models/<entry> [--fraction 0.01] [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mathindex.embed import EmbedStats, SentenceTransformerEmbedder, embed_texts
from mathindex.embed.texts import EMBEDDED_FACETS


def distinct_texts(tables: Path, facets: tuple[str, ...] | None) -> pa.Table:
    texts = pq.read_table(tables / "embedding_texts.parquet", columns=["text", "sha256", "facet"])
    if facets:
        texts = texts.filter(pc.is_in(texts["facet"], value_set=pa.array(facets, pa.string())))
    _, first = np.unique(texts.column("sha256").to_numpy(zero_copy_only=False), return_index=True)
    return texts.take(np.sort(first))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tables", type=Path, help="a release or tables directory (embedding_texts.parquet)")
    ap.add_argument("--model", action="append", default=[], help="trained model directories to add")
    ap.add_argument("--int8", action="store_true", help="also each --model with int8 dynamic quantisation")
    ap.add_argument("--fraction", type=float, default=0.01)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    configs = [("bundled, every facet (before)", None, None, False),
               ("bundled, embedded facets", None, EMBEDDED_FACETS, False)]
    configs += [(f"{Path(m).name}, embedded facets", m, EMBEDDED_FACETS, False) for m in args.model]
    if args.int8:
        configs += [(f"{Path(m).name} int8, embedded facets", m, EMBEDDED_FACETS, True) for m in args.model]
    rng = np.random.default_rng(args.seed)
    samples = []
    for _, _, facets, _ in configs:
        d = distinct_texts(args.tables, facets)
        pick = np.sort(rng.choice(d.num_rows, size=max(1, int(d.num_rows * args.fraction)), replace=False))
        samples.append((d.num_rows, d.take(pick)))
    rates: list[list[float]] = [[] for _ in configs]
    for r in range(args.rounds):
        for i in [(r + j) % len(configs) for j in range(len(configs))]:  # rotated order
            _, model, _, int8 = configs[i]
            embedder = SentenceTransformerEmbedder(model, progress=False, int8=int8)
            stats = EmbedStats()
            with tempfile.TemporaryDirectory() as cache:
                t0 = time.perf_counter()
                embed_texts(samples[i][1], embedder, Path(cache), stats)
                rates[i].append(stats.embedded / (time.perf_counter() - t0))
            embedder.close()
    base_hours = samples[0][0] / statistics.median(rates[0]) / 3600
    print(f"sample fraction {args.fraction} (seed {args.seed}), {args.rounds} rotated rounds; median rates")
    for (label, _, _, _), (total, sample), rs in zip(configs, samples, rates):
        rate = statistics.median(rs)
        hours = total / rate / 3600
        print(f"  {label:<44} {total:>8,} distinct texts, sample {sample.num_rows:>6,}: {rate:7.1f} texts/s "
              f"(runs {', '.join(f'{x:.1f}' for x in rs)}) -> {hours * 60:6.1f} min for all ({base_hours / hours:4.2f}x less)")


if __name__ == "__main__":
    main()
