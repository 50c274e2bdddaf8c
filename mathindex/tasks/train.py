"""Embedder training tasks: mine pairs from a release, train, benchmark on a pool, install with a card."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.embed.embedder import EMBED_BACKEND, SentenceTransformerEmbedder, onnx_dir_for
from mathindex.embed.pairs import frames, mine_pairs, read_release_tables
from mathindex.embed.train import train
from mathindex.evaluation.pool import pool_metrics, pool_of
from mathindex.evaluation.suites import load_suite, project_suite_queries
from mathindex.search.negatives import near_misses
from mathindex.tasks import HOUR_S, stage


@stage(name="mine_pairs")
def mine_training_pairs(release: Path, seed: int, extra_suites: list[Path] = ()) -> tuple[pa.Table, dict]:
    """Leak-free pairs from the release's tables (no query or target of the project's suites, the
    release's, or `extra_suites`), with counts and the suite files kept out."""
    tables = read_release_tables(release)
    queries, targets, files = project_suite_queries(release, extra_suites)
    pairs, info = mine_pairs(tables, queries, targets, seed)
    return pairs, {**info, "excluded_suites": [str(f) for f in files]}


@stage(name="mine_run_pairs")
def mine_run_pairs(tables: dict[str, pa.Table], queries: list[str], targets: set[str], seed: int,
                   kinds: list[str]) -> tuple[pa.Table, dict]:
    """Leak-free pairs of `kinds` from a release run's own tables (`embed.pairs.run_tables`), with counts."""
    return mine_pairs(frames(tables), queries, targets, seed, kinds)


@stage(name="engine_near_misses", timeout_seconds=12 * HOUR_S)
def search_near_misses(release: Path, anchors: list[str], cache_dir: Path | None) -> tuple[dict[str, list[str]], dict]:
    """Each anchor's top hits in `release`'s engine, cached by content (`search.negatives`)."""
    return near_misses(release, anchors, cache_dir)


@stage(name="train_embedder", timeout_seconds=12 * HOUR_S)
def train_model(pairs: pa.Table, base: Path, base_revision: str, work_dir: Path, recipe):
    return train(pairs, base, base_revision, work_dir, recipe)


@stage(name="pool_benchmark", timeout_seconds=4 * HOUR_S)
def pool_benchmark(texts: pa.Table, model_dir: Path | None, suite_paths: list[Path], size: int, seed: int,
                   cache_dir: Path) -> dict | None:
    """The suites' metrics with `model_dir`'s embedding channel alone over a candidate pool drawn
    from the embedding_texts table `texts` (`evaluation.pool.pool_of`); None: no suite."""
    suites = [load_suite(p) for p in suite_paths]
    gold = {g for s in suites for q in s.queries for g in q.gold}
    if not suites or not gold:
        return None
    # the releases' backend: a checked ONNX export gives torch's vectors at about twice the rate
    embedder = SentenceTransformerEmbedder(str(model_dir) if model_dir else None, progress=False, backend=EMBED_BACKEND,
                                           onnx_dir=onnx_dir_for(cache_dir))
    try:
        return pool_metrics(embedder, pool_of(texts, gold, size, seed), suites, cache_dir)
    finally:
        embedder.close()
