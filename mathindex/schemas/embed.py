"""Schemas of the embedding stage: informalisations, embedding texts and the vector id map."""

from __future__ import annotations

import pyarrow as pa

# One informal (English) rendering per declaration. `status` is `ok` (the backend answered),
# `fallback` (the model failed or answered badly; `text` is the rule rendering, `reason` says why)
# or `empty` (nothing to render). `statement_sha256` hashes the declaration's own statement.
INFORMALISATIONS = pa.schema(
    [
        pa.field("decl_id", pa.string(), nullable=False),
        pa.field("full_name", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("backend", pa.string(), nullable=False),  # rules | http
        pa.field("model", pa.string(), nullable=False),  # model name; "rules-v<N>" for the rules
        pa.field("prompt_version", pa.string(), nullable=False),
        pa.field("statement_sha256", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),  # ok | fallback | empty
        pa.field("reason", pa.string()),  # why a fallback happened; null when status is ok
        pa.field("context", pa.list_(pa.string()), nullable=False),  # constants whose text was reused
        pa.field("order", pa.int32(), nullable=False),  # position in dependency order (0 first)
    ]
)

# Several texts (facets) per searchable node; `text_id` is the FAISS id of the row's vector.
# `text_id` = signed int64 of the first 8 bytes of sha256(node_id \0 facet); `sha256` hashes `text`
# alone (the embedding cache key), so identical texts share a vector.
EMBEDDING_TEXTS = pa.schema(
    [
        pa.field("text_id", pa.int64(), nullable=False),
        pa.field("node_id", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),  # the hit name benchmarks compare with gold
        pa.field("facet", pa.string(), nullable=False),  # name_signature | informal | docstring | latex_body | slogan | title
        pa.field("text", pa.string(), nullable=False),
        pa.field("sha256", pa.string(), nullable=False),
        pa.field("truncated", pa.bool_(), nullable=False),  # text was cut to the facet's character cap
    ]
)

# Row-aligned id map written beside `vector.index`: row i of the index holds vector `text_id`.
VECTOR_IDS = pa.schema(
    [
        pa.field("row", pa.int64(), nullable=False),
        pa.field("text_id", pa.int64(), nullable=False),
    ]
)
