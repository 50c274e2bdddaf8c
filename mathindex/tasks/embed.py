"""Embedding tasks: the texts of each node, their vectors (cached by model + text hash), the
FAISS int8 HNSW index over them, and the informal channel's rendering vectors (into the same cache)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
from prefect.logging import get_run_logger

from mathindex.cache.codes import EMBEDDING_TEXTS
from mathindex.cache.shards import ShardDone
from mathindex.cache.stages import StageCache
from mathindex.embed.channel import VectorChannel, index_query_embedder
from mathindex.embed.embedder import EMBED_BACKEND, EmbeddingCache, SentenceTransformerEmbedder, onnx_dir_for, text_keys
from mathindex.embed.models import ModelPin
from mathindex.embed.shards import SHARD_TEXTS, EmbedderSpec, EmbedShard, embed_shard, load_embedder, missing_texts, plan_shards
from mathindex.embed.texts import EMBEDDED_FACETS, embedded_texts, embedding_texts
from mathindex.embed.vector_index import INDEX_FILES, TRUTH_FILE, VectorIndex, content_key, embedder_info, reusable
from mathindex.embed.vector_index import embed_and_index as embed_and_build
from mathindex.schemas.embed import EMBEDDING_TEXTS as TEXTS_SCHEMA
from mathindex.search.informal import embed_renderings, rendering_texts
from mathindex.store.integrity import verify_release
from mathindex.store.layout import ReleaseLayout
from mathindex.tasks import HOUR_S, io_stage, stage
from mathindex.tasks.shards import run_shards, size_from_env


@dataclass(frozen=True)
class VectorBuild:
    """What `embed_and_index` built, as the manifest records it, and the embedding channel over it
    for the stages after it (premises, bench): the index just written, searched as `mathindex search`
    searches it, with queries encoded by the embedder the stage loaded."""

    embedder: dict  # name, revision, dim, normalised (schemas.manifest.EmbedderInfo)
    index: dict  # the index sidecar's parameters, build-time recall, the model reference, the facets
    embedding: dict  # texts embedded and from the cache, seconds, the backend that ran
    channel: VectorChannel | None = field(default=None, repr=False, compare=False)

    def manifest_entry(self) -> dict:
        """The manifest's `vector_index`: the index parameters with the embedding stats."""
        return {**self.index, "embedding": self.embedding}


@stage(name="embedding_texts")
def build_embedding_texts(declarations: pa.Table, informalisations: pa.Table, statements: pa.Table,
                          descriptions: pa.Table | None = None, cache_dir: Path | None = None) -> pa.Table:
    """The embedding_texts table, from the stage cache under `cache_dir` when its inputs are those
    of an earlier run (`cache.stages.StageCache`)."""
    inputs = {"declarations": declarations, "informalisations": informalisations, "statements": statements,
              "descriptions": descriptions}
    table, _ = StageCache(cache_dir).run("embedding_texts", EMBEDDING_TEXTS, lambda: embedding_texts(**inputs), inputs,
                                         schema=TEXTS_SCHEMA)
    return table


def shard_texts(default: int = SHARD_TEXTS) -> int:
    """Texts an embed shard: $MATHINDEX_EMBED_SHARD_TEXTS when set (smaller shards spread a small
    corpus over more workers; the tests use it), else `default`."""
    return size_from_env("MATHINDEX_EMBED_SHARD_TEXTS", default)


@dataclass(frozen=True)
class ShardPlan:
    """What the embed stage must embed before its index, as content-keyed shards; how many of the
    index's distinct texts and of the renderings' (not among them) the cache lacked; the last
    release's index when it may be reused or updated (`reusable_index`)."""

    shards: list[EmbedShard] = field(repr=False)
    index_missing: int
    renderings_missing: int
    last: Path | None


def embedder_spec(model: ModelPin, cache_dir: Path, precision: str, local: bool,
                  backend: str = EMBED_BACKEND) -> EmbedderSpec:
    """How every process loads the release's embedder, each embedding in its own process. `local`
    (the flow's thread pool runs the shards): one shard a core at a time, each on one ONNX thread;
    the embedder's process pool (one shard at a time, a single-threaded worker per core) was no
    faster: 95 s against 82 s wall, 37 s against 37 s CPU for 3,000 whole-Mathlib texts, and 8.8 s
    against 5.1 s for the sample's 486 (bench/embed_runner.py, 2-core Xeon with AMX, loaded). On
    Dask each worker uses torch's thread count (OMP_NUM_THREADS)."""
    return EmbedderSpec(None if model.path is None else str(model.path), backend, str(onnx_dir_for(cache_dir)),
                        int8=precision == "int8", bf16=precision == "bf16", workers=1, threads=1 if local else 0)


@stage(name="load_embedder")
def load_release_embedder(spec: EmbedderSpec) -> SentenceTransformerEmbedder:
    """The release's embedder in the flow process (`embed.shards.load_embedder`: once per process)."""
    return load_embedder(spec)


@stage(name="plan_embed_shards")
def plan_embed_shards(texts: pa.Table, embedder, cache_dir: Path, previous: Path | None = None,
                      shard_texts: int = SHARD_TEXTS, spread: int = 1) -> ShardPlan:
    """The distinct texts the embedding cache lacks, as shards (at least `spread` of them): the
    index's embedded facets (none when the last release's index is reused as it is) and the informal
    renderings the channel ranks by (`warm_renderings`) when the index's embedder encodes them (not bf16)."""
    last = reusable_index(previous)
    cache = EmbeddingCache(cache_dir, embedder.name, embedder.revision, embedder.dim)
    index_texts = embedded_texts(texts).sort_by("text_id")
    parts, keys = [], []  # texts and their S32 keys (the index's from its sha256 column, renderings hashed)
    index_missing = 0
    if not reusable(last, content_key(index_texts, embedder_info(embedder), {})):
        parts.append(pa.table({"text": index_texts.column("text").cast(pa.string())}))
        keys.append(text_keys(index_texts.select(["sha256"])))
        index_missing = int((~cache.contains(np.unique(keys[0]))).sum())
    if not getattr(embedder, "bf16", False):
        renderings = rendering_texts(pl.from_arrow(texts.select(["name", "facet", "text"]))).get_column("text")
        parts.append(pa.table({"text": renderings.to_arrow().cast(pa.string())}))
        keys.append(text_keys(parts[-1]))
    if not parts:
        return ShardPlan([], 0, 0, last)
    missing, todo = missing_texts(pa.concat_tables(parts), cache, np.concatenate(keys))
    return ShardPlan(plan_shards(missing, todo, shard_texts, spread), index_missing, len(missing) - index_missing, last)


embed_shard_task = io_stage(name="embed_shard", task_run_name="embed-shard-{shard.index}")(embed_shard)


def embed_in_shards(texts: pa.Table, embedder, spec: EmbedderSpec, cache_dir: Path, previous: Path | None = None,
                    shard_texts: int = SHARD_TEXTS) -> tuple[ShardPlan, list[ShardDone]]:
    """Embeds what the cache lacks (`plan_embed_shards`) as tasks through the flow's task runner, one
    a shard, into the root's embedding cache (`embed.shards.embed_shard`): locally (`spec` on one
    thread) a shard a core at a time, on Dask all at once. The index is then built from the cache
    alone; the flow's embedder gets torch's thread count back for the stages after."""
    local = spec.threads == 1
    cores = os.cpu_count() or 1
    plan = plan_embed_shards(texts, embedder, cache_dir, previous, shard_texts, cores if local else 1)
    try:
        done = run_shards(embed_shard_task, plan.shards, "embed", cores if local else None,
                          spec=spec.named(embedder), cache_dir=cache_dir)
    finally:
        embedder.threads = 0
    return plan, done


@stage(name="embed_and_index", timeout_seconds=8 * HOUR_S)
def embed_and_index(
    texts: pa.Table, model: ModelPin, release_dir: Path, cache_dir: Path, previous: Path | None = None,
    backend: str = EMBED_BACKEND, precision: str = "fp32", embedder: SentenceTransformerEmbedder | None = None,
    sharded: tuple[ShardPlan, list[ShardDone]] | None = None, runner: str = "local",
) -> VectorBuild:
    """Embeds every text (cache hits cost nothing) with the pinned model (`embed.models.pin_model`:
    the bundled one, or an entry of the root's models directory) and writes `vector/` into the
    release; reuses the index of release `previous` when it was built from the same texts and embedder
    and its files match that release's manifest (`reusable_index`).
    Returns the embedder info, the index parameters with build-time recall and the model reference
    the manifest records (`model`: None for the bundled model, else `models/<name>@<rev16>`), and
    embedding stats (with the backend that ran: `backend`, or torch when ONNX fell back): a VectorBuild. ONNX
    exports are cached under `cache_dir/onnx`, or $MATHINDEX_ONNX_DIR when set (one export for
    many roots: the tests share one). `precision` bf16 or int8 embeds with that model
    (`embed.embedder.PRECISIONS`). `embedder` and `sharded`: the release flow's, which embedded the
    missing texts first (`embed_in_shards`), so the index reads every vector from the cache; the
    manifest counts the shards' texts as embedded by this run (`runner` ran them)."""
    if embedder is None:
        embedder = SentenceTransformerEmbedder(None if model.path is None else str(model.path), backend=backend,
                                               onnx_dir=onnx_dir_for(cache_dir), int8=precision == "int8",
                                               bf16=precision == "bf16")
    last = sharded[0].last if sharded is not None else reusable_index(previous)
    # only the embedded facets (texts.EMBEDDED_FACETS); the lexical index still reads every facet
    index, stats = embed_and_build(embedded_texts(texts), embedder, cache_dir, ReleaseLayout(release_dir).vector, last)
    if embedder.backend == "onnx" and precision == "fp32":
        # the server's packed query export and query files, once per model (about 5 s): `mathindex
        # serve` then encodes queries without torch from its first start (embed/queries.py)
        embedder.packed_onnx()
    info = {k: v for k, v in index.sidecar.items() if k != "embedder"}
    embedding = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in asdict(stats).items()}
    embedding["backend"] = embedder.backend
    embedding["precision"] = precision
    index_info = {**info, "model": model.reference, "facets": list(EMBEDDED_FACETS)}
    channel = built_channel(texts, release_dir, embedder, model, cache_dir)
    embedding["renderings"] = warm_renderings(texts, channel, cache_dir)
    if sharded is not None:
        fold_shards(embedding, *sharded, runner)
    return VectorBuild(embedder=embedder.info(), index=index_info, embedding=embedding, channel=channel)


def fold_shards(embedding: dict, plan: ShardPlan, done: list[ShardDone], runner: str) -> None:
    """The embedding figures as if the stage had embedded the shards' texts itself: those the index
    and the renderings found in the cache were embedded by this run's shards."""
    embedding["embedded"] += plan.index_missing
    embedding["cached"] -= plan.index_missing
    embedding["renderings"]["embedded"] += plan.renderings_missing
    embedding["renderings"]["cached"] -= plan.renderings_missing
    embedding["shards"] = {"count": len(done), "texts": sum(len(s.texts) for s in plan.shards),
                           "seconds": round(sum(d.seconds for d in done), 3), "lost_runs": sum(len(d.lost) for d in done)}
    embedding["runner"] = runner


def warm_renderings(texts: pa.Table, channel: VectorChannel, cache_dir: Path) -> dict:
    """Every informal rendering the informal channel ranks by (`search.informal.rendering_texts`),
    embedded into the root's embedding cache by the embedder that encodes the release's queries
    (the store the channel reads, keyed by text sha256 per model), so that neither the bench
    stage nor a server embeds one at query time; cached ones cost a lookup. Its counts."""
    renderings = rendering_texts(pl.from_arrow(texts.select(["name", "facet", "text"]))).get_column("text")
    return embed_renderings(renderings.to_arrow(), channel.embedder, cache_dir)


def built_channel(texts: pa.Table, release_dir: Path, embedder, model: ModelPin, cache_dir: Path) -> VectorChannel:
    """The embedding channel over the release's index as written (`texts`: its `embedding_texts`),
    encoding queries with `embedder`, which made the vectors; a bf16 index's queries are encoded at
    fp32 (`query_encoding`), by the query embedder a search of the release would load."""
    embedder = index_query_embedder(embedder, model.path, cache_dir)
    vector_dir = ReleaseLayout(release_dir).vector
    return VectorChannel(VectorIndex.open(vector_dir, embedder), embedder, texts.select(["text_id", "name"]))


def reusable_index(previous: Path | None) -> Path | None:
    """The vector directory of release `previous` when every file a reuse would link matches that
    release's manifest (sha256), else None: a damaged index is rebuilt, never linked into a new
    release, and the run's log names the bad files."""
    if previous is None:
        return None
    vector = ReleaseLayout(previous).vector
    names = [n for n in INDEX_FILES if n != TRUTH_FILE or (vector / n).is_file()]  # older releases have no truth file
    problems = verify_release(previous, only=[f"{ReleaseLayout.VECTOR}/{n}" for n in names])
    if problems:
        get_run_logger().warning("not reusing the vector index of release %s (rebuilding it): %s",
                                 previous.name, "; ".join(problems))
        return None
    return ReleaseLayout(previous).vector
