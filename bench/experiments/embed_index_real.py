"""The int8 HNSW index on real Mathlib vectors only: every vector in an embedding cache directory.

`bench/embed_index.py` tops real vectors up with synthetic ones to reach 600 k; this reads only
real MiniLM vectors (whatever a Mathlib embedding run has cached so far) and builds the release's
index over them, which measures recall@10 against exact search (IndexFlatIP, 1,000 sampled
queries, self-match excluded) and memory against a float32 flat index.

Usage: .venv/bin/python -m bench.experiments.embed_index_real CACHE_MODEL_DIR [--limit N]
  (CACHE_MODEL_DIR: ROOT/cache/embeddings/<model>@<revision16>)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from mathindex.embed import VectorIndex


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache_dir", type=Path)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    vecs = [np.load(p) for p in sorted(args.cache_dir.glob("*.vecs.npy"))]
    vectors = np.ascontiguousarray(np.concatenate(vecs), dtype=np.float32)
    if args.limit:
        vectors = vectors[: args.limit]
    ids = np.arange(len(vectors), dtype=np.int64)
    info = {"name": "sentence-transformers/all-MiniLM-L6-v2", "revision": "", "dim": vectors.shape[1], "normalised": True}
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        index = VectorIndex.build(vectors, ids, info, Path(tmp))
        build_s = time.perf_counter() - t
        side = index.sidecar
    print(f"real vectors                 {len(vectors):>10,}")
    print(f"build + recall measurement s {build_s:>10.1f}")
    print(f"efSearch chosen              {side['ef_search']:>10}")
    print(f"recall@10 vs exact           {side['recall_at_10']:>10.4f}   (target >= 0.99)")
    print("recall by efSearch           " + ", ".join(f"{k}: {v:.4f}" for k, v in side["recall_by_ef_search"].items()))
    print(f"index bytes / float32 flat   {side['memory_ratio_to_flat']:>10.3f}   (target <= 0.50)")


if __name__ == "__main__":
    main()
