"""The embedding channel: the query embedded by the release's embedder and searched in its int8 HNSW
index (mathindex/channel.py); and encoding at query time, on one thread."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.embed.base import default_model_path
from mathindex.embed.embedder import SentenceTransformerEmbedder, onnx_dir_for, query_encoding
from mathindex.embed.models import reference_path
from mathindex.embed.queries import OnnxQueryEmbedder
from mathindex.embed.shards import EmbedderSpec, load_embedder
from mathindex.embed.vector_index import SIDECAR_FILE, VectorIndex
from mathindex.channel import Channel, ChannelContext, Hits, Query
from mathindex.channel import NamedRows
from mathindex.store.layout import ReleaseLayout

log = logging.getLogger(__name__)


class VectorChannel(Channel):
    """Embeds the query and searches the vector index; a node's hit is its best facet's. The query is
    encoded by the backend releases embed with (ONNX Runtime when the model's checked export is in
    the root's cache or can be made there; the same vectors as torch), else by torch, at the
    precision `embed.embedder.query_encoding` gives for the index (a bf16 index's queries at fp32)."""

    name = "embedding"

    def __init__(self, index: VectorIndex, embedder, texts: pa.Table, shared: dict[str, str] | None = None,
                 lazy: bool = False):
        """`texts`: the `embedding_texts` rows (`text_id`, `name`) the index's ids name; `shared`: the
        engine's name objects (name -> itself), so that the rows' names are those; `lazy`: a
        one-query engine's (NamedRows)."""
        self.embedder, self.index = embedder, index
        self.rows = NamedRows(texts.column("text_id").to_numpy(), texts.column("name"), shared, lazy)

    @classmethod
    def open(cls, context: ChannelContext) -> VectorChannel:
        """Over the release's files, with the query embedder its index's embedder name calls for."""
        layout = ReleaseLayout(context.release)
        try:  # the index's embedder name says how its vectors were made, and so how queries are encoded
            made = json.loads((layout.vector / SIDECAR_FILE).read_text())["embedder"]
            built, revision = str(made["name"]), str(made["revision"])
        except (OSError, ValueError, KeyError, TypeError):
            built, revision = "", ""  # VectorIndex.open below says what is wrong
        embedder = None
        if context.queries_only and revision:  # the index's own model, by name: no model directory to hash or load
            embedder = light_query_embedder(built, revision, context.cache_dir)
        if embedder is None:
            embedder = query_embedder(reference_path(context.model, context.root), context.cache_dir,
                                      *query_encoding(built), context.queries_only)
        index = VectorIndex.open(layout.vector, embedder)
        return cls(index, embedder, pq.read_table(layout.table("embedding_texts"), columns=["text_id", "name"]), context.shared,
                   context.lazy)

    def hits(self, query: Query, k: int) -> Hits:
        """Every query; its vector is kept in `query.vector` for the channels after this one."""
        query.vector = self.encode(query.text)
        return self.search(query.text, k, query.vector)

    def encode(self, query: str):
        return encode_one(self.embedder, query)

    def search(self, query: str, k: int, vec=None) -> Hits:
        """Nodes by their best facet's cosine to the query (`vec`: its vector, if encoded already)."""
        vec = self.encode(query) if vec is None else vec
        ids, scores = self.index.search(vec, k * 3)
        return self.rows.best(ids[0], scores[0], k)


def index_query_embedder(embedder, model: Path | None, cache_dir: Path):
    """The embedder the queries of an index `embedder` made are encoded with: itself, or for a bf16
    index the same model (`model`: its directory, None the bundled one) at fp32 (`query_encoding`)."""
    precision, backend = query_encoding(embedder.name)
    if precision == "fp32" and getattr(embedder, "bf16", False):
        return query_embedder(model, cache_dir, precision, backend, queries_only=False)
    return embedder


def spec_channel(release: Path, spec: EmbedderSpec, cache_dir: Path) -> VectorChannel:
    """The embedding channel over the release's index and `embedding_texts` as written, in any
    process (a Dask worker too): its queries encoded by the embedder `spec` loads (once per process,
    `embed.shards.load_embedder`), as the embed stage's own channel encodes them."""
    made = load_embedder(spec)
    embedder = index_query_embedder(made, None if spec.path is None else Path(spec.path), cache_dir)
    layout = ReleaseLayout(release)
    return VectorChannel(VectorIndex.open(layout.vector, embedder), embedder,
                         pq.read_table(layout.table("embedding_texts"), columns=["text_id", "name"]))


def light_query_embedder(index_embedder: str, revision: str, cache_dir: Path) -> OnnxQueryEmbedder | None:
    """The torch-free query embedder of an index built by `index_embedder` at `revision` (its
    sidecar's), from the checked exports in the root's cache (embed/queries.py); None when the
    index's queries are not fp32 ONNX ones or the exports are not all there."""
    precision, backend = query_encoding(index_embedder)
    if precision != "fp32" or backend != "onnx":
        return None
    name = index_embedder.removesuffix("+bf16")  # a bf16 index's queries are its model's fp32 ones
    return OnnxQueryEmbedder.open_named(name, revision, onnx_dir_for(cache_dir))


def query_embedder(model: Path | None, cache_dir: Path, precision: str, backend: str, queries_only: bool):
    """The embedder queries are encoded with (`precision` and `backend` from `query_encoding`): with
    `queries_only`, the fp32 ONNX one from its exports alone when they are all in the root's cache
    (embed/queries.py: no torch); else the full SentenceTransformerEmbedder, or, when a read-only
    root cannot hold a new fp32 export, the same model on torch (the same vectors)."""
    int8 = precision == "int8"
    if queries_only and backend == "onnx" and not int8:
        light = OnnxQueryEmbedder.open(default_model_path() if model is None else Path(model), onnx_dir_for(cache_dir))
        if light is not None:
            return light
    spec = None if model is None else str(model)
    try:
        return SentenceTransformerEmbedder(spec, progress=False, backend=backend, onnx_dir=onnx_dir_for(cache_dir), int8=int8)
    except OSError as exc:
        if int8 and backend == "onnx":
            raise
        log.warning("embedding channel: no ONNX export (%s); queries are encoded with torch", exc)
        return SentenceTransformerEmbedder(spec, progress=False, int8=int8)


def encode_one(embedder, text: str):
    """One query on one thread: intra-op threads only add sync cost for a single short text
    (measured 15 ms against 87-130 ms with 2 threads on a loaded 2-core machine)."""
    return encode_on_one_thread(embedder, [text])


def encode_on_one_thread(embedder, texts: list[str]):
    """`embedder.encode(texts)` with torch (and so the embedder's ONNX session) on one thread: the
    query encodes that way, and a session made for another thread count is made anew (about a
    second for the whole model), so every query-time encode keeps to one thread. An embedder
    without torch (embed/queries.py) runs on one thread already."""
    if not getattr(embedder, "uses_torch", True):
        return embedder.encode(texts)
    import torch  # heavy: only an embedder that runs on torch gets here

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return embedder.encode(texts)
    finally:
        torch.set_num_threads(threads)
