"""Informalisers, embedding texts, embedders with their cache, and the FAISS int8 HNSW index."""

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
from mathindex.embed.index import IndexMismatchError, VectorIndex, embed_and_index
from mathindex.embed.informalise import (
    HttpInformaliser,
    InformalInput,
    Informaliser,
    Rendering,
    RuleInformaliser,
    informalise,
)
from mathindex.embed.texts import embedding_texts, text_id, text_sha256

__all__ = [
    "DEFAULT_MODEL_NAME", "Embedder", "EmbedderError", "EmbeddingCache", "EmbedStats", "HttpInformaliser",
    "IndexMismatchError", "InformalInput", "Informaliser", "Rendering", "RuleInformaliser",
    "SentenceTransformerEmbedder", "VectorIndex", "default_model_path", "embed_and_index", "embed_texts", "embedding_texts",
    "informalise", "text_id", "text_sha256",
]
