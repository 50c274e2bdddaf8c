"""The int8 HNSW index at Mathlib scale: recall@10 against exact search and memory against float32 flat.

Vectors: the real MiniLM vectors saved by `bench/embed_mathlib.py` (Mathlib sample texts), topped
up to `--total` with synthetic vectors drawn from a Gaussian with the real vectors' mean and
covariance, normalised (Mathlib has about 600 k texts; embedding all of it here takes hours).
Recall is measured by `VectorIndex.build` itself (1000 seeded queries, self-match excluded) and
again with the real vectors alone as queries.

    .venv/bin/python bench/embed_index.py [--total 600000] [--M 32] [--ef-construction 80]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from mathindex.embed.index import VectorIndex, exact_neighbours, recall_at_k  # noqa: E402

VECTORS = Path(__file__).resolve().parents[1] / "build" / "bench" / "embed_mathlib_vectors.npy"
INFO = {"name": "sentence-transformers/all-MiniLM-L6-v2", "revision": "bench", "dim": 384}


def synthetic_like(real: np.ndarray, n: int, seed: int) -> np.ndarray:
    """`n` unit vectors from a Gaussian fitted to `real` (mean and full covariance)."""
    rng = np.random.default_rng(seed)
    mean = real.mean(axis=0)
    cov = np.cov(real, rowvar=False) + 1e-6 * np.eye(real.shape[1])
    chol = np.linalg.cholesky(cov).astype(np.float32)
    out = np.empty((n, real.shape[1]), dtype=np.float32)
    for start in range(0, n, 50_000):
        m = min(50_000, n - start)
        x = mean + rng.standard_normal((m, real.shape[1]), dtype=np.float32) @ chol.T
        out[start : start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--total", type=int, default=600_000)
    ap.add_argument("--M", type=int, default=32)
    ap.add_argument("--ef-construction", type=int, default=80)
    ap.add_argument("--queries", type=int, default=1000)
    args = ap.parse_args()
    if not VECTORS.is_file():
        sys.exit(f"{VECTORS} is missing: run bench/embed_mathlib.py first")
    real = np.load(VECTORS).astype(np.float32)
    vectors = np.concatenate([real, synthetic_like(real, max(0, args.total - len(real)), 0)])
    ids = np.arange(len(vectors), dtype=np.int64) * 2654435761 % (2**61)  # scattered, unique ids
    print(f"{len(real)} real MiniLM vectors + {len(vectors) - len(real)} Gaussian-fitted synthetic = {len(vectors)}")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        built = VectorIndex.build(vectors, ids, INFO, Path(tmp), M=args.M, ef_construction=args.ef_construction,
                                  recall_queries=args.queries)
        build_s = time.perf_counter() - t0
        side = built.sidecar
        del built
        # recall with real vectors as queries, at the chosen efSearch
        q_rows = np.random.default_rng(1).choice(len(real), size=min(args.queries, len(real)), replace=False)
        exact = ids[exact_neighbours(vectors, real[q_rows], 11)]
        before = rss_mb()
        index = VectorIndex.open(Path(tmp), INFO, mmap=False)
        loaded_mb = rss_mb() - before
        t0 = time.perf_counter()
        approx, _ = index.search(real[q_rows], 11)
        search_ms = (time.perf_counter() - t0) * 1000 / len(q_rows)
        real_recall = recall_at_k(approx, exact, ids[q_rows], 10)
        flat_mb = vectors.nbytes / 2**20
        print()
        print("| figure | value |")
        print("|---|---:|")
        print(f"| vectors | {len(vectors)} |")
        print(f"| M / efConstruction / efSearch (chosen) | {side['M']} / {side['ef_construction']} / {side['ef_search']} |")
        print(f"| recall@10 vs IndexFlatIP, build-time sample ({side['recall_queries']} queries) | {side['recall_at_10']:.4f} |")
        print(f"| recall@10 by efSearch | {side['recall_by_ef_search']} |")
        print(f"| recall@10 vs IndexFlatIP, real-vector queries ({len(q_rows)}) | {real_recall:.4f} |")
        print(f"| index file MB / float32 flat MB | {side['index_bytes'] / 2**20:.1f} / {flat_mb:.1f} = {side['memory_ratio_to_flat']:.1%} |")
        print(f"| RSS growth on loading the index (no mmap) MB | {loaded_mb:.1f} ({loaded_mb / flat_mb:.1%} of flat) |")
        print(f"| build + recall measurement s | {build_s:.0f} |")
        print(f"| search ms/query at chosen efSearch | {search_ms:.2f} |")
        print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
