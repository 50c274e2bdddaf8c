"""Whole-stage results cached by content, for the stages whose output is one table.

A stage's output is a function of its input tables, its parameters and the code: the key is a
sha256 over the mathindex source files (`CODE_VERSION`), the stage name, the parameters, and each
input table's content (its Arrow IPC bytes after combining chunks). A nightly whose extraction
gave the same tables reads the informalisations and the embedding texts back instead of
recomputing them (20-40 s of Python loops on whole Mathlib). Entries live under
`ROOT/cache/stages/<stage>/<key>.parquet`; a stage keeps its `KEEP` newest entries. An entry that
cannot be read is recomputed (with a warning), never trusted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mathindex import cache

log = logging.getLogger(__name__)
KEEP = 3  # entries per stage: today's, yesterday's and one more (a rollback)
PACKAGE = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def code_version() -> str:
    """`cache.code_version` over every Python source file of the package, in path order."""
    return cache.code_version(*sorted(PACKAGE.rglob("*.py")))


def table_digest(table: pa.Table | None) -> str:
    """sha256 of a table's schema and rows (chunking does not matter); "none" for None."""
    if table is None:
        return "none"
    h = hashlib.sha256()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table.combine_chunks())
    h.update(sink.getvalue())
    return h.hexdigest()


class StageCache:
    """`run(stage, fn, tables, params)`: fn's table, from the cache when the key was seen."""

    def __init__(self, root: Path | None):
        self.dir = None if root is None else Path(root) / "stages"

    def key(self, stage: str, tables: dict[str, pa.Table | None], params: dict | None = None) -> str:
        h = hashlib.sha256(json.dumps({"code": code_version(), "stage": stage, "params": params or {}},
                                      sort_keys=True, default=str).encode())
        for name in sorted(tables):
            h.update(f"\0{name}\0{table_digest(tables[name])}".encode())
        return h.hexdigest()[:32]

    def run(self, stage: str, fn: Callable[[], pa.Table], tables: dict[str, pa.Table | None],
            params: dict | None = None) -> tuple[pa.Table, bool]:
        """(the stage's table, whether it came from the cache)."""
        if self.dir is None:
            return fn(), False
        key = self.key(stage, tables, params)
        path = self.dir / stage / f"{key}.parquet"
        if path.is_file():
            try:
                table = pq.read_table(path)
                os.utime(path)  # the newest entries are the ones kept
                return table, True
            except (OSError, pa.ArrowException) as exc:
                log.warning("stage cache: recomputing %s, its cached result %s cannot be read (%s)", stage, path.name, exc)
        out = fn()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        pq.write_table(out, tmp, compression="zstd")
        os.replace(tmp, path)
        self._prune(path.parent)
        return out, False

    @staticmethod
    def _prune(directory: Path) -> None:
        entries = sorted(directory.glob("*.parquet"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in entries[KEEP:]:
            old.unlink(missing_ok=True)
