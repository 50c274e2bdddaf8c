"""Embedders compared on a fixed candidate pool: MathlibQR dev with the embedding channel alone.

Embedding every Mathlib text takes about 2 h on 2 cores, too long to compare recipes. The pool
(mathindex.evaluation.pool) is every target of the suite plus a seeded sample of other Lean
declarations (`--pool`, default 30,000); each model embeds the pool's texts once (cached under
`--cache` by model revision), then every query is searched exactly. The first `--model` is the
baseline the others are compared with, in points of nDCG@10 and R@10, over all queries, the fair
subset, and per query style.

Usage: .venv/bin/python -m bench.embedder_pool --tables build/tables/mathlib-stacks \
           --model default --model build/models/<name>@<rev> [--pool 30000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from mathindex.cache.layout import CacheLayout
from mathindex.embed import SentenceTransformerEmbedder
from mathindex.embed.texts import EMBEDDED_FACETS
from mathindex.evaluation.pool import pool_metrics, pool_texts
from mathindex.evaluation.suites import load_suite

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=Path, default=ROOT / "build" / "tables" / "mathlib-stacks")
    ap.add_argument("--suite", type=Path, default=ROOT / "bench" / "suites" / "mathlibqr-dev.json")
    ap.add_argument("--model", action="append", default=[], help="'default' or a model path; first is the baseline")
    ap.add_argument("--max-seq-length", type=int, action="append", default=[],
                    help="per --model (0: the model's own); shorter is cheaper")
    ap.add_argument("--facets", action="append", default=[],
                    help="per --model: comma-separated facets to embed and search (default: those a release embeds); same nodes")
    ap.add_argument("--int8", action="append", default=[], help="per --model: 1 to quantise its Linear layers to int8")
    ap.add_argument("--backend", action="append", default=[], choices=["torch", "onnx"],
                    help="per --model: the embedder backend (default torch; onnx exports under CACHE/onnx)")
    ap.add_argument("--pool", type=int, default=30_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=ROOT / "build" / "cache")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    suite = load_suite(args.suite)
    gold = {g for q in suite.queries for g in q.gold}
    all_texts = pool_texts(args.tables, gold, args.pool, args.seed, facets=None)
    print(f"pool: {len(set(all_texts.column('name').to_pylist())):,} nodes, {all_texts.num_rows:,} texts "
          f"({len(gold)} targets, seed {args.seed})")
    models = args.model or ["default"]
    lengths = args.max_seq_length + [0] * (len(models) - len(args.max_seq_length))
    facets = args.facets + [""] * (len(models) - len(args.facets))
    int8 = [x == "1" for x in args.int8] + [False] * (len(models) - len(args.int8))
    backends = args.backend + ["torch"] * (len(models) - len(args.backend))
    results = []
    for model, max_len, only, q8, backend in zip(models, lengths, facets, int8, backends):
        only = only or ",".join(EMBEDDED_FACETS)
        texts = all_texts.filter(pc.is_in(all_texts["facet"], value_set=pa.array(only.split(","), pa.string())))
        embedder = SentenceTransformerEmbedder(None if model == "default" else model, progress=False, int8=q8,
                                               backend=backend, onnx_dir=CacheLayout(args.cache).onnx)
        cache = args.cache
        if max_len:
            embedder.max_seq_length = embedder.model.max_seq_length = max_len
            cache = args.cache / f"maxlen{max_len}"  # other vectors for long texts: another cache
        r = pool_metrics(embedder, texts, [suite], cache)
        embedder.close()
        r["max_seq_length"], r["facets"], r["backend"] = embedder.max_seq_length, only, embedder.backend
        results.append(r)
        report(r, results[0], suite.name)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def report(r: dict, base: dict, name: str) -> None:
    s, b = r["suites"][name], base["suites"][name]

    def pair(cur: dict, ref: dict) -> str:
        return (f"nDCG@10 {cur['ndcg@10']:6.2f} ({cur['ndcg@10'] - ref['ndcg@10']:+6.2f})  "
                f"R@10 {cur['recall@10']:6.2f} ({cur['recall@10'] - ref['recall@10']:+6.2f})")

    rate = f"{r['embedded'] / r['encode_s']:.1f} texts/s" if r["embedded"] else "all cached"
    print(f"\n{r['model']}@{r['revision'][:12]} ({r.get('backend', 'torch')}) max_seq_length {r['max_seq_length']} facets {r['facets']}: "
          f"{r['texts']:,} texts, embedded {r['embedded']:,} "
          f"texts in {r['encode_s']} s ({rate}), {r['query_ms']} ms/query")
    print(f"  all   ({s['queries']}) {pair(s['metrics'], b['metrics'])}")
    if "fair" in s:
        print(f"  fair  ({s['fair']['queries']}) {pair(s['fair'], b['fair'])}")
    for style, m in s["by_style"].items():
        print(f"  {style:<16} ({m['queries']:>3}) {pair(m, b['by_style'][style])}")


if __name__ == "__main__":
    main()
