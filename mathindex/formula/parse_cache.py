"""The parse cache: what `api.parse_formulas` computes for a formula, keyed by its content.

A formula's tree, tree_text, path tokens, parser, status, canonical form and the reasons its
`errors` rows carry depend only on its text, its source (lean or latex) and the code that makes
them. Entries are `cache.ShardStore` shards in `CacheLayout.formulas(<version>)`, one folder per
code digest and SymPy budget (`parse_version`), found with one polars join, never one file per
formula. The formula index's per-tree features are kept the same way (`features_cache`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import ShardStore
from mathindex.cache.codes import FORMULA_FEATURES, FORMULAS
from mathindex.cache.shards import empty as empty_rows

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
MAX_PARTS = 16  # more shards than this are merged into one on the next write


def content_key(text: str, lean: bool) -> str:
    """sha256 hex of (source, text): the cache key of one formula."""
    return hashlib.sha256(("lean" if lean else "latex").encode() + b"\0" + text.encode("utf-8")).hexdigest()


def parse_version(budget_s: float) -> str:
    """The folder of the parse rows: the digest of the code that makes them (`cache.codes.FORMULAS`,
    with SymPy, latex2mathml and lxml) and the SymPy budget (it decides `timeout`)."""
    return hashlib.sha256(f"{FORMULAS.digest()}\0budget={float(budget_s)!r}".encode()).hexdigest()[:20]


def parse_cache(cache_dir: Path, budget_s: float) -> ShardStore:
    """The parse rows (`SCHEMA`) under a root's cache directory, for this code and budget."""
    return ShardStore(CacheLayout(cache_dir).formulas(parse_version(budget_s)), SCHEMA, MAX_PARTS)


def features_cache(cache_dir: Path) -> ShardStore:
    """The formula index's tree features (`FEATURES`) under a root's cache directory, for this code
    (`cache.codes.FORMULA_FEATURES`)."""
    return ShardStore(CacheLayout(cache_dir).formula_features(FORMULA_FEATURES.digest()), FEATURES, MAX_PARTS)


def empty(schema: pa.Schema = SCHEMA) -> pl.DataFrame:
    """A cache frame with no rows."""
    return empty_rows(schema)
