"""Schemas shared by every stage: the `errors` table and the `bench_results` table."""

from __future__ import annotations

import pyarrow as pa

ERRORS = pa.schema(
    [
        pa.field("corpus", pa.string(), nullable=False),
        pa.field("file", pa.string(), nullable=False),  # path relative to the corpus root
        pa.field("line", pa.int32()),  # 1-based; null when the error has no line
        pa.field("stage", pa.string(), nullable=False),  # e.g. extract_lean, extract_latex, parse_formula
        pa.field("reason", pa.string(), nullable=False),  # one line
    ]
)

BENCH_RESULTS = pa.schema(
    [
        pa.field("suite", pa.string(), nullable=False),
        pa.field("query_id", pa.string(), nullable=False),
        pa.field("style", pa.string(), nullable=False),
        pa.field("query", pa.string(), nullable=False),
        pa.field("gold", pa.list_(pa.string()), nullable=False),
        pa.field("rank", pa.int32()),  # 1-based rank of the first gold hit; null when not in the top k
        pa.field("top", pa.list_(pa.string()), nullable=False),  # names of the top k hits
    ]
)


def error_row(corpus: str, file: str, line: int | None, stage: str, reason: str) -> dict:
    """One `errors` row; `reason` is folded to one line and capped at 500 characters."""
    reason = " ".join(str(reason).split())[:500]
    return {"corpus": corpus, "file": file, "line": line, "stage": stage, "reason": reason}


def table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    """A table built against its schema, so that drift fails at the write."""
    return pa.Table.from_pylist(rows, schema=schema)


def concat(tables: list[pa.Table], schema: pa.Schema) -> pa.Table:
    """Tables cast to one schema (columns in its order) and concatenated; empty when none."""
    tables = [t.select(schema.names).cast(schema) for t in tables]
    return pa.concat_tables(tables) if tables else schema.empty_table()
