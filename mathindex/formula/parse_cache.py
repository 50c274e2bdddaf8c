"""The parse cache: what `api.parse_formulas` computes for a formula, keyed by its content.

A formula's tree, tree_text, path tokens, parser, status, canonical form and the reasons its
`errors` rows carry depend only on its text, its source (lean or latex) and the code that makes
them. Entries live as Parquet parts under `<cache>/formulas/<version>/`, one directory per code
version (`code_version`), and are found with one polars join, never one file per formula.
"""

from __future__ import annotations

import hashlib
import logging
import os
from importlib import metadata
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

log = logging.getLogger(__name__)

# One row per (text, source): the FORMULA_TREES columns less formula_id, plus what `errors` needs.
SCHEMA = pa.schema([
    pa.field("key", pa.string(), nullable=False),  # content_key(text, lean)
    pa.field("parser", pa.string(), nullable=False),
    pa.field("status", pa.string(), nullable=False),
    pa.field("tree", pa.string(), nullable=False),
    pa.field("tree_text", pa.string(), nullable=False),
    pa.field("path_tokens", pa.list_(pa.string()), nullable=False),
    pa.field("canonical", pa.string()),
    pa.field("canonical_status", pa.string(), nullable=False),
    pa.field("reason", pa.string()),  # why the grammar rejected the text (a parse_formula error)
    pa.field("canonical_reason", pa.string()),  # why SymPy gave no form (a canonical_form error)
])
# The formula index's per-tree features (`index.features`), keyed by the tree's digest.
FEATURES = pa.schema([
    pa.field("key", pa.string(), nullable=False),  # blake2b-128 hex of the tree JSON (the group key)
    pa.field("hash_val", pa.list_(pa.int64()), nullable=False),  # distinct subtree keys, ascending
    pa.field("hash_size", pa.list_(pa.int32()), nullable=False),  # the size of each
    pa.field("sym_val", pa.list_(pa.int64()), nullable=False),
    pa.field("size", pa.int32(), nullable=False),
    pa.field("exact", pa.int64(), nullable=False),  # h64 of the tree JSON
])
# Modules that read parse results but never make them: editing them keeps the parse cache.
_NOT_MAKERS = frozenset({"parse_cache.py", "formula_index.py"})
_LIBRARIES = ("sympy", "latex2mathml", "lxml")
MAX_PARTS = 16  # more parts than this are merged into one on the next write


def content_key(text: str, lean: bool) -> str:
    """sha256 hex of (source, text): the cache key of one formula."""
    return hashlib.sha256(("lean" if lean else "latex").encode() + b"\0" + text.encode("utf-8")).hexdigest()


def code_version(budget_s: float, package: Path = Path(__file__).parent,
                 skip: frozenset[str] = _NOT_MAKERS) -> str:
    """A digest of what makes the cached rows: the formula package's sources (less `skip`),
    the versions of SymPy, latex2mathml and lxml, and the SymPy budget (it decides `timeout`)."""
    h = hashlib.sha256()
    for path in sorted(Path(package).glob("*.py")):
        if path.name not in skip:
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for dist in _LIBRARIES:
        try:
            h.update(f"{dist}={metadata.version(dist)}\0".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist}=none\0".encode())
    h.update(f"budget={float(budget_s)!r}".encode())
    return h.hexdigest()[:20]


def features_version() -> str:
    """The code version of the index features: every formula module but this one."""
    return code_version(0.0, skip=frozenset({"parse_cache.py"}))


class ParseCache:
    """Cached rows of one code version under `root/<kind>/<version>/`, as Parquet parts of `schema`
    (parse results: kind `formulas`, `SCHEMA`; index features: `formula-features`, `FEATURES`).

    A part is complete once renamed into place; a part that cannot be read, or has another schema,
    is logged, removed and its rows made again."""

    def __init__(self, root: Path, version: str, kind: str = "formulas", schema: pa.Schema = SCHEMA) -> None:
        self.dir = Path(root) / kind / version
        self.schema = schema

    def parts(self) -> list[Path]:
        return sorted(self.dir.glob("*.parquet")) if self.dir.exists() else []

    def lookup(self, keys: pl.Series) -> pl.DataFrame:
        """The cached rows (`SCHEMA`) of those of `keys` that are in the cache, one per key."""
        tables = [t for t in (self._read(p) for p in self.parts()) if t is not None]
        if not tables:
            return empty(self.schema)
        found = pl.from_arrow(pa.concat_tables(tables))
        return found.join(pl.DataFrame({"key": keys.unique()}), on="key", how="semi").unique("key", keep="first")

    def add(self, rows: pl.DataFrame) -> None:
        """Stores `rows` (`SCHEMA`) as one new part named by the sha256 of its keys; merges the parts
        into one when there are more than MAX_PARTS."""
        if rows.is_empty():
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        self._write(rows.sort("key"))
        parts = self.parts()
        if len(parts) > MAX_PARTS:
            merged = self._write(pl.concat([pl.from_arrow(t) for t in map(self._read, parts) if t is not None])
                                 .unique("key", keep="first").sort("key"))
            for p in parts:
                if p != merged:
                    p.unlink(missing_ok=True)

    def _write(self, rows: pl.DataFrame) -> Path:
        name = hashlib.sha256("\n".join(rows["key"].to_list()).encode()).hexdigest()[:20]
        path = self.dir / f"{name}.parquet"
        tmp = self.dir / f".{name}.{os.getpid()}.tmp"
        pq.write_table(rows.to_arrow().cast(self.schema), tmp, compression="zstd")
        os.replace(tmp, path)
        return path

    def _read(self, path: Path) -> pa.Table | None:
        try:
            t = pq.read_table(path)
            if not t.schema.equals(self.schema, check_metadata=False):
                raise ValueError("columns differ from the cache schema")
            return t
        except Exception as exc:  # noqa: BLE001 - any unreadable part is dropped, never fatal
            log.warning("formula cache: ignoring and removing corrupt part %s (%s)", path, str(exc).splitlines()[0][:200])
            path.unlink(missing_ok=True)
            return None


def empty(schema: pa.Schema = SCHEMA) -> pl.DataFrame:
    """A cache frame with no rows."""
    return pl.from_arrow(schema.empty_table())
