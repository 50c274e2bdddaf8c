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
MAX_PARTS = 16  # more token cache shards than this are merged into one (`ShardStore.compact`)


def token_store(cache_dir: Path | None) -> ShardStore:
    """The token cache under a root's cache directory (None: nowhere), for this code."""
    return ShardStore(None if cache_dir is None else CacheLayout(cache_dir).tokens(TOKENS.digest()), TOKEN_ROWS, MAX_PARTS)


def uncached(rows: pl.DataFrame, cache_dir: Path | None, informal: pl.Series | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(key, tokens) the token cache holds of `rows` (key, text), and the other distinct keys to
    tokenise (key, text, informal: whether the text's glosses are stripped first), in input order."""
    known = token_store(cache_dir).load(rows.get_column("key"))
    rows = rows.with_columns(informal=informal if informal is not None else pl.lit(False))
    todo = rows.join(known, on="key", how="anti").unique("key", keep="first", maintain_order=True)
    return known, todo.select("key", "text", "informal")


def tokenised(todo: pl.DataFrame) -> pl.DataFrame:
    """(key, tokens) of `todo` (key, text, informal): the tokens joined by spaces."""
    flags, texts = todo.get_column("informal").to_list(), todo.get_column("text").to_list()
    return pl.DataFrame({"key": todo.get_column("key"), "tokens": [
        " ".join(tokens(without_context(t) if f else t)) for t, f in zip(texts, flags)]},
        schema={"key": pl.String, "tokens": pl.String})


def cached_tokens(rows: pl.DataFrame, cache_dir: Path | None, informal: pl.Series | None) -> pl.DataFrame:
    """(key, tokens) for every distinct key of `rows` (key, text): from the token cache, the rest
    tokenised now, in this process, and added to it; `informal` marks the texts whose glosses are
    stripped first."""
    known, todo = uncached(rows, cache_dir, informal)
    if todo.height:
        new = tokenised(todo)
        token_store(cache_dir).add(new)
        known = pl.concat([known, new])
    log.info("lexical index: %d texts, %d tokenised, %d from the cache", rows.height, todo.height, rows.height - todo.height)
    return known
