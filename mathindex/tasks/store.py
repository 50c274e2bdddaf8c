"""Storage tasks: every table as deterministic Parquet, and `search.duckdb` over them."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
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
    # Arrow sorts, encodes and compresses without the GIL: one table a core (largest first)
    with ThreadPoolExecutor(max_workers=max(1, min(len(tables), os.cpu_count() or 1))) as pool:
        for f in [pool.submit(write_table, t, specs[name], release_dir)
                  for name, t in sorted(tables.items(), key=lambda kv: -kv[1].nbytes)]:
            f.result()
    return {name: t.num_rows for name, t in sorted(tables.items())}


@stage(name="write_duckdb")
def write_database(release_dir: Path, names: list[str], previous: Path | None = None) -> str:
    """`search.duckdb`, linked from release `previous` when its tables and catalog are the same."""
    return write_duckdb(release_dir, sorted(names), previous).name
