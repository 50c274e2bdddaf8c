"""Embedding tasks: the texts of each node, their vectors (cached by model + text hash), and the
FAISS int8 HNSW index over them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.search.engine import VECTOR_DIR
from mathindex.tasks import stage


@stage(name="embedding_texts")
def build_embedding_texts(declarations: pa.Table, informalisations: pa.Table, statements: pa.Table) -> pa.Table:
    from mathindex.embed import embedding_texts

    return embedding_texts(declarations, informalisations, statements)


@stage(name="embed_and_index")
def embed_and_index(texts: pa.Table, model: str | None, release_dir: Path, cache_dir: Path) -> dict:
    """Embeds every text (cache hits cost nothing) and writes `vector/` into the release.
    Returns the embedder info and the index parameters and build-time recall for the manifest."""
    from mathindex.embed import VectorIndex, embed_texts, load_embedder

    embedder = load_embedder(model)
    vectors, stats = embed_texts(texts, embedder, cache_dir / "embeddings")
    info = VectorIndex.build(vectors, texts.column("text_id").to_numpy(), embedder, release_dir / VECTOR_DIR)
    return {"embedder": embedder.info(), "index": info, "embedding": stats}
