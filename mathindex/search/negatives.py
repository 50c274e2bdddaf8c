"""The fused engine's near-misses for training anchors: a built release's top hits for each anchor,
from which the trainer's hard negatives are chosen (`embed.pairs.engine_negatives`).

The top DEPTH names per anchor are cached by content under the root's cache
(`CacheLayout.negatives`): one folder per engine (the release's files by their manifest digests,
its model, the engine's code, the depth), rows keyed by the anchor's sha256. Anchors the cache
lacks are searched in batches of BATCH, each batch written as one shard once searched, so an
interrupted run resumes by batch and a later run on the same release searches nothing again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.cache.codes import NEGATIVES
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import ShardStore, cut_by_key
from mathindex.search.engine import SearchEngine
from mathindex.store.integrity import read_manifest

log = logging.getLogger(__name__)

DEPTH = 10  # hits kept per anchor: the positive, its same-fact partners and held-out targets are skipped
BATCH = 1000  # anchors searched and written per shard
MAX_SHARDS = 64  # more are merged into one
HITS = pa.schema([pa.field("key", pa.string(), nullable=False), pa.field("hits", pa.list_(pa.string()))])


def anchor_key(anchor: str) -> str:
    return hashlib.sha256(anchor.encode("utf-8")).hexdigest()


def engine_key(release: Path) -> str:
    """sha256 of what the engine's answers depend on: the release's files (by the sha256 its
    manifest records), its model, the engine's code (`cache.codes.NEGATIVES`) and DEPTH."""
    manifest = read_manifest(Path(release))
    return hashlib.sha256(json.dumps({"files": manifest.files, "model": manifest.vector_index.model,
                                      "code": NEGATIVES.digest(), "depth": DEPTH}, sort_keys=True).encode()).hexdigest()


def near_misses(release: Path, anchors: list[str], cache_dir: Path | None,
                progress: Callable[[int, int], None] | None = None) -> tuple[dict[str, list[str]], dict]:
    """anchor -> the names of its top DEPTH hits in `release`'s engine (each anchor once), from the
    cache under `cache_dir` or searched now in batches; with counts (anchors, cached, searched) and
    the seconds spent opening the engine and searching."""
    keys = {anchor_key(a): a for a in anchors}
    folder = CacheLayout(cache_dir).negatives(engine_key(release)) if cache_dir is not None else None
    store = ShardStore(folder, HITS, max_shards=MAX_SHARDS)
    found = {k: list(h or []) for k, h in store.load(pl.Series(sorted(keys), dtype=pl.String)).iter_rows()}
    todo = pl.DataFrame({"key": sorted(set(keys) - set(found))}, schema={"key": pl.String})
    stats = {"anchors": len(keys), "cached": len(found), "searched": todo.height, "open_s": 0.0, "search_s": 0.0}
    if todo.height:
        t0 = time.perf_counter()
        engine = SearchEngine(Path(release))
        stats["open_s"] = round(time.perf_counter() - t0, 1)
        t0, done = time.perf_counter(), 0
        for _, _, part in cut_by_key(todo, BATCH):
            rows = [(k, engine.names(keys[k], DEPTH)) for k in part.column("key").to_pylist()]
            store.put(pl.DataFrame(rows, schema={"key": pl.String, "hits": pl.List(pl.String)}, orient="row"))
            found.update(rows)
            done += len(rows)
            log.info("engine negatives: %d of %d anchors searched", done, todo.height)
            if progress is not None:
                progress(done, todo.height)
        stats["search_s"] = round(time.perf_counter() - t0, 1)
        store.compact()
    return {a: found[k] for k, a in keys.items()}, stats


__all__ = ["BATCH", "DEPTH", "HITS", "anchor_key", "engine_key", "near_misses"]
