"""The `nodes` table: one row per searchable node (a Lean declaration or a LaTeX statement)."""

from __future__ import annotations

import pyarrow as pa

from mathindex.schemas import column, described

NODES = described(
    "One row per searchable node: a Lean declaration (lean:<full_name>) or a LaTeX statement (tex:<corpus>:<statement_id>).",
    [
        column("node_id", pa.string(), "lean:<full_name> or tex:<corpus>:<statement_id>", nullable=False),
        column("name", pa.string(), "the hit name benchmarks compare with gold (Lean full name; LaTeX tag, label or id)", nullable=False),
        column("kind", pa.string(), "declaration kind or statement kind (theorem, lemma, definition, ...)", nullable=False),
        column("corpus", pa.string(), "corpus name", nullable=False),
        column("title", pa.string(), "signature for Lean, title or first line for LaTeX"),
        column("file", pa.string(), "path relative to the corpus root, / separators", nullable=False),
        column("line", pa.int32(), "1-based first line; null when unknown"),
        column("aliases", pa.list_(pa.string()), "other names that resolve to it: label, tag, short names", nullable=False),
        column("in_degree", pa.int32(), "declarations that reference it (search/prior.py)", nullable=False),
        column("pagerank", pa.float64(), "PageRank over the same references", nullable=False),
    ],
)
