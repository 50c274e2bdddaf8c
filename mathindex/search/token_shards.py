"""The lexical index's tokens as content-keyed shards: the distinct texts the token cache lacks, cut
into shards by key (`plan_shards`), and one shard tokenised and stored in the root's token cache
under its key by whichever process runs it (`tokenise_shard`: a task runner's thread or a Dask
worker). A text's tokens depend only on its text (and its key's `:informal`), so the index is the
same whatever ran the shards or in what order they finished (`search.lexical.write_text_index`)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mathindex.cache.shards import KeyedShard, RowsDone, plan_keyed, run_keyed
from mathindex.search.token_cache import token_store, tokenised


# distinct texts a shard tokenises: about 2 s of one core on whole Mathlib's texts (26 s of CPU for
# its 684,980: 14 shards); a worker holds one shard's texts and tokens (about 32 MB) at a time
SHARD_TEXTS = 50_000


def plan_shards(todo: pl.DataFrame, shard_texts: int = SHARD_TEXTS, spread: int = 1) -> list[KeyedShard]:
    """`todo` (key, text, informal: the distinct texts to tokenise) sorted by key and cut into shards
    of `shard_texts`, or fewer so that there are at least `spread`, each named by its content."""
    return plan_keyed(todo.select("key", "text", "informal").sort("key"), shard_texts, spread)


def tokenise_shard(shard: KeyedShard, cache_dir: Path | None) -> RowsDone:
    """Tokenises one shard and stores its rows in the token cache under `cache_dir` (None: nowhere);
    when that cache shard is there already (a rerun after a lost worker that had stored it) its
    rows are read back instead. The run is marked first, so that a rerun names a lost one. Its rows:
    (key, tokens); `computed`: the texts tokenised."""
    store = token_store(cache_dir) if cache_dir is not None else None
    return run_keyed(shard, store, "token shard", lambda: tokenised(pl.from_arrow(shard.todo)))
