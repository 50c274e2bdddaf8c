"""Whole-corpus embedding rate from a uniform random sample of a release's distinct texts.

A release records what its own embed stage did (`manifest.json` -> vector_index.embedding: texts
embedded, cache hits, encode seconds); a release that resumed an interrupted run embedded only the
rest. This script embeds a seeded uniform sample of all the release's distinct texts through the
pipeline (`embed_texts`, empty cache, the release's default embedder) and projects the time for
every distinct text, printed beside the release's own record.

    .venv/bin/python -m bench.experiments.embed_release_rate RELEASE_DIR [--fraction 0.02] [--seed 0]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mathindex.store.integrity import read_manifest
from mathindex.embed import EmbedStats, SentenceTransformerEmbedder, embed_texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--fraction", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    manifest = read_manifest(args.release)
    texts = pq.read_table(args.release / "embedding_texts.parquet", columns=["text", "sha256", "facet"])
    _, first = np.unique(texts.column("sha256").to_numpy(zero_copy_only=False), return_index=True)
    distinct = texts.take(np.sort(first))
    rng = np.random.default_rng(args.seed)
    pick = np.sort(rng.choice(distinct.num_rows, size=int(distinct.num_rows * args.fraction), replace=False))
    sample = distinct.take(pick)
    embedder = SentenceTransformerEmbedder(progress=False)
    stats = EmbedStats()
    with tempfile.TemporaryDirectory() as cache:
        t0 = time.perf_counter()
        embed_texts(sample, embedder, Path(cache), stats)
        wall = time.perf_counter() - t0
    rate = stats.embedded / wall
    print(f"sample: {stats.embedded:,} of {distinct.num_rows:,} distinct texts (seed {args.seed}), "
          f"facets {dict(zip(*(a.tolist() for a in np.unique(sample.column('facet').to_numpy(zero_copy_only=False), return_counts=True))))}")
    print(f"  pipeline (empty cache): {wall:.0f} s, {rate:.1f} texts/s; mean {np.mean(pc.utf8_length(sample.column('text')).to_numpy()):.0f} chars")
    print(f"  projection for all {distinct.num_rows:,} distinct texts: {distinct.num_rows / rate / 3600:.2f} h")
    rec = manifest.vector_index.embedding
    if rec is not None and rec.embedded:
        print(f"release {args.release.name} embed stage: {rec.embedded:,} embedded in {rec.encode_seconds:.0f} s "
              f"({rec.embedded / rec.encode_seconds:.1f} texts/s), {rec.cached:,} from the cache")


if __name__ == "__main__":
    main()
