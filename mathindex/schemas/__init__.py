"""The table registry: every table a release holds, its pyarrow schema and its stable sort key.

Every schema of a registered table describes itself: the table in the schema's metadata and each
column in its field's metadata (key `comment`), written with `columns.described` and `columns.column`. The
descriptions travel with the Parquet files and become `search.duckdb`'s table and column comments."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from mathindex.schemas import common, embed, formal, formula, latex, lean, search


@dataclass(frozen=True)
class TableSpec:
    """A release table: its file stem, schema, and the columns that order its rows."""

    name: str
    schema: pa.Schema
    sort_keys: tuple[str, ...]


def table_specs() -> dict[str, TableSpec]:
    """All release tables by name (each domain owns its schema module)."""
    specs = [
        TableSpec("declarations", lean.DECLARATIONS, ("corpus", "file", "line_start", "full_name")),
        TableSpec("dependencies", lean.DEPENDENCIES, ("corpus", "full_name", "target")),
        TableSpec("descriptions", lean.DESCRIPTIONS, ("full_name", "source", "file", "line", "text")),
        TableSpec("citations", lean.CITATIONS, ("full_name", "via", "file", "line", "key", "kind", "identifier")),
        TableSpec("latex_statements", latex.LATEX_STATEMENTS, ("corpus", "file", "line_start", "statement_id")),
        TableSpec("latex_macros", latex.LATEX_MACROS, ("corpus", "name", "body", "nargs")),
        TableSpec("formulas", latex.FORMULAS, ("corpus", "file", "position", "formula_id")),
        TableSpec("formula_trees", formula.FORMULA_TREES, ("formula_id",)),
        TableSpec("informalisations", embed.INFORMALISATIONS, ("full_name", "decl_id")),
        TableSpec("embedding_texts", embed.EMBEDDING_TEXTS, ("text_id",)),
        TableSpec("nodes", search.NODES, ("node_id",)),
        TableSpec("same_as", search.SAME_AS, ("node_id", "target_node_id", "via")),
        TableSpec("formal_statements", formal.FORMAL_STATEMENTS, ("doc",)),
        TableSpec("errors", common.ERRORS, ("corpus", "stage", "file", "line", "reason")),
        TableSpec("bench_results", common.BENCH_RESULTS, ("suite", "query_id")),
    ]
    return {s.name: s for s in specs}
