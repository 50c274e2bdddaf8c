"""Embedding tasks: the texts of each node, their vectors (cached by model + text hash), the
FAISS int8 HNSW index over them, and the informal channel's rendering vectors (into the same cache)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
from prefect.logging import get_run_logger

from mathindex.cache.codes import EMBEDDING_TEXTS
from mathindex.cache.stages import StageCache
from mathindex.embed.channel import VectorChannel, query_embedder
from mathindex.embed.embedder import EMBED_BACKEND, SentenceTransformerEmbedder, onnx_dir_for, query_encoding
from mathindex.embed.models import ModelPin
from mathindex.embed.texts import EMBEDDED_FACETS, embedded_texts, embedding_texts
from mathindex.embed.vector_index import INDEX_FILES, TRUTH_FILE, VectorIndex
from mathindex.embed.vector_index import embed_and_index as embed_and_build
from mathindex.schemas.embed import EMBEDDING_TEXTS as TEXTS_SCHEMA
from mathindex.search.informal import embed_renderings, rendering_texts
from mathindex.store.integrity import verify_release
from mathindex.store.layout import ReleaseLayout
from mathindex.tasks import HOUR_S, stage


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


@stage(name="embed_and_index", timeout_seconds=8 * HOUR_S)
def embed_and_index(
    texts: pa.Table, model: ModelPin, release_dir: Path, cache_dir: Path, previous: Path | None = None,
    backend: str = EMBED_BACKEND, precision: str = "fp32",
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
    (`embed.embedder.PRECISIONS`)."""
    embedder = SentenceTransformerEmbedder(None if model.path is None else str(model.path), backend=backend,
                                           onnx_dir=onnx_dir_for(cache_dir), int8=precision == "int8",
                                           bf16=precision == "bf16")
    last = reusable_index(previous)
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
    return VectorBuild(embedder=embedder.info(), index=index_info, embedding=embedding, channel=channel)


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
    precision, backend = query_encoding(embedder.name)
    if precision == "fp32" and getattr(embedder, "bf16", False):
        embedder = query_embedder(model.path, cache_dir, precision, backend, queries_only=False)
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
