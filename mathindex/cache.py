"""Content-addressed row caches: Parquet shards of (key, values...) under one directory.

A stage that maps many inputs to outputs by content (a text to its tokens, a formula to its tree)
keeps what it computed here, keyed by a hash of the input and of the code version, and looks
whole columns up with one join, never a file per row. A shard is written once (temporary file,
then rename) and never modified; a shard that cannot be read is skipped with a warning (its rows
are computed again and written to a new shard).
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

log = logging.getLogger(__name__)


def code_version(*files: Path | str, packages: tuple[str, ...] = ()) -> str:
    """sha256 (16 hex) over the bytes of source files and the installed versions of `packages`: a
    cache scope that changes with the code that fills the cache."""
    from importlib.metadata import version

    h = hashlib.sha256()
    for f in files:
        h.update(Path(f).read_bytes())
    for p in packages:
        h.update(f"\0{p}={version(p)}".encode())
    return h.hexdigest()[:16]


class RowCache:
    """Rows keyed by `key` (a string) under `root/<name>/<version>/`, `schema` the shards' columns."""

    def __init__(self, root: Path | None, name: str, version: str, schema: pa.Schema):
        if schema.field(0).name != "key":
            raise ValueError("a row cache's first column is its key")
        self.dir = None if root is None else Path(root) / name / version
        self.schema = schema

    def load(self, keys: pl.Series | None = None) -> pl.DataFrame:
        """Every cached row (only those whose key is in `keys`, when given), one per key."""
        frames = []
        for shard in sorted(self.dir.glob("*.parquet")) if self.dir is not None and self.dir.is_dir() else []:
            try:
                frames.append(pl.from_arrow(pq.read_table(shard, schema=self.schema)))
            except (OSError, pa.ArrowException, pl.exceptions.PolarsError) as exc:
                log.warning("row cache %s: skipping unreadable shard %s (%s)", self.dir, shard.name, exc)
        if not frames:
            return pl.from_arrow(self.schema.empty_table())
        rows = pl.concat(frames, how="vertical")
        if keys is not None:
            rows = rows.join(pl.DataFrame({"key": keys.unique()}), on="key", how="semi")
        return rows.unique("key", keep="first", maintain_order=True)

    def add(self, rows: pl.DataFrame) -> None:
        """Writes `rows` as one new shard (sorted by key; the name is a hash of the keys)."""
        if self.dir is None or rows.is_empty():
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        table = rows.sort("key").to_arrow().select(self.schema.names).cast(self.schema)
        name = hashlib.sha256("\n".join(table.column("key").to_pylist()).encode()).hexdigest()[:20]
        tmp = self.dir / f".{name}.{os.getpid()}.tmp"
        pq.write_table(table, tmp)
        os.replace(tmp, self.dir / f"{name}.parquet")
