"""Schemas shared by every stage: the `errors` table and the `bench_results` table."""

from __future__ import annotations

import pyarrow as pa

from mathindex.schemas.columns import column, described

ERRORS = described(
    "One row per input file (or formula) a stage could not read; the release goes on without it.",
    [
        column("corpus", pa.string(), "corpus the file belongs to", nullable=False),
        column("file", pa.string(), "path relative to the corpus root, / separators", nullable=False),
        column("line", pa.int32(), "1-based line of the error; null when it has none"),
        column("stage", pa.string(), "stage that failed: extract_lean, extract_latex, parse_formula, ...", nullable=False),
        column("reason", pa.string(), "what went wrong, one line (at most 500 characters)", nullable=False),
    ],
)

BENCH_RESULTS = described(
    "One row per benchmark query of every suite the release ran: its gold answers and where the first one ranked.",
    [
        column("suite", pa.string(), "suite name (bench.suites of the manifest)", nullable=False),
        column("query_id", pa.string(), "query id, unique within its suite", nullable=False),
        column("style", pa.string(), "query style: identifier, lean, latex, natural, ...", nullable=False),
        column("query", pa.string(), "the query text as searched", nullable=False),
        column("gold", pa.list_(pa.string()), "hit names that count as correct answers", nullable=False),
        column("rank", pa.int32(), "1-based rank of the first gold hit; null when none is in the top k"),
        column("top", pa.list_(pa.string()), "names of the top k hits, best first", nullable=False),
    ],
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
