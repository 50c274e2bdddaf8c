"""Embedders compared on a fixed candidate pool: MathlibQR dev with the embedding channel alone.

Embedding every Mathlib text takes about 2 h on 2 cores, too long to compare recipes. The pool is
every target of the suite plus a seeded sample of other Lean declarations (`--pool`, default
30,000); each model embeds the pool's texts once (cached under `--cache` by model revision), then
every query is searched exactly (inner product over all pool vectors, best text per node). The
first `--model` is the baseline the others are compared with, in points of nDCG@10 and R@10, over
all queries, the fair subset, and per query style.

Usage: .venv/bin/python bench/embedder_pool.py --tables build/tables/mathlib-stacks \
           --model default --model build/models/<name>@<rev> [--pool 30000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mathindex.embed import SentenceTransformerEmbedder
from mathindex.embed.embedder import EmbedStats, embed_texts
from mathindex.evaluation.bench import run_suite
from mathindex.evaluation.suites import load_suite
from mathindex.search.fusion import best_per_name

ROOT = Path(__file__).resolve().parent.parent


def pool_texts(tables: Path, gold: set[str], size: int, seed: int):
    """embedding_texts rows of the gold nodes plus `size` other Lean nodes drawn with `seed`."""
    texts = pq.read_table(tables / "embedding_texts.parquet", columns=["node_id", "name", "facet", "text", "sha256"])
    lean = texts.filter(pc.starts_with(texts["node_id"], "lean:"))
    names = sorted(set(lean.column("name").to_pylist()))
    others = [n for n in names if n not in gold]
    chosen = set(random.Random(seed).sample(others, min(size, len(others)))) | (gold & set(names))
    return lean.filter(pc.is_in(lean["name"], value_set=pa.array(sorted(chosen))))


def evaluate(model: str | None, texts, suite, cache: Path, max_seq_length: int | None, k: int = 10) -> dict:
    """Embeds the pool and the queries with `model`; returns run_suite's summary plus timings."""
    embedder = SentenceTransformerEmbedder(model, progress=False)
    cache_dir = cache
    if max_seq_length:
        embedder.max_seq_length = max_seq_length
        embedder.model.max_seq_length = max_seq_length
        cache_dir = cache / f"maxlen{max_seq_length}"  # other vectors for long texts: another cache
    stats = EmbedStats()
    vecs = embed_texts(texts, embedder, cache_dir, stats)
    embedder.close()
    names = texts.column("name").to_pylist()
    queries = [q.text for q in suite.queries]
    t = time.perf_counter()
    qv = embedder.encode(queries)
    q_ms = (time.perf_counter() - t) / len(queries) * 1000
    scores = qv @ vecs.T
    top = np.argsort(-scores, axis=1)[:, : k * 4]
    ranked = {q: [n for n, _ in best_per_name([(names[j], float(scores[i, j])) for j in top[i]])][:k]
              for i, q in enumerate(queries)}
    summary, _ = run_suite(lambda q, kk: ranked[q][:kk], suite)
    return {"model": embedder.name, "revision": embedder.revision[:12], "max_seq_length": embedder.max_seq_length,
            "texts": texts.num_rows, "embedded": stats.embedded, "encode_s": round(stats.encode_seconds, 1),
            "texts_per_s": round(stats.embedded / stats.encode_seconds, 1) if stats.embedded else None,
            "query_ms": round(q_ms, 1), "summary": summary}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=Path, default=ROOT / "build" / "tables" / "mathlib-stacks")
    ap.add_argument("--suite", type=Path, default=ROOT.parent / "shared" / "bench" / "mathlibqr-dev.json")
    ap.add_argument("--model", action="append", default=[], help="'default' or a model path; first is the baseline")
    ap.add_argument("--max-seq-length", type=int, action="append", default=[],
                    help="per --model (0: the model's own); shorter is cheaper")
    ap.add_argument("--pool", type=int, default=30_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=ROOT / "build" / "cache")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    suite = load_suite(args.suite)
    gold = {g for q in suite.queries for g in q.gold}
    texts = pool_texts(args.tables, gold, args.pool, args.seed)
    print(f"pool: {len(set(texts.column('name').to_pylist())):,} nodes, {texts.num_rows:,} texts "
          f"({len(gold)} targets, seed {args.seed})")
    models = args.model or ["default"]
    lengths = args.max_seq_length + [0] * (len(models) - len(args.max_seq_length))
    results = []
    for model, max_len in zip(models, lengths):
        r = evaluate(None if model == "default" else model, texts, suite, args.cache, max_len or None)
        results.append(r)
        report(r, results[0])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def report(r: dict, base: dict) -> None:
    s, b = r["summary"], base["summary"]

    def pair(cur: dict, ref: dict) -> str:
        return (f"nDCG@10 {cur['ndcg@10']:6.2f} ({cur['ndcg@10'] - ref['ndcg@10']:+6.2f})  "
                f"R@10 {cur['recall@10']:6.2f} ({cur['recall@10'] - ref['recall@10']:+6.2f})")

    print(f"\n{r['model']}@{r['revision']} max_seq_length {r['max_seq_length']}: embedded {r['embedded']:,} texts "
          f"in {r['encode_s']} s ({r['texts_per_s']} texts/s), {r['query_ms']} ms/query")
    print(f"  all   ({s['queries']}) {pair(s['metrics'], b['metrics'])}")
    if "fair" in s:
        print(f"  fair  ({s['fair']['queries']}) {pair(s['fair'], b['fair'])}")
    for style, m in s["by_style"].items():
        print(f"  {style:<16} ({m['queries']:>3}) {pair(m, b['by_style'][style])}")


if __name__ == "__main__":
    main()
