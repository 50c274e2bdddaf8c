"""Storage tasks: every table as deterministic Parquet, and `search.duckdb` over them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa

from mathindex.schemas import table_specs
from mathindex.store.tables import finish_duckdb, start_duckdb, write_duckdb, write_table
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


@contextmanager
def database_started(release_dir: Path, names: list[str], previous: Path | None = None) -> Iterator[Future]:
    """Loads the tables `names` into the release's database on a thread of this process while the
    block runs (the release flow's benchmarks: DuckDB works without the GIL, so the two share the
    cores); yields the Future of `store.start_duckdb`'s result for `write_database`. The thread is
    joined when the block ends, whatever happens in it."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="duckdb") as pool:
        yield pool.submit(start_duckdb, release_dir, sorted(names), previous)


@stage(name="write_duckdb")
def write_database(release_dir: Path, names: list[str], previous: Path | None = None,
                   started: tuple[Path | None, list[str]] | None = None) -> str:
    """`search.duckdb`, linked from release `previous` when its tables and catalog are the same.
    `started`: (what `database_started` gave, the tables it was given) when part of it is built."""
    if started is None:
        return write_duckdb(release_dir, sorted(names), previous).name
    part, first = started
    return finish_duckdb(release_dir, names, previous, part, first).name
