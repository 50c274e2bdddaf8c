"""One atomic writer and checked readers for every cache's files.

A cache file is written under a temporary name beside its place and renamed there (`write_atomic`),
so a reader sees all of it or nothing. A reader checks what it reads (readable, the expected schema;
a whole entry against the digests recorded when it was sealed) and skips a damaged file with a
logged warning, removing it: a damaged cache costs a recompute, never a wrong release.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from mathindex.cache.filehash import sha256_file

log = logging.getLogger(__name__)
DIGESTS = "digests.json"  # an entry's files and their sha256, written when the entry is sealed
_BAD = (OSError, ValueError, pa.ArrowException, pl.exceptions.PolarsError)  # what damage raises


def temp_beside(path: Path) -> Path:
    """A temporary name beside `path`, unique to this writer: threads of one process (the embed
    shards of a local run) write the same file at once, and a name shared by the process let one
    thread rename the other's file away."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{uuid.uuid4().hex[:8]}.tmp")


def write_atomic(path: Path, write: Callable[[Path], object]) -> Path:
    """Calls `write(tmp)` for a temporary path beside `path`, then renames it to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_beside(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_parquet(path: Path, table: pa.Table, compression: str = "zstd") -> Path:
    return write_atomic(path, lambda tmp: pq.write_table(table, tmp, compression=compression))


def write_arrow(path: Path, table: pa.Table) -> Path:
    """`table` as an Arrow IPC file (memory-mapped when read)."""
    def write(tmp: Path) -> None:
        with pa.OSFile(str(tmp), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    return write_atomic(path, write)


def write_json(path: Path, data: dict, **dumps) -> Path:
    return write_atomic(path, lambda tmp: tmp.write_text(json.dumps(data, **dumps), encoding="utf-8"))


def damaged(path: Path, why: object, remove: bool = True) -> None:
    """Logs that a cache file or entry cannot be used and (`remove`) deletes it."""
    log.warning("cache: skipping damaged %s (%s)", path, str(why).splitlines()[0][:200] if str(why) else type(why).__name__)
    if remove:
        if Path(path).is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            Path(path).unlink(missing_ok=True)


def _check_schema(table: pa.Table, schema: pa.Schema | None) -> pa.Table:
    if schema is not None and not table.schema.equals(schema, check_metadata=False):
        raise ValueError(f"columns {table.schema.names} differ from the cache schema {schema.names}")
    return table


def read_parquet(path: Path, schema: pa.Schema | None = None, remove: bool = True) -> pa.Table | None:
    """The table in `path` when it reads and has `schema`; None (logged, removed) when damaged."""
    try:
        return _check_schema(pq.read_table(path), schema)
    except _BAD as exc:
        damaged(path, exc, remove)
        return None


def read_arrow(path: Path, schema: pa.Schema | None = None, remove: bool = True) -> pa.Table | None:
    """The table in the Arrow IPC file `path` (memory-mapped), checked as `read_parquet` does."""
    try:
        return _check_schema(ipc.open_file(pa.memory_map(str(path))).read_all(), schema)
    except _BAD as exc:
        damaged(path, exc, remove)
        return None


def _files(entry: Path) -> list[str]:
    return sorted(p.relative_to(entry).as_posix() for p in entry.rglob("*") if p.is_file() and p.name != DIGESTS)


def seal(entry: Path, files: list[str] | None = None) -> None:
    """Records the sha256 of `files` (relative paths; every file of `entry` when None) in the
    entry's DIGESTS, beside those recorded before."""
    entry = Path(entry)
    recorded = _recorded(entry) or {}
    recorded.update({rel: sha256_file(entry / rel) for rel in (_files(entry) if files is None else files)})
    write_json(entry / DIGESTS, recorded, sort_keys=True, indent=0)


def _recorded(entry: Path) -> dict[str, str] | None:
    try:
        got = json.loads((Path(entry) / DIGESTS).read_text(encoding="utf-8"))
        return got if isinstance(got, dict) else None
    except (OSError, ValueError):
        return None


def verify(entry: Path, files: list[str] | None = None, remove: bool = True) -> bool:
    """Whether `files` of `entry` (every recorded file when None; then no unrecorded file either)
    are there with the digests `seal` recorded; when not, logs why and (`remove`) deletes the entry."""
    entry = Path(entry)
    recorded = _recorded(entry)
    if recorded is None:
        why = f"no readable {DIGESTS}"
    else:
        names = sorted(recorded) if files is None else files
        extra = sorted(set(_files(entry)) - set(recorded)) if files is None else []
        why = next((f"{rel} is not recorded" for rel in names if rel not in recorded), None) or \
            next((f"{rel} is missing or differs from when it was written" for rel in names
                  if not (entry / rel).is_file() or sha256_file(entry / rel) != recorded[rel]), None) or \
            (f"{extra[0]} was not part of it" if extra else None)
    if why is not None:
        damaged(entry, why, remove)
        return False
    return True


def publish_dir(tmp: Path, entry: Path) -> Path:
    """Seals the directory `tmp` and renames it to `entry` (replacing an older one)."""
    seal(tmp)
    if entry.exists():
        shutil.rmtree(entry)
    os.replace(tmp, entry)
    return entry


def keep_newest(directory: Path, keep: int, pattern: str = "*") -> None:
    """Deletes all but the `keep` most recently used entries of `directory` (files or folders,
    hidden temporaries left alone)."""
    if not Path(directory).is_dir():
        return
    entries = sorted((p for p in Path(directory).glob(pattern) if not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in entries[keep:]:
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)


def touch(path: Path) -> None:
    """Marks an entry as used now (`keep_newest` keeps the most recently used)."""
    try:
        os.utime(path)
    except OSError:
        pass


class ShardStore:
    """Rows keyed by `key` (the first column of `schema`) as Parquet shards in one directory.

    A shard is written once, sorted by key and named by the sha256 of its keys, and never modified;
    `load` reads every shard with `read_parquet` (a damaged one is skipped, logged and removed, so
    its rows are computed again) and finds rows with one join, never a file per row. More than
    `max_shards` shards are merged into one on the next `add`."""

    def __init__(self, directory: Path | None, schema: pa.Schema, max_shards: int | None = None):
        if schema.field(0).name != "key":
            raise ValueError("a shard store's first column is its key")
        self.dir = None if directory is None else Path(directory)
        self.schema = schema
        self.max_shards = max_shards

    def shards(self) -> list[Path]:
        return sorted(self.dir.glob("*.parquet")) if self.dir is not None and self.dir.is_dir() else []

    def _tables(self) -> list[pa.Table]:
        return [t for t in (read_parquet(p, self.schema) for p in self.shards()) if t is not None]

    def load(self, keys: pl.Series | None = None) -> pl.DataFrame:
        """Every stored row (only those whose key is in `keys`, when given), one per key."""
        tables = self._tables()
        if not tables:
            return pl.from_arrow(self.schema.empty_table())
        rows = pl.from_arrow(pa.concat_tables(tables))
        if keys is not None:
            rows = rows.join(pl.DataFrame({"key": keys.unique()}), on="key", how="semi")
        return rows.unique("key", keep="first", maintain_order=True)

    def add(self, rows: pl.DataFrame) -> None:
        """Writes `rows` as one new shard; merges the shards when there are more than max_shards."""
        if self.put(rows) is not None:
            self.compact()

    def put(self, rows: pl.DataFrame) -> Path | None:
        """Writes `rows` as one new shard named `part_name` of its keys, and merges nothing: the
        write of one content-keyed shard of a stage, many of which run at once (`compact` after)."""
        if self.dir is None or rows.is_empty():
            return None
        return self._write(rows)

    def part(self, name: str) -> pl.DataFrame | None:
        """The rows of the shard `name` (`part_name` of its keys) when it is there and reads back
        with the schema (a damaged one is logged and removed), else None."""
        path = None if self.dir is None else self.dir / f"{name}.parquet"
        if path is None or not path.is_file():
            return None
        table = read_parquet(path, self.schema)
        return None if table is None else pl.from_arrow(table)

    def compact(self) -> None:
        """Merges the shards into one when there are more than max_shards; one writer at a time
        (`add`, or the stage that gathered its shards' `put`s)."""
        shards = self.shards()
        if self.max_shards is not None and len(shards) > self.max_shards:
            merged = self._write(pl.from_arrow(pa.concat_tables(self._tables())).unique("key", keep="first"))
            for p in shards:
                if p != merged:
                    p.unlink(missing_ok=True)

    def _write(self, rows: pl.DataFrame) -> Path:
        table = rows.sort("key").to_arrow().select(self.schema.names).cast(self.schema)
        return write_parquet(self.dir / f"{part_name(table.column('key').to_pylist())}.parquet", table)


def cut_by_key(todo: pl.DataFrame, size: int, spread: int = 1) -> list[tuple[int, str, pa.Table]]:
    """`todo` (sorted by its `key` column) cut in order into parts of `size` rows, or fewer so that
    there are at least `spread` parts: (index, its name by content (`part_name` of its keys), its
    rows). The same rows give the same parts whatever their order or whatever runs them."""
    size = max(1, min(size, -(-todo.height // max(1, spread))))
    parts = (todo.slice(start, size) for start in range(0, todo.height, size))
    return [(i, part_name(part["key"].to_list()), part.to_arrow()) for i, part in enumerate(parts)]


def part_name(keys: list[str]) -> str:
    """The name of a `ShardStore` shard holding `keys`: the sha256 of the sorted keys, 20 hex digits."""
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:20]


def empty(schema: pa.Schema) -> pl.DataFrame:
    """A frame of `schema` with no rows."""
    return pl.from_arrow(schema.empty_table())


def worker_id() -> str:
    """This process as run marks name it: `<host>-<pid>`."""
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True)
class ShardDone:
    """What running one content-keyed shard of a stage did: the worker that ran it, the workers
    whose earlier runs of it were lost (`RunMarks`), how many items it computed (texts embedded,
    files scanned, formulas parsed: 0 when its result was stored already) and seconds."""

    index: int
    key: str
    worker: str
    lost: tuple[str, ...]
    computed: int
    seconds: float


@dataclass(frozen=True)
class KeyedShard:
    """Distinct items of a stage to compute, the rows of `todo` sorted by their `key` column; `key`
    names the cache shard they are stored as (`part_name` of their keys)."""

    index: int
    key: str
    todo: pa.Table = field(repr=False)


@dataclass(frozen=True)
class RowsDone(ShardDone):
    """What running one keyed shard did (`ShardDone`) and its rows, in the schema of its cache."""

    rows: pa.Table = field(repr=False)


def plan_keyed(todo: pl.DataFrame, size: int, spread: int = 1) -> list[KeyedShard]:
    """`todo` (sorted by `key`) as `KeyedShard`s of `size` rows, or fewer so that there are at least
    `spread` (`cut_by_key`)."""
    return [KeyedShard(*part) for part in cut_by_key(todo, size, spread)]


class RunMarks:
    """Which processes started one content-keyed shard of a stage (on a task runner's thread or a
    Dask worker): an empty file `.run-<key>-<worker>` per start, in the directory the shard's
    result goes to, all removed once the result is stored. A mark another process left is a run
    that never stored its result (its worker was lost), so the run after it can say so."""

    PREFIX = ".run-"

    def __init__(self, directory: Path, key: str):
        self.dir, self.key = Path(directory), key

    def _marks(self) -> list[Path]:
        return sorted(self.dir.glob(f"{self.PREFIX}{self.key}-*")) if self.dir.is_dir() else []

    def start(self) -> list[str]:
        """Marks this process's run; the workers of earlier runs that left their mark (lost runs)."""
        me = worker_id()
        lost = [p.name.removeprefix(f"{self.PREFIX}{self.key}-") for p in self._marks()]
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / f"{self.PREFIX}{self.key}-{me}").touch()
        return [w for w in lost if w != me]

    def done(self) -> None:
        """The result is stored: every mark of the shard goes."""
        for p in self._marks():
            p.unlink(missing_ok=True)


def stored_or_computed(store: ShardStore | None, key: str, label: str, compute: Callable[[], pl.DataFrame],
                       keep: Callable[[pl.DataFrame], pl.DataFrame] = lambda rows: rows,
                       ) -> tuple[pl.DataFrame, int, tuple[str, ...]]:
    """Runs one content-keyed shard against its `store` (None: no cache): marks the run first, so
    that a rerun after a lost one says so (a warning naming `label`), reads the shard's rows back
    when they are stored, else computes them and stores `keep(rows)`. (rows, how many were
    computed: 0 when read back, the workers of the lost runs)."""
    marks = RunMarks(store.dir, key) if store is not None else None
    lost = tuple(marks.start()) if marks is not None else ()
    if lost:
        log.warning("%s (%s): run again on %s after a lost run on %s", label, key, worker_id(), ", ".join(lost))
    rows = store.part(key) if store is not None else None
    computed = 0
    if rows is None:
        rows = compute()
        computed = rows.height
        if store is not None:
            store.put(keep(rows))
    if marks is not None:
        marks.done()
    return rows, computed, lost


def run_keyed(shard: KeyedShard, store: ShardStore | None, label: str, compute: Callable[[], pl.DataFrame],
              keep: Callable[[pl.DataFrame], pl.DataFrame] = lambda rows: rows) -> RowsDone:
    """`stored_or_computed` for one keyed shard (`label` and its index name it in the log), timed."""
    t0 = time.perf_counter()
    rows, computed, lost = stored_or_computed(store, shard.key, f"{label} {shard.index}", compute, keep)
    return RowsDone(shard.index, shard.key, worker_id(), lost, computed, time.perf_counter() - t0, rows.to_arrow())
