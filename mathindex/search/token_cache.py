"""The token cache: a text's BM25 tokens (`search.text.tokens`, an informal rendering without its
glosses first) kept under the root's cache, keyed by the text's sha256 in a folder per digest of
the code that makes them (`cache.codes.TOKENS`: this module and what it imports)."""

from __future__ import annotations

import logging
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import ShardStore
from mathindex.cache.codes import TOKENS
from mathindex.informal.rules import without_context
from mathindex.search.text import tokens

log = logging.getLogger(__name__)
TOKEN_ROWS = pa.schema([("key", pa.string()), ("tokens", pa.string())])


def cached_tokens(rows: pl.DataFrame, cache_dir: Path | None, informal: pl.Series | None) -> pl.DataFrame:
    """(key, tokens) for every distinct key of `rows` (key, text): from the token cache, the rest
    tokenised now and added to it; `informal` marks the texts whose glosses are stripped first."""
    cache = ShardStore(None if cache_dir is None else CacheLayout(cache_dir).tokens(TOKENS.digest()), TOKEN_ROWS)
    known = cache.load(rows.get_column("key"))
    if informal is not None:
        rows = rows.with_columns(informal=informal)
    todo = rows.join(known, on="key", how="anti").unique("key", keep="first", maintain_order=True)
    if todo.height:
        flags = todo.get_column("informal").to_list() if informal is not None else [False] * todo.height
        new = pl.DataFrame({"key": todo.get_column("key"), "tokens": [
            " ".join(tokens(without_context(t) if f else t)) for t, f in zip(todo.get_column("text").to_list(), flags)]},
            schema={"key": pl.String, "tokens": pl.String})
        cache.add(new)
        known = pl.concat([known, new])
    log.info("lexical index: %d texts, %d tokenised, %d from the cache", rows.height, todo.height, rows.height - todo.height)
    return known
