"""The lexical index's tokens as content-keyed shards: the distinct texts the token cache lacks, cut
into shards by key (`plan_shards`), and one shard tokenised and stored in the root's token cache
under its key by whichever process runs it (`tokenise_shard`: a task runner's thread or a Dask
worker). A text's tokens depend only on its text (and its key's `:informal`), so the index is the
same whatever ran the shards or in what order they finished (`search.lexical.write_text_index`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.cache.shards import ShardDone, cut_by_key, stored_or_computed, worker_id
from mathindex.search.token_cache import token_store, tokenised


# distinct texts a shard tokenises: about 2 s of one core on whole Mathlib's texts (26 s of CPU for
# its 684,980: 14 shards); a worker holds one shard's texts and tokens (about 32 MB) at a time
SHARD_TEXTS = 50_000


@dataclass(frozen=True)
class TokenShard:
    """Distinct texts to tokenise (key, text, informal), sorted by key; `key` names the token cache
    shard they are stored as (`cache.shards.part_name` of their keys)."""

    index: int
    key: str
    todo: pa.Table = field(repr=False)


@dataclass(frozen=True)
class TokenisedShard(ShardDone):
    """What running one shard did (`cache.shards.ShardDone`: `computed` is the texts tokenised), with
    its (key, tokens) rows."""

    rows: pa.Table = field(repr=False)


def plan_shards(todo: pl.DataFrame, shard_texts: int = SHARD_TEXTS, spread: int = 1) -> list[TokenShard]:
    """`todo` (key, text, informal: the distinct texts to tokenise) sorted by key and cut into shards
    of `shard_texts`, or fewer so that there are at least `spread`, each named by its content."""
    return [TokenShard(*part) for part in cut_by_key(todo.select("key", "text", "informal").sort("key"),
                                                      shard_texts, spread)]


def tokenise_shard(shard: TokenShard, cache_dir: Path | None) -> TokenisedShard:
    """Tokenises one shard and stores its rows in the token cache under `cache_dir` (None: nowhere);
    when that cache shard is there already (a rerun after a lost worker that had stored it) its
    rows are read back instead. The run is marked first, so that a rerun names a lost one."""
    t0 = time.perf_counter()
    store = token_store(cache_dir) if cache_dir is not None else None
    rows, computed, lost = stored_or_computed(store, shard.key, f"token shard {shard.index}",
                                              lambda: tokenised(pl.from_arrow(shard.todo)))
    return TokenisedShard(shard.index, shard.key, worker_id(), lost, computed, time.perf_counter() - t0, rows.to_arrow())
