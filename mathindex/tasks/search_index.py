"""Search-structure tasks: the `nodes` and `same_as` tables and the lexical (BM25) index, its texts'
tokens made in content-keyed shards through the flow's task runner on a cluster (`lexical_in_shards`)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
from prefect.logging import get_run_logger

from mathindex.cache.shards import KeyedShard, RowsDone
from mathindex.search.lexical import BM25_B, BM25_K1, build_text_index, informal_texts, text_rows, write_text_index
from mathindex.search.nodes import build_nodes
from mathindex.search.sameas import same_as_table
from mathindex.search.token_cache import token_store, uncached
from mathindex.search.token_shards import SHARD_TEXTS, plan_shards, tokenise_shard
from mathindex.store.layout import ReleaseLayout
from mathindex.tasks import IndexBuild, io_stage, stage
from mathindex.tasks.shards import run_shards, runner_is_local, size_from_env

SHARD_ENV = "MATHINDEX_LEXICAL_SHARD_TEXTS"  # smaller shards spread a small corpus over more workers (the tests)
# A local run tokenises the texts in one loop in the stage's thread, not as shards on the flow's
# threads (the tokenizer is Python: the threads share one GIL): whole Mathlib's 689,745 texts cold,
# 32.7 s wall / 26.2 s CPU against 33.9 s / 26.7 s on a shard a core (3 rounds, median,
# bench/lexical_runner.py, 2-core Xeon with AMX, loaded).
LOCAL_LOOP = True
METHOD = f"bm25 (bm25s, lucene, k1 {BM25_K1}, b {BM25_B})"


@stage(name="build_nodes")
def nodes_table(declarations: pa.Table, statements: pa.Table, dependencies: pa.Table, citations: pa.Table) -> pa.Table:
    return build_nodes(declarations, statements, dependencies, citations)


@stage(name="build_same_as")
def same_as_edges(declarations: pa.Table, statements: pa.Table) -> pa.Table:
    """Declarations and the LaTeX statements their `@[stacks TAG]` attributes cite (search/sameas.py)."""
    return same_as_table(declarations, statements)


def token_shard_texts(default: int = SHARD_TEXTS) -> int:
    """Distinct texts a token shard: $MATHINDEX_LEXICAL_SHARD_TEXTS when set, else `default`."""
    return size_from_env(SHARD_ENV, default)


@stage(name="build_lexical_index")
def lexical_index(texts: pa.Table, release_dir: Path, cache_dir: Path | None = None) -> IndexBuild:
    """BM25 over one document per node; texts' tokens are cached under `cache_dir` (`build_text_index`)."""
    documents = build_text_index(texts, ReleaseLayout(release_dir).lexical, cache_dir)
    return IndexBuild("lexical", {"documents": documents, "method": METHOD})


@dataclass(frozen=True)
class TokenPlan:
    """The stage's text rows (`lexical.text_rows`), the tokens the cache held, and the other
    distinct texts as content-keyed shards; `started` (perf_counter) for the log."""

    rows: pl.DataFrame = field(repr=False)
    found: pl.DataFrame = field(repr=False)
    shards: list[KeyedShard] = field(repr=False)
    started: float


@stage(name="plan_token_shards")
def plan_token_shards(texts: pa.Table, cache_dir: Path | None, shard_size: int, spread: int) -> TokenPlan:
    """What the token cache under `cache_dir` holds of the texts, and the rest as shards."""
    started = time.perf_counter()
    rows = text_rows(texts)
    found, todo = uncached(rows.select("key", "text"), cache_dir, informal_texts(rows))
    return TokenPlan(rows, found, plan_shards(todo, shard_size, spread), started)


tokenise_shard_task = io_stage(name="tokenise_text_shard", task_run_name="token-shard-{shard.index}")(tokenise_shard)


@stage(name="merge_token_shards")
def merge_token_shards(plan: TokenPlan, done: list[RowsDone], release_dir: Path,
                       cache_dir: Path | None) -> IndexBuild:
    """The reduce: the cached tokens and the shards' (one row a key, whatever the shards' number or
    finish order) joined to the texts, the lexical index written; the token cache's shards merged
    when they are many (`ShardStore.compact`, this process the one writer)."""
    known = pl.concat([plan.found, *(pl.from_arrow(d.rows) for d in done)]).unique("key", keep="first", maintain_order=True)
    if cache_dir is not None:
        token_store(cache_dir).compact()
    documents = write_text_index(plan.rows, known, ReleaseLayout(release_dir).lexical)
    get_run_logger().info("lexical tokens: %d texts, %d cached, %d tokenised in %d shards on %s (%.1f s; stage %.1f s)",
                          plan.rows.height, plan.found.height, sum(d.computed for d in done), len(done),
                          ", ".join(sorted({d.worker for d in done})) or "none", sum(d.seconds for d in done),
                          time.perf_counter() - plan.started)
    return IndexBuild("lexical", {"documents": documents, "method": METHOD})


def lexical_in_shards(texts: pa.Table, release_dir: Path, cache_dir: Path | None,
                      shard_size: int = SHARD_TEXTS) -> IndexBuild:
    """The lexical stage. On the flow's thread pool with LOCAL_LOOP, one task tokenising in its own
    thread (`lexical_index`); else the texts the token cache lacks as shards through the flow's task
    runner (`search.token_shards.tokenise_shard`: on Dask all at once, locally a shard a core), each
    stored in the root's token cache, and one reduce (`merge_token_shards`)."""
    local = runner_is_local()
    if local and LOCAL_LOOP:
        return lexical_index(texts, release_dir, cache_dir)
    cores = os.cpu_count() or 1
    plan = plan_token_shards(texts, cache_dir, shard_size, cores if local else 1)
    done = run_shards(tokenise_shard_task, plan.shards, "lexical tokens", cores if local else None, cache_dir=cache_dir)
    return merge_token_shards(plan, done, release_dir, cache_dir)
