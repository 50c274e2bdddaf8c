"""Cold whole-corpus embedding time of embedding configurations, projected from a uniform sample.

Each configuration (model, facets embedded, precision) embeds a seeded uniform sample of its own
distinct texts through the pipeline (`embed_texts`, empty cache, worker processes as in a release),
in rotated rounds so that the machine's noise falls on every configuration alike; the projection
for the whole corpus is (distinct texts of the configuration) / (median rate). The first
configuration is the baseline the ratios are against: the bundled model over every facet, which
is what releases embedded before (`--no-bundled`: the first --model's first backend instead).
Configurations over the same facets embed the same sample, so each --model configuration also
reports the cosine of its vectors to the fp32 vectors of that model (min and median over the
sample; fp32 onnx and torch agree to 0.99999).

    .venv/bin/python -m bench.embed_cost build/tables/mathlib-stacks --model build/models/<entry> [--fraction 0.01] [--rounds 2]
    .venv/bin/python -m bench.embed_cost build/mathlib/releases/<id> --model build/models/<entry> \
        --no-bundled --backend torch --backend onnx [--int8] [--bf16] --rounds 3
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

from mathindex.cache.layout import CacheLayout
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
    ap.add_argument("--bf16", action="store_true", help="also each --model in bf16 (torch autocast; any --backend runs torch)")
    ap.add_argument("--backend", action="append", default=[], choices=["torch", "onnx"],
                    help="each --model with these embedder backends (default torch)")
    ap.add_argument("--warm", action="store_true",
                    help="start the worker processes before the clock (steady-state rates; a release starts them once)")
    ap.add_argument("--no-bundled", action="store_true", help="leave out the bundled model's configurations")
    ap.add_argument("--onnx-dir", type=Path, default=CacheLayout(Path("build/cache")).onnx, help="where ONNX exports are cached")
    ap.add_argument("--fraction", type=float, default=0.01)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    backends = args.backend or ["torch"]
    configs = [] if args.no_bundled else [("bundled, every facet (before)", None, None, "fp32", "torch"),
                                          ("bundled, embedded facets", None, EMBEDDED_FACETS, "fp32", "torch")]
    precisions = ["fp32"] + ["int8"] * args.int8 + ["bf16"] * args.bf16
    for p in precisions:
        configs += [(f"{Path(m).name}{'' if p == 'fp32' else ' ' + p} {b}, embedded facets", m, EMBEDDED_FACETS, p, b)
                    for m in args.model for b in (backends if p != "bf16" else ["torch"])]
    rng = np.random.default_rng(args.seed)
    by_facets: dict = {}
    for _, _, facets, _, _ in configs:  # one sample per facet set: paired configurations embed the same texts
        if facets not in by_facets:
            d = distinct_texts(args.tables, facets)
            pick = np.sort(rng.choice(d.num_rows, size=max(1, int(d.num_rows * args.fraction)), replace=False))
            by_facets[facets] = (d.num_rows, d.take(pick))
    samples = [by_facets[c[2]] for c in configs]
    rates: list[list[float]] = [[] for _ in configs]
    vectors: list = [None] * len(configs)
    backend_used = [""] * len(configs)
    for r in range(args.rounds):
        for i in [(r + j) % len(configs) for j in range(len(configs))]:  # rotated order
            _, model, _, precision, backend = configs[i]
            embedder = SentenceTransformerEmbedder(model, progress=False, int8=precision == "int8", bf16=precision == "bf16",
                                                   backend=backend, onnx_dir=args.onnx_dir)
            backend_used[i] = embedder.backend
            if args.warm:
                embedder.keep_workers = True
                embedder.pool()
            stats = EmbedStats()
            with tempfile.TemporaryDirectory() as cache:
                t0 = time.perf_counter()
                vectors[i] = embed_texts(samples[i][1], embedder, Path(cache), stats)
                rates[i].append(stats.embedded / (time.perf_counter() - t0))
            embedder.close()
    base_hours = samples[0][0] / statistics.median(rates[0]) / 3600
    print(f"sample fraction {args.fraction} (seed {args.seed}), {args.rounds} rotated rounds; median rates"
          f"{', workers started before the clock' if args.warm else ', worker start-up included'}")
    for i, ((label, model, facets, _, _), (total, sample), rs) in enumerate(zip(configs, samples, rates)):
        rate = statistics.median(rs)
        hours = total / rate / 3600
        ref = next((j for j, c in enumerate(configs) if c[1:4] == (model, facets, "fp32")), None)
        cos = ""
        if ref is not None and ref != i:
            c = (vectors[i] * vectors[ref]).sum(axis=1)
            cos = f"; cosine to {configs[ref][4]} fp32 min {c.min():.7f} median {np.median(c):.7f}"
        ran = "" if backend_used[i] == configs[i][4] else f" (ran {backend_used[i]})"
        print(f"  {label:<44} {total:>8,} distinct texts, sample {sample.num_rows:>6,}: {rate:7.1f} texts/s "
              f"(runs {', '.join(f'{x:.1f}' for x in rs)}) -> {hours * 60:6.1f} min for all "
              f"({base_hours / hours:4.2f}x less){ran}{cos}")


if __name__ == "__main__":
    main()
