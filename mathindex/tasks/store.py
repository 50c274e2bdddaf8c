"""Storage tasks: every table as deterministic Parquet, and `search.duckdb` over them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.schemas import table_specs
from mathindex.store import write_duckdb, write_table
from mathindex.tasks import stage


@stage(name="write_tables")
def write_tables(release_dir: Path, tables: dict[str, pa.Table]) -> dict[str, int]:
    """Writes each named table against its registered schema; returns row counts."""
    specs = table_specs()
    unknown = set(tables) - set(specs)
    if unknown:
        raise ValueError(f"tables without a registered schema: {sorted(unknown)}")
    for name, t in sorted(tables.items()):
        write_table(t, specs[name], release_dir)
    return {name: t.num_rows for name, t in sorted(tables.items())}


@stage(name="write_duckdb")
def write_database(release_dir: Path, names: list[str]) -> str:
    return write_duckdb(release_dir, sorted(names)).name
