"""The int8 HNSW index at Mathlib scale: recall@10 against exact search and memory against float32 flat.

Vectors: the real MiniLM vectors saved by `bench/embed_mathlib.py` (Mathlib sample texts), topped
up to `--total` synthetic ones (Mathlib has about 600 k texts; embedding all of it here takes
hours). `anchored` (default): a real vector plus Gaussian noise with the real covariance, scaled so
that its cosine to the anchor is the median real nearest-neighbour cosine, i.e. new neighbours at
real-data distances, as a denser corpus would bring; `gaussian`: a Gaussian fitted to the real
vectors (no cluster structure: a harsher test than real text).
Recall is measured by `VectorIndex.build` itself (1000 seeded queries, self-match excluded) and
again with the real vectors alone as queries.

    .venv/bin/python -m bench.embed_index [--total 600000] [--M 32] [--ef-construction 80]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mathindex.embed.vector_index import VectorIndex, recall_at_k
from mathindex.embed.truth import exact_neighbours

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


def anchored_like(real: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, float]:
    """`n` unit vectors near random real anchors, at the real median nearest-neighbour cosine."""
    rng = np.random.default_rng(seed)
    sample = rng.choice(len(real), size=min(1000, len(real)), replace=False)
    nn = exact_neighbours(real, real[sample], 2)[1][:, 1]
    c_nn = float(np.median((real[sample] * real[nn]).sum(axis=1)))
    centred = real - real.mean(axis=0)
    cov = np.cov(centred, rowvar=False) + 1e-6 * np.eye(real.shape[1])
    chol = np.linalg.cholesky(cov).astype(np.float32)
    sigma = np.sqrt((1 / c_nn**2 - 1) / np.trace(cov))
    out = np.empty((n, real.shape[1]), dtype=np.float32)
    for start in range(0, n, 50_000):
        m = min(50_000, n - start)
        anchors = real[rng.integers(0, len(real), size=m)]
        x = anchors + sigma * (rng.standard_normal((m, real.shape[1]), dtype=np.float32) @ chol.T)
        out[start : start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out, c_nn


def exhaustive_sq8_recall(vectors: np.ndarray, ids: np.ndarray, q_rows: np.ndarray, exact_ids: np.ndarray) -> float:
    """recall@10 of a brute-force search over the same 8-bit codes: what any graph could reach at best."""
    import faiss

    sq = faiss.IndexScalarQuantizer(vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    sq.train(vectors)
    sq.add(vectors)
    found = ids[sq.search(vectors[q_rows], 11)[1]]
    return recall_at_k(found, exact_ids, ids[q_rows], 10)


def load_rss_mb(index_dir: Path) -> float:
    """Resident-memory growth (MB) of a fresh process that loads the index (no mmap) and runs a search."""
    code = (
        "import sys, os, numpy as np, faiss\n"
        "def rss():\n"
        "    return int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20\n"
        "b = rss(); ix = faiss.read_index(sys.argv[1]); ix.search(np.ones((1, ix.d), dtype='float32'), 10)\n"
        "print(rss() - b)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(index_dir / "vector.index")], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--total", type=int, default=600_000)
    ap.add_argument("--M", type=int, default=32)
    ap.add_argument("--ef-construction", type=int, default=80)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--synthetic", choices=("anchored", "gaussian"), default="anchored")
    args = ap.parse_args()
    if not VECTORS.is_file():
        sys.exit(f"{VECTORS} is missing: run bench/embed_mathlib.py first")
    real = np.load(VECTORS).astype(np.float32)
    extra = max(0, args.total - len(real))
    if args.synthetic == "anchored":
        synth, c_nn = anchored_like(real, extra, 0)
        how = f"anchored synthetic (cosine to anchor ~ real median NN cosine {c_nn:.3f})"
    else:
        synth, how = synthetic_like(real, extra, 0), "Gaussian-fitted synthetic"
    vectors = np.concatenate([real, synth])
    del synth
    ids = np.arange(len(vectors), dtype=np.int64) * 2654435761 % (2**61)  # scattered, unique ids
    print(f"{len(real)} real MiniLM vectors + {extra} {how} = {len(vectors)}")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        built = VectorIndex.build(vectors, ids, INFO, Path(tmp), M=args.M, ef_construction=args.ef_construction,
                                  recall_queries=args.queries)
        build_s = time.perf_counter() - t0
        side = built.sidecar
        del built
        # recall with real vectors as queries, at the chosen efSearch
        q_rows = np.random.default_rng(1).choice(len(real), size=min(args.queries, len(real)), replace=False)
        exact = ids[exact_neighbours(vectors, real[q_rows], 11)[1]]
        loaded_mb = load_rss_mb(Path(tmp))
        index = VectorIndex.open(Path(tmp), INFO, mmap=False)
        t0 = time.perf_counter()
        approx, _ = index.search(real[q_rows], 11)
        search_ms = (time.perf_counter() - t0) * 1000 / len(q_rows)
        real_recall = recall_at_k(approx, exact, ids[q_rows], 10)
        sq8_ceiling = exhaustive_sq8_recall(vectors, ids, q_rows, exact)
        flat_mb = vectors.nbytes / 2**20
        print()
        print("| figure | value |")
        print("|---|---:|")
        print(f"| vectors | {len(vectors)} |")
        print(f"| M / efConstruction / efSearch (chosen) | {side['M']} / {side['ef_construction']} / {side['ef_search']} |")
        print(f"| recall@10 vs IndexFlatIP, build-time sample ({side['recall_queries']} queries) | {side['recall_at_10']:.4f} |")
        print(f"| recall@10 by efSearch | {side['recall_by_ef_search']} |")
        print(f"| recall@10 vs IndexFlatIP, real-vector queries ({len(q_rows)}) | {real_recall:.4f} |")
        print(f"| recall@10 of exhaustive SQ8 search (no graph), same real queries: the quantiser's ceiling | {sq8_ceiling:.4f} |")
        print(f"| index file MB / float32 flat MB | {side['index_bytes'] / 2**20:.1f} / {flat_mb:.1f} = {side['memory_ratio_to_flat']:.1%} |")
        print(f"| RSS growth of a fresh process loading the index (no mmap) MB | {loaded_mb:.1f} ({loaded_mb / flat_mb:.1%} of flat) |")
        print(f"| build + recall measurement s | {build_s:.0f} |")
        print(f"| search ms/query at chosen efSearch | {search_ms:.2f} |")
        print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
