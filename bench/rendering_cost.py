"""The embed stage's cost of embedding the informal channel's renderings, against the vector texts.

A release's embed stage embeds two sets into the root's embedding cache: the vector index's texts
(`embed.texts.EMBEDDED_FACETS`) and, since the renderings moved there from query time, every
rendering the informal channel ranks by (`search.informal.rendering_texts`). This benchmark embeds a
seeded uniform sample of each set's distinct texts of a release (empty cache, the release's fp32
ONNX embedder and worker processes, rotated rounds so the machine's noise falls on both alike) and
prints the median ms per text, the ratio of renderings to vector texts, and the projection for the
whole release: its distinct renderings times the rendering rate (what the embed stage now adds),
beside its vector texts times their rate (checked against the manifest's `encode_seconds`).

    .venv/bin/python -m bench.rendering_cost build/mathlib/releases/<id> --sample 1500 --rounds 2 \
        --onnx-dir build/mathlib/cache/onnx
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from mathindex.cache.layout import CacheLayout
from mathindex.embed import EmbedStats, SentenceTransformerEmbedder, embed_texts
from mathindex.embed.embedder import EMBED_BACKEND
from mathindex.embed.texts import EMBEDDED_FACETS
from mathindex.search.informal import rendering_texts
from mathindex.store.layout import ReleaseLayout


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def distinct(texts: pl.Series) -> pl.Series:
    return texts.unique(maintain_order=True)


def sets(release: Path) -> dict[str, pl.Series]:
    """The distinct texts of each set the embed stage embeds, in the table's order."""
    table = pl.read_parquet(ReleaseLayout(release).table("embedding_texts"), columns=["name", "facet", "text"])
    return {"renderings": distinct(rendering_texts(table).get_column("text")),
            "vector texts": distinct(table.filter(pl.col("facet").is_in(list(EMBEDDED_FACETS))).get_column("text"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path, help="a release directory (its embedding_texts.parquet and manifest)")
    ap.add_argument("--sample", type=int, default=1500, help="texts sampled from each set (default 1500)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--onnx-dir", type=Path, default=CacheLayout(Path("build/cache")).onnx,
                    help="where the model's ONNX export is cached (made there when missing)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    whole = sets(args.release)
    samples = {k: pa.table({"text": v.gather(np.sort(rng.choice(len(v), size=min(args.sample, len(v)), replace=False)))
                            .to_arrow()}) for k, v in whole.items()}
    ms: dict[str, list[float]] = {k: [] for k in samples}
    names = list(samples)
    for r in range(args.rounds):
        for name in names[r % 2:] + names[: r % 2]:  # rotated order
            embedder = SentenceTransformerEmbedder(None, progress=False, backend=EMBED_BACKEND, onnx_dir=args.onnx_dir)
            stats = EmbedStats()
            with tempfile.TemporaryDirectory() as cache:
                t0 = time.perf_counter()
                embed_texts(samples[name], embedder, Path(cache), stats)
                ms[name].append(1000 * (time.perf_counter() - t0) / max(stats.embedded, 1))
            embedder.close()
    manifest = json.loads(ReleaseLayout(args.release).manifest.read_text())
    run = manifest.get("vector_index", {}).get("embedding", {})
    print(f"{cpu_model()}, {args.rounds} rotated rounds, sample {args.sample} of each set (seed {args.seed}), "
          "worker start-up included; median ms per text")
    for name in names:
        m = statistics.median(ms[name])
        chars = statistics.median(pl.from_arrow(samples[name].column("text")).str.len_chars().to_list())
        print(f"  {name:<13} {len(whole[name]):>9,} distinct, median {chars:5.0f} chars: {m:6.2f} ms/text "
              f"(runs {', '.join(f'{x:.2f}' for x in ms[name])}) -> {len(whole[name]) * m / 60000:6.1f} min for all")
    ratio = statistics.median(ms["renderings"]) / statistics.median(ms["vector texts"])
    print(f"  renderings / vector texts, per text: {ratio:.2f}x")
    if run.get("encode_seconds") and run.get("embedded"):
        print(f"  the release's own embed run: {run['embedded']:,} vector texts in {run['encode_seconds'] / 60:.1f} min "
              f"({1000 * run['encode_seconds'] / run['embedded']:.2f} ms/text)")


if __name__ == "__main__":
    main()
