"""The embed stage as content-keyed shards: which distinct texts a run must embed, cut into shards
(`plan_shards`), and one shard embedded and stored in the root's embedding cache by whichever
process runs it (`embed_shard`: a task runner's thread or a Dask worker, each loading its embedder
once). A row's vector does not depend on its shard or its batch (ONNX and torch embed each row
alone: the same bytes for the sample's 486 texts in one call, two calls, shuffled halves or one
thread), so the release is the same whatever ran the shards; the index reads them back from the cache.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass, field, replace

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import RunMarks, ShardDone, worker_id
from mathindex.embed.base import EmbedderError
from mathindex.embed.embedder import EmbeddingCache, SentenceTransformerEmbedder, text_keys
from mathindex.embed.models import entry_name

log = logging.getLogger(__name__)

SHARD_TEXTS = 20_000  # distinct texts a shard embeds: about 4 min of one core for MiniLM on whole Mathlib's texts


@dataclass(frozen=True)
class EmbedderSpec:
    """What any process needs to load the flow's embedder (`load_embedder`): the model directory
    (None: the bundled one), backend, ONNX export directory and precision; `name` is the name the
    flow's own embedder got, checked in every other process, so vectors of another model (an ONNX
    export that failed its check there) never enter the cache under this one's name."""

    path: str | None
    backend: str
    onnx_dir: str
    int8: bool = False
    bf16: bool = False
    workers: int = 1  # 1: in this process; 0: a process pool of one per core for shards of parallel_min texts or more
    threads: int = 0  # intra-op threads of an in-process onnx run (0: torch's), set on every load
    name: str = ""
    revision: str = ""

    def named(self, embedder) -> "EmbedderSpec":
        """This spec with the name and revision `embedder` (the flow's, loaded from it) got."""
        return replace(self, name=embedder.name, revision=embedder.revision)


_LOADED: dict[EmbedderSpec, SentenceTransformerEmbedder] = {}
_LOAD_LOCK = threading.Lock()


def load_embedder(spec: EmbedderSpec) -> SentenceTransformerEmbedder:
    """The embedder `spec` describes, loaded once per process (the last spec's kept: a worker runs
    every shard of a stage with it); an EmbedderError when it is not the one `spec.name` says."""
    key = replace(spec, name="", revision="", threads=0)
    with _LOAD_LOCK:
        if key not in _LOADED:
            _LOADED.clear()
            _LOADED[key] = SentenceTransformerEmbedder(spec.path, backend=spec.backend, onnx_dir=spec.onnx_dir,
                                                       int8=spec.int8, bf16=spec.bf16, workers=spec.workers,
                                                       threads=spec.threads, progress=False)
        embedder = _LOADED[key]
        embedder.threads = spec.threads
    if spec.name and (embedder.name, embedder.revision) != (spec.name, spec.revision):
        raise EmbedderError(f"worker {worker_id()} loaded embedder {embedder.name}@{embedder.revision[:16]}, not "
                            f"the flow's {spec.name}@{spec.revision[:16]} (its ONNX export failed its check there?)")
    return embedder


@dataclass(frozen=True)
class EmbedShard:
    """Distinct texts to embed, sorted by (length, sha256), and their raw sha256 keys; `key` names
    the cache shard they are stored as (`EmbeddingCache.add`: the sha256 of the sorted keys)."""

    index: int
    key: str
    keys: bytes = field(repr=False)  # the S32 keys, concatenated, in text order
    texts: pa.StringArray = field(repr=False, compare=False)  # Arrow, not Python strings: a plan holds every missing text (`key` names them)

    def raw_keys(self) -> np.ndarray:
        return np.frombuffer(self.keys, dtype="S32")



def missing_texts(texts: pa.Table, cache: EmbeddingCache, keys: np.ndarray | None = None) -> tuple[np.ndarray, pa.StringArray]:
    """(sorted S32 keys, texts) of the distinct texts of `texts` (a `text` column; `sha256` if
    present; `keys`: its `text_keys` when the caller has them) the cache lacks, shortest text first
    (ties by key). Only the cache's keys are read (`EmbeddingCache.contains`)."""
    if texts.num_rows == 0:
        return np.zeros(0, dtype="S32"), pa.array([], pa.string())
    uniq, first = np.unique(text_keys(texts) if keys is None else keys, return_index=True)
    todo = np.flatnonzero(~cache.contains(uniq))
    col = texts.column("text").cast(pa.string()).take(pa.array(first[todo].astype(np.int64)))
    order = np.argsort(pc.utf8_length(col).to_numpy(zero_copy_only=False), kind="stable")
    return uniq[todo][order], col.take(pa.array(order)).combine_chunks()


def plan_shards(keys: np.ndarray, texts: pa.StringArray, shard_texts: int = SHARD_TEXTS, spread: int = 1) -> list[EmbedShard]:
    """`keys`/`texts` (as `missing_texts` orders them) cut into shards of `shard_texts`, or fewer
    so that there are at least `spread` shards (one a core of a local run), each named by its
    content: the same texts give the same shards whatever runs them."""
    shard_texts = max(1, min(shard_texts, -(-len(texts) // max(1, spread))))
    shards = []
    for i, start in enumerate(range(0, len(texts), shard_texts)):
        part = keys[start : start + shard_texts]
        key = hashlib.sha256(np.sort(part).tobytes()).hexdigest()[:20]
        own = texts.take(pa.array(np.arange(start, start + len(part))))  # its own buffers: a pickled slice carries all
        shards.append(EmbedShard(i, key, part.tobytes(), own))
    return shards


def embed_shard(shard: EmbedShard, spec: EmbedderSpec, cache_dir: Path) -> ShardDone:
    """Embeds one shard with `spec`'s embedder into the embedding cache under `cache_dir` (skipped
    when that cache shard is there already: a rerun after a lost worker that had stored it), marking
    its run before anything else (the embedder's first load in a worker takes seconds) so that a
    rerun names a lost one (`RunMarks`). `spec` is `named` after the flow's embedder."""
    t0 = time.perf_counter()
    marks = RunMarks(CacheLayout(cache_dir).embeddings(entry_name(spec.name, spec.revision)), shard.key)
    lost = marks.start()
    if lost:
        log.warning("embed shard %d (%s): run again on %s after a lost run on %s", shard.index, shard.key,
                    worker_id(), ", ".join(lost))
    embedder = load_embedder(spec)
    cache = EmbeddingCache(cache_dir, embedder.name, embedder.revision, embedder.dim)
    embedded = 0
    if cache.open_shard(cache.dir / f"{shard.key}.keys.npy") is None:
        vectors = np.asarray(embedder.encode(shard.texts.to_pylist()), dtype=np.float32)
        if vectors.shape != (len(shard.texts), embedder.dim):
            raise EmbedderError(f"embedder {embedder.name} returned shape {vectors.shape}, "
                                f"expected ({len(shard.texts)}, {embedder.dim})")
        cache.add(shard.raw_keys(), vectors)
        embedded = len(shard.texts)
    marks.done()
    return ShardDone(shard.index, shard.key, worker_id(), tuple(lost), embedded, time.perf_counter() - t0)
