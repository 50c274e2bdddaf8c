"""Embedders compared on a fixed candidate pool: the embedding channel alone, exact search.

Embedding a whole corpus takes hours on 2 cores, too long to compare training recipes. A pool is
every gold node of the suites plus a seeded sample of other nodes; each model embeds the pool's
texts once (cached by model revision), then every query is searched exactly (inner product over
all pool vectors, best text per node) and scored with the suite's own metrics.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mathindex.embed.embedder import EmbedStats, embed_texts
from mathindex.embed.texts import EMBEDDED_FACETS
from mathindex.evaluation.bench import run_suite
from mathindex.evaluation.suites import Suite
from mathindex.search.fusion import best_per_name
from mathindex.store.layout import ReleaseLayout


POOL_COLUMNS = ["node_id", "name", "facet", "text", "sha256"]  # of embedding_texts


def release_texts(release: Path) -> pa.Table:
    """The columns of a release's (or a tables directory's) embedding_texts table a pool needs."""
    return pq.read_table(ReleaseLayout(release).table("embedding_texts"), columns=POOL_COLUMNS)


def pool_texts(release: Path, gold: set[str], size: int, seed: int,
               facets: tuple[str, ...] | None = EMBEDDED_FACETS) -> pa.Table:
    """`pool_of` a release's (or a tables directory's) embedding_texts table."""
    return pool_of(release_texts(release), gold, size, seed, facets)


def pool_of(texts: pa.Table, gold: set[str], size: int, seed: int,
            facets: tuple[str, ...] | None = EMBEDDED_FACETS) -> pa.Table:
    """embedding_texts rows (of `facets`, by default those a release embeds; None: all) of the gold
    nodes plus `size` other nodes drawn with `seed` among the nodes of the gold's sources (a Lean
    suite's pool holds Lean declarations only)."""
    texts = texts.select(POOL_COLUMNS)
    if facets is not None:
        texts = texts.filter(pc.is_in(texts["facet"], value_set=pa.array(facets, pa.string())))
    source = pc.utf8_slice_codeunits(texts["node_id"], 0, 4)  # "lean" or "tex:"
    gold_sources = pc.unique(pc.filter(source, pc.is_in(texts["name"], value_set=pa.array(sorted(gold), pa.string()))))
    if len(gold_sources):
        texts = texts.filter(pc.is_in(source, value_set=gold_sources))
    names = sorted(set(texts.column("name").to_pylist()))
    others = [n for n in names if n not in gold]
    chosen = set(random.Random(seed).sample(others, min(size, len(others)))) | (gold & set(names))
    return texts.filter(pc.is_in(texts["name"], value_set=pa.array(sorted(chosen), pa.string())))


def pool_metrics(embedder, texts: pa.Table, suites: list[Suite], cache_dir: Path | None) -> dict:
    """Embeds the pool (cache-aware) and every query; returns per-suite run_suite summaries and costs."""
    stats = EmbedStats()
    vecs = embed_texts(texts, embedder, cache_dir, stats)
    names = texts.column("name").to_pylist()
    out: dict = {"model": embedder.name, "revision": embedder.revision, "texts": texts.num_rows,
                 "nodes": len(set(names)), "embedded": stats.embedded, "encode_s": round(stats.encode_seconds, 1),
                 "suites": {}}
    for suite in suites:
        queries = [q.text for q in suite.queries]
        t = time.perf_counter()
        qv = embedder.encode(queries)
        out.setdefault("query_ms", round((time.perf_counter() - t) / max(1, len(queries)) * 1000, 1))
        scores = qv @ vecs.T
        top = np.argsort(-scores, axis=1)[:, : suite.k * 4]
        ranked = {q: [n for n, _ in best_per_name([(names[j], float(scores[i, j])) for j in top[i]])]
                  for i, q in enumerate(queries)}
        out["suites"][suite.name], _ = run_suite(lambda q, k, r=ranked: r[q][:k], suite)
    return out


def compare_lines(after: dict, before: dict) -> list[str]:
    """Markdown-ready lines: each suite's headline metrics (all, fair, per style), after vs before."""
    lines = []
    for name, s in after["suites"].items():
        b = before["suites"].get(name)
        if b is None:
            continue
        metrics = list(s["metrics"])
        rows = [("all", s["queries"], s["metrics"], b["metrics"])]
        if "fair" in s and "fair" in b:
            rows.append(("fair", s["fair"]["queries"], s["fair"], b["fair"]))
        rows += [(st, m["queries"], m, b["by_style"].get(st, {})) for st, m in s["by_style"].items()]
        lines.append(f"| {name} | queries | " + " | ".join(f"{m} before | {m} after" for m in metrics) + " |")
        lines.append("|---|---|" + "---|---|" * len(metrics))
        for label, n, cur, ref in rows:
            cells = " | ".join(f"{ref.get(m, float('nan')):.2f} | {cur[m]:.2f}" for m in metrics)
            lines.append(f"| {label} | {n} | {cells} |")
        lines.append("")
    return lines
