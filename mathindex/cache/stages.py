"""Whole-stage results cached by content, for the stages whose output is one table.

A stage's output is a function of its input tables, its parameters and its code: the key is a
sha256 over the stage's code digest (its `cache.codes` set), the stage name, the parameters, and
each input table's content (`digest.table_digest`). A nightly whose extraction gave the same
tables reads the informalisations and the embedding texts back instead of recomputing them (20-40 s
of Python loops on whole Mathlib). Entries live in `CacheLayout.stage(<stage>)/<key>.parquet`; a
stage keeps its KEEP newest entries. An entry that cannot be read, or has another schema than the
stage's, is recomputed (with a warning), never trusted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from mathindex.cache.digest import CodeSet, table_digest
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import keep_newest, read_parquet, touch, write_parquet

KEEP = 3  # entries per stage: today's, yesterday's and one more (a rollback)


class StageCache:
    """`run(stage, code, fn, tables, params)`: fn's table, from the cache when the key was seen."""

    def __init__(self, cache_dir: Path | None):
        self.layout = None if cache_dir is None else CacheLayout(cache_dir)

    @staticmethod
    def key(stage: str, code: CodeSet, tables: dict[str, pa.Table | None], params: dict | None = None) -> str:
        h = hashlib.sha256(json.dumps({"code": code.digest(), "stage": stage, "params": params or {}},
                                      sort_keys=True, default=str).encode())
        for name in sorted(tables):
            h.update(f"\0{name}\0{table_digest(tables[name])}".encode())
        return h.hexdigest()[:32]

    def run(self, stage: str, code: CodeSet, fn: Callable[[], pa.Table], tables: dict[str, pa.Table | None],
            params: dict | None = None, schema: pa.Schema | None = None,
            keep: Callable[[pa.Table], bool] | None = None) -> tuple[pa.Table, bool]:
        """(the stage's table, whether it came from the cache); `schema`: what an entry must have;
        `keep`: whether a computed table may be stored (a table holding stand-ins is computed again)."""
        if self.layout is None:
            return fn(), False
        path = self.layout.stage(stage) / f"{self.key(stage, code, tables, params)}.parquet"
        if path.is_file():
            table = read_parquet(path, schema)
            if table is not None:
                touch(path)  # the newest entries are the ones kept
                return table, True
        out = fn()
        if keep is None or keep(out):
            write_parquet(path, out)
            keep_newest(path.parent, KEEP, "*.parquet")
            # the table as a later run reads it back (Parquet names a list's child `element`, a
            # fresh Arrow table `item`), so the stages keyed on it get the same key either way
            back = read_parquet(path, schema)
            out = back if back is not None else out
        return out, False
