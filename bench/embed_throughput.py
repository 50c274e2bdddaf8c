"""Embedding throughput: the pipeline (`embed_texts`) against a bare `SentenceTransformer.encode`.

Both embed the same Mathlib embedding texts (all facets of a strided file sample, rule
informalisations) in corpus order, alternating runs in one process; prints texts/s, medians,
the ratio, and the minimum cosine between the two vectors of each text.

    .venv/bin/python bench/embed_throughput.py [--decls 1500] [--stride 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from embed_corpus import corpus_order_texts, mathlib_subset  # noqa: E402
from mathindex.embed import RuleInformaliser, SentenceTransformerEmbedder, embed_texts, embedding_texts, informalise  # noqa: E402
from mathindex.embed.texts import text_sha256  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decls", type=int, default=1500)
    ap.add_argument("--stride", type=int, default=40)
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument("--workers", type=int, default=0, help="0: one per core; 1: in-process")
    args = ap.parse_args()

    decls, deps, files = mathlib_subset(args.decls, args.stride, args.offset)
    table = embedding_texts(decls, informalise(decls, RuleInformaliser(), None, deps), None)
    texts = corpus_order_texts(table, decls)
    import pyarrow as pa

    ordered = pa.table({"text": texts, "sha256": [text_sha256(t) for t in texts]})
    emb = SentenceTransformerEmbedder(batch_tokens=args.batch_tokens, workers=args.workers, parallel_min=1, progress=False)
    model = emb.model
    t0 = time.perf_counter()
    if emb.workers > 1:
        emb.pool()
    pool_s = time.perf_counter() - t0
    print(f"{len(files)} files, {decls.num_rows} declarations, {len(texts)} texts "
          f"({len(set(texts))} distinct), mean {np.mean([len(t) for t in texts]):.0f} chars; torch threads "
          f"{__import__('torch').get_num_threads()}")
    model.encode(texts[:64], normalize_embeddings=True)  # warm-up, both paths share the model
    bare_s, ours_s = [], []
    for r in range(args.repeats):  # alternate the order (ABBA...) so that drifting load hits both
        for which in (("bare", "ours") if r % 2 == 0 else ("ours", "bare")):
            t0 = time.perf_counter()
            if which == "bare":
                bare = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
                bare_s.append(time.perf_counter() - t0)
            else:
                ours = embed_texts(ordered, emb, None)
                ours_s.append(time.perf_counter() - t0)
        print(f"  run {r + 1}: bare {len(texts) / bare_s[-1]:7.1f} texts/s   pipeline {len(texts) / ours_s[-1]:7.1f} texts/s   ratio {bare_s[-1] / ours_s[-1]:.2f}")
    cos = (bare * ours).sum(axis=1)
    b, o = statistics.median(bare_s), statistics.median(ours_s)
    print()
    print("| path | median s | texts/s | ratio to bare |")
    print("|---|---:|---:|---:|")
    print(f"| bare SentenceTransformer.encode (batch 32) | {b:.1f} | {len(texts) / b:.1f} | 1.00 |")
    print(f"| pipeline embed_texts (token-budget batches, dedup) | {o:.1f} | {len(texts) / o:.1f} | {b / o:.2f} |")
    print(f"pipeline workers: {emb.workers} (start-up, paid once per process: {pool_s:.1f} s); "
          f"batch token budget {emb.batch_tokens}")
    emb.close()
    print(f"min cosine text by text: {cos.min():.6f}   (texts below 0.9999: {(cos < 0.9999).sum()})")


if __name__ == "__main__":
    main()
