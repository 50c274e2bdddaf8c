"""Schemas of the embedding stage: informalisations, embedding texts and the vector id map."""

from __future__ import annotations

import pyarrow as pa

from mathindex.schemas.columns import column, described

# One informal (English) rendering per declaration. `status` is `ok` (the backend answered),
# `fallback` (the model failed or answered badly; `text` is the rule rendering, `reason` says why)
# or `empty` (nothing to render). `statement_sha256` hashes the declaration's own statement.
INFORMALISATIONS = described(
    "One informal (English) rendering per Lean declaration, made in dependency order.",
    [
        column("decl_id", pa.string(), "the declaration (declarations.decl_id)", nullable=False),
        column("full_name", pa.string(), "its full name", nullable=False),
        column("text", pa.string(), "the informal rendering", nullable=False),
        column("backend", pa.string(), "rules or http", nullable=False),
        column("model", pa.string(), "model name; rules-v<N> for the rules", nullable=False),
        column("prompt_version", pa.string(), "version of the prompt (or rules) that made text", nullable=False),
        column("statement_sha256", pa.string(), "sha256 of the declaration's own statement", nullable=False),
        column("status", pa.string(), "ok, fallback (text is the rule rendering) or empty", nullable=False),
        column("reason", pa.string(), "why a fallback happened; null when status is ok"),
        column("context", pa.list_(pa.string()), "constants whose informal text was reused", nullable=False),
        column("order", pa.int32(), "position in dependency order (0 first)", nullable=False),
    ],
)

# Several texts (facets) per searchable node; `text_id` is the FAISS id of the row's vector.
# `text_id` = signed int64 of the first 8 bytes of sha256(node_id \0 facet); `sha256` hashes `text`
# alone (the embedding cache key), so identical texts share a vector.
EMBEDDING_TEXTS = described(
    "The texts (facets) of every searchable node that the lexical and vector indexes are built from.",
    [
        column("text_id", pa.int64(), "FAISS id of the row's vector: int64 of sha256(node_id \\0 facet)[:8]", nullable=False),
        column("node_id", pa.string(), "the node (nodes.node_id)", nullable=False),
        column("name", pa.string(), "the hit name benchmarks compare with gold", nullable=False),
        column("facet", pa.string(), "name_signature, informal, docstring, description, members, latex_body or slogan", nullable=False),
        column("text", pa.string(), "the text", nullable=False),
        column("sha256", pa.string(), "sha256 of text (the embedding cache key)", nullable=False),
        column("truncated", pa.bool_(), "text was cut to the facet's character cap", nullable=False),
    ],
)

# Row-aligned id map written beside `vector.index`: row i of the index holds vector `text_id`.
# One row per vector in the index, in index order. `sha256` is the text a row was embedded from and
# `deleted` marks a row an update replaced or removed (embed/vector_index.py `VectorIndex.update`); files
# written before updates existed have only `row` and `text_id`, and such an index is rebuilt, never
# updated.
VECTOR_IDS = pa.schema(
    [
        pa.field("row", pa.int64(), nullable=False),
        pa.field("text_id", pa.int64(), nullable=False),
        pa.field("sha256", pa.string(), nullable=True),
        pa.field("deleted", pa.bool_(), nullable=False),
    ]
)
