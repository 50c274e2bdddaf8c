"""Embedding throughput: the pipeline (`embed_texts`) against a bare `SentenceTransformer.encode`.

All paths embed the same Mathlib embedding texts (all facets of a strided file sample, rule
informalisations) given in corpus order, in rotating order within one process: the bare encode,
the pipeline in-process, and the pipeline with single-threaded worker processes. Prints texts/s,
medians, ratios to the bare encode and the minimum cosine to its vectors, text by text.

    .venv/bin/python -m bench.embed_throughput [--decls 900] [--stride 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from bench.common.mathlib_subset import corpus_order_texts, mathlib_subset
from mathindex.embed import SentenceTransformerEmbedder, embed_texts, embedding_texts
from mathindex.informal import RuleInformaliser, informalise
from mathindex.embed.texts import text_sha256


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decls", type=int, default=900)
    ap.add_argument("--stride", type=int, default=40)
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="rounds; each runs all three paths")
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument("--workers", type=int, default=0, help="0: one per core; 1: in-process")
    args = ap.parse_args()

    decls, deps, files = mathlib_subset(args.decls, args.stride, args.offset)
    table = embedding_texts(decls, informalise(decls, RuleInformaliser(), None, deps), None)
    texts = corpus_order_texts(table, decls)
    import pyarrow as pa

    ordered = pa.table({"text": texts, "sha256": [text_sha256(t) for t in texts]})
    emb = SentenceTransformerEmbedder(batch_tokens=args.batch_tokens, workers=args.workers, parallel_min=1,
                                      keep_workers=True, progress=False)
    inproc = SentenceTransformerEmbedder(batch_tokens=args.batch_tokens, workers=1, progress=False)
    model = emb.model
    t0 = time.perf_counter()
    if emb.workers > 1:
        emb.pool()
    pool_s = time.perf_counter() - t0
    print(f"{len(files)} files, {decls.num_rows} declarations, {len(texts)} texts "
          f"({len(set(texts))} distinct), mean {np.mean([len(t) for t in texts]):.0f} chars; torch threads "
          f"{__import__('torch').get_num_threads()}")
    model.encode(texts[:64], normalize_embeddings=True)  # warm-up
    inproc.encode(texts[:64])
    paths = {
        "bare": lambda: model.encode(texts, normalize_embeddings=True, convert_to_numpy=True),
        "in-process": lambda: embed_texts(ordered, inproc, None),
        "workers": lambda: embed_texts(ordered, emb, None),
    }
    times: dict[str, list[float]] = {k: [] for k in paths}
    vectors: dict[str, np.ndarray] = {}
    names = list(paths)
    for r in range(args.repeats):  # rotate the order each round so that drifting load hits every path
        line = []
        for name in names[r % 3:] + names[: r % 3]:
            t0 = time.perf_counter()
            vectors[name] = paths[name]()
            times[name].append(time.perf_counter() - t0)
            line.append(f"{name} {len(texts) / times[name][-1]:6.1f}")
        print(f"  round {r + 1} (texts/s): " + "   ".join(line), flush=True)
    b = statistics.median(times["bare"])
    print()
    print("| path | median s | texts/s | ratio to bare (medians) | min cosine to bare |")
    print("|---|---:|---:|---:|---:|")
    labels = {"bare": "bare SentenceTransformer.encode (batch 32, char-length sort, torch threads)",
              "in-process": "embed_texts, in-process (token-count sort, token-budget batches, dedup)",
              "workers": f"embed_texts, {emb.workers} single-thread worker processes (same batching)"}
    for name in names:
        m = statistics.median(times[name])
        cos = (vectors[name] * vectors["bare"]).sum(axis=1)
        print(f"| {labels[name]} | {m:.1f} | {len(texts) / m:.1f} | {b / m:.2f} | {cos.min():.6f} |")
    print(f"worker start-up, paid once per process: {pool_s:.1f} s; batch token budget {emb.batch_tokens}")
    emb.close()


if __name__ == "__main__":
    main()
