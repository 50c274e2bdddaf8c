"""The `nodes` table: one row per searchable node (a Lean declaration or a LaTeX statement)."""

from __future__ import annotations

import pyarrow as pa

NODES = pa.schema(
    [
        pa.field("node_id", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),  # what benchmarks compare with gold
        pa.field("kind", pa.string(), nullable=False),
        pa.field("corpus", pa.string(), nullable=False),
        pa.field("title", pa.string()),  # signature for Lean, title or first line for LaTeX
        pa.field("file", pa.string(), nullable=False),
        pa.field("line", pa.int32()),
        pa.field("aliases", pa.list_(pa.string()), nullable=False),  # label, tag, short names
        pa.field("in_degree", pa.int32(), nullable=False),  # declarations that reference it (search/prior.py)
        pa.field("pagerank", pa.float64(), nullable=False),  # PageRank over the same references
    ]
)
