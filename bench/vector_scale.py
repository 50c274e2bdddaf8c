"""The vector index at k times whole Mathlib: build time, peak memory, bytes and recall@10 against
exact search (issue 32, part 4), without embedding k copies of the corpus.

The base is real: the vectors a release's model cached for its texts (whole Mathlib: about 384 k).
Copy c > 0 of each base vector is that vector plus Gaussian noise, renormalised; the noise's scale is
set so that a copy's mean cosine to its original equals the mean cosine between a statement and the
same statement renamed as `bench/scale.py` renames it (`_k1` on every namespace component), measured
with the release's model on 1,000 seeded `name_signature` texts. Copies are generated a block at a
time from a fixed noise bank (`VectorRows`), so no process holds k float32 copies.

Each k builds in its own process with the release's code path (`VectorIndex.build`: IDMap2,HNSW32,SQ8,
efConstruction 80, rows added a block at a time, efSearch chosen on the ladder for 0.99 recall@10
on 1,000 sampled rows against exact search over every row) and reports wall and CPU seconds, peak
RSS, the index bytes against flat float32, and recall@10 per efSearch.

    python -m bench.vector_scale RELEASE_DIR [--ks 1,3,10] [--work build/vector-scale]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BANK = 65_537  # noise vectors in the bank (prime: copy and row spread over it)
CALIBRATION = 1_000
_DOTTED = re.compile(r"(?<![\w.'])((?:[A-Za-z_][\w']*\.)+)([A-Za-z_][\w'!?]*)")


def renamed(text: str, copy: int = 1) -> str:
    """`bench/scale.py`'s renaming of a statement's text: every namespace component of a dotted
    name suffixed `_k<copy>` (`Nat.Prime.two_le` -> `Nat_k1.Prime_k1.two_le`)."""
    return _DOTTED.sub(lambda m: "".join(f"{p}_k{copy}." for p in m.group(1).split(".")[:-1]) + m.group(2), text)


def _model(release: Path) -> Path:
    """The release's embedding model directory (the bundled MiniLM when its manifest names none)."""
    from mathindex.embed.base import default_model_path
    from mathindex.embed.models import reference_path, release_root
    from mathindex.store.integrity import read_manifest

    return reference_path(read_manifest(release).vector_index.model, release_root(release)) or default_model_path()


def base_vectors(release: Path) -> tuple[np.ndarray, str]:
    """The distinct vectors the release's model cached (float32, unit rows; the vectors of the
    release's precision) and the cache directory's name."""
    from mathindex.embed.models import release_root
    from mathindex.store.integrity import read_manifest
    from mathindex.store.layout import RootLayout

    side = read_manifest(release).vector_index
    precision = (side.embedding.precision if side.embedding is not None else None) or "fp32"
    cache = RootLayout(release_root(release)).caches.embeddings("")
    if side.model is None:
        dirs = sorted(cache.glob("sentence-transformers_all-MiniLM-L6-v2*@*"))
    else:
        name, _, rev = Path(side.model).name.partition("@")
        dirs = sorted(cache.glob(f"{name}*@{rev[:16]}*"))
    dirs = [d for d in dirs if (precision in d.name) == (precision != "fp32")] or dirs
    vecs = np.concatenate([np.load(p) for p in sorted(dirs[0].glob("*.vecs.npy"))]).astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True), dirs[0].name


def calibrate(release: Path) -> dict:
    """Mean cosine between a statement and its renamed copy, with the release's model."""
    import polars as pl

    from mathindex.embed import SentenceTransformerEmbedder

    texts = (pl.scan_parquet(release / "embedding_texts.parquet").filter(pl.col("facet") == "name_signature")
             .select("text").collect()["text"])
    pick = texts.sample(min(CALIBRATION, len(texts)), seed=0).to_list()
    emb = SentenceTransformerEmbedder(str(_model(release)), progress=False)
    try:
        a, b = emb.encode(pick), emb.encode([renamed(t) for t in pick])
    finally:
        emb.close()
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    cos = (a * b).sum(axis=1)
    changed = sum(t != renamed(t) for t in pick)
    return {"mean_cosine": float(cos.mean()), "p10_cosine": float(np.quantile(cos, 0.1)), "texts": len(pick),
            "texts_renamed": changed}


def copies(base: np.ndarray, k: int, eps: float):
    """`VectorRows` of k copies of `base`: copy 0 as it is, copy c the noised vector."""
    from mathindex.embed.vector_rows import VectorRows

    n, dim = base.shape
    bank = np.random.default_rng(0).standard_normal((BANK, dim)).astype(np.float32) / np.sqrt(dim)

    def read(positions: np.ndarray) -> np.ndarray:
        positions = np.asarray(positions, dtype=np.int64)
        row, copy = positions % n, positions // n
        out = base[row].copy()
        noisy = copy > 0
        if noisy.any():
            out[noisy] += eps * bank[(row[noisy] * 7_919 + copy[noisy] * 104_729) % BANK]
            out[noisy] /= np.linalg.norm(out[noisy], axis=1, keepdims=True)
        return out

    return VectorRows(n * k, dim, read)


def one(release: Path, k: int, eps: float, out: Path) -> dict:
    """Builds the index of k copies (in this process) and returns its figures."""
    from mathindex.embed.vector_index import INDEX_FILE, VectorIndex

    base, label = base_vectors(release)
    rows = copies(base, k, eps)
    ids = np.arange(len(rows), dtype=np.int64)
    cpu0, t0 = time.process_time(), time.perf_counter()
    built = VectorIndex.build(rows, ids, {"name": label, "revision": "", "dim": base.shape[1]}, out)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    side = built.sidecar
    return {"k": k, "rows": len(rows), "seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "index_mb": round((out / INDEX_FILE).stat().st_size / 2**20, 1), "flat_mb": round(side["flat_float32_bytes"] / 2**20, 1),
            "recall_at_10": side["recall_at_10"], "ef_search": side["ef_search"], "recall_by_ef_search": side["recall_by_ef_search"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--ks", default="1,3,10")
    ap.add_argument("--work", type=Path, default=Path("build/vector-scale"))
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--eps", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.release, args.one, args.eps, args.work / f"k{args.one}")))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    cal = calibrate(args.release)
    eps = float(np.sqrt(1 / cal["mean_cosine"] ** 2 - 1))
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    print(f"CPU: {cpu}, {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    print(f"calibration: a statement and its renamed copy, mean cosine {cal['mean_cosine']:.4f} (p10 "
          f"{cal['p10_cosine']:.4f}, {cal['texts_renamed']} of {cal['texts']} texts renamed); noise scale {eps:.4f}")
    results = []
    for k in [int(x) for x in args.ks.split(",")]:
        got = subprocess.run([sys.executable, "-m", "bench.vector_scale", str(args.release), "--work", str(args.work),
                              "--one", str(k), "--eps", repr(eps)], check=True, capture_output=True, text=True)
        r = json.loads(got.stdout.strip().splitlines()[-1])
        results.append(r)
        print(f"k={k}: {r['rows']:,} vectors, build {r['seconds']} s ({r['cpu_seconds']} CPU s), peak RSS "
              f"{r['peak_rss_mb']:,} MB, index {r['index_mb']} MB (flat fp32 {r['flat_mb']} MB), recall@10 "
              f"{r['recall_at_10']:.4f} at efSearch {r['ef_search']}; by efSearch {r['recall_by_ef_search']}", flush=True)
    (args.work / "vector_scale.json").write_text(json.dumps({"calibration": cal, "eps": eps, "cpu": cpu, "results": results}, indent=1))


if __name__ == "__main__":
    main()
