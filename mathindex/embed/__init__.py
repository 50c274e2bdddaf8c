"""Embedding texts, embedders with their cache, and the FAISS int8 HNSW index."""

from mathindex.embed.embedder import (
    DEFAULT_MODEL_NAME,
    EmbedderError,
    Embedder,
    EmbeddingCache,
    EmbedStats,
    SentenceTransformerEmbedder,
    default_model_path,
    embed_texts,
)
from mathindex.embed.vector_index import IndexMismatchError, VectorIndex, embed_and_index
from mathindex.embed.texts import embedding_texts, text_id, text_sha256

__all__ = [
    "DEFAULT_MODEL_NAME", "Embedder", "EmbedderError", "EmbeddingCache", "EmbedStats", "IndexMismatchError",
    "SentenceTransformerEmbedder", "VectorIndex", "default_model_path", "embed_and_index", "embed_texts", "embedding_texts",
    "text_id", "text_sha256",
]
