"""One dependency level's informalisation as content-keyed shards: the declarations of a level the
informal cache lacks, distinct by cache key (which covers the statement and the dependencies'
renderings shown as context), cut into shards by key (`plan_shards`); one shard rendered and its
ok answers stored in the root's informal cache (`informalise.informal_store`) under its key by
whichever process runs it (`render_shard`: a task runner's thread or a Dask worker). The level's
answers are read back by key in level order (`sharded_renderer`), so the informalisations are the
same whatever ran the shards, how many there were, or in what order they finished.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.cache.shards import RunMarks, ShardDone, cut_by_key, worker_id
from mathindex.informal.informalise import (
    FLUSH_ROWS,
    InformalInput,
    Informaliser,
    Renderer,
    Rendering,
    informal_store,
)

log = logging.getLogger(__name__)

# declarations a shard of the rules renders: whole Mathlib's largest level (79,631) makes 4 shards,
# each a few seconds of one core
SHARD_ITEMS = 20_000
# a remote informaliser's shard: what it stores at once (a killed run keeps every finished shard),
# asked `concurrency` requests at a time (informal.http)
REMOTE_SHARD_ITEMS = FLUSH_ROWS
_TEXT = ("full_name", "kind", "signature", "type", "docstring")
ANSWERS = pa.schema([("key", pa.string()), ("text", pa.string()), ("status", pa.string()), ("reason", pa.string())])


@dataclass(frozen=True)
class InformalShard:
    """Distinct declarations of one level to render (key, the statement's columns, the context's
    names and texts), sorted by key; `key` names the informal cache shard their answers are stored as
    (`cache.shards.part_name` of their keys); `level` counts the levels that had any to render."""

    level: int
    index: int
    key: str
    todo: pa.Table = field(repr=False)


@dataclass(frozen=True)
class RenderedShard(ShardDone):
    """What rendering one shard did (`cache.shards.ShardDone`: `computed` is the declarations
    rendered), with its answers (ANSWERS, ok or not) and why its informaliser gave its endpoint up
    (None while it asks)."""

    rows: pa.Table = field(repr=False)
    closed: str | None = None


def default_shard_items(informaliser: Informaliser) -> int:
    """Declarations a shard: REMOTE_SHARD_ITEMS for a backend that asks a host, else SHARD_ITEMS."""
    return REMOTE_SHARD_ITEMS if informaliser.endpoint is not None else SHARD_ITEMS


def plan_shards(level: int, inputs: list[InformalInput], keys: list[str], shard_items: int,
                spread: int = 1) -> list[InformalShard]:
    """The declarations `inputs` (with their cache `keys`) of `level`, one per key, sorted by key and
    cut into shards of `shard_items`, or fewer so that there are at least `spread`."""
    cols = {c: [getattr(item, c) for item in inputs] for c in _TEXT}
    todo = pl.DataFrame({
        "key": keys, **cols, "context_names": [[n for n, _ in item.context] for item in inputs],
        "context_texts": [[t for _, t in item.context] for item in inputs],
    }, schema={"key": pl.String, **{c: pl.String for c in _TEXT},
               "context_names": pl.List(pl.String), "context_texts": pl.List(pl.String)})
    return [InformalShard(level, *part) for part in cut_by_key(todo.unique("key").sort("key"), shard_items, spread)]


def _inputs(todo: pa.Table) -> list[InformalInput]:
    return [InformalInput(r["full_name"], r["kind"], r["signature"], r["type"], r["docstring"],
                          tuple(zip(r["context_names"], r["context_texts"]))) for r in todo.to_pylist()]


def render_shard(shard: InformalShard, informaliser: Informaliser, cache_dir: Path | None) -> RenderedShard:
    """Renders one shard with `informaliser` and stores its ok answers in the informal cache under
    `cache_dir` (None: nowhere). Answers stored already are read back instead: the whole shard under
    its key, or, on a rerun after a lost run (marked first, so that a rerun names it), whatever
    that run had stored."""
    t0 = time.perf_counter()
    store = informal_store(cache_dir, informaliser.endpoint is not None) if cache_dir is not None else None
    marks = RunMarks(store.dir, shard.key) if store is not None else None
    lost = marks.start() if marks is not None else []
    if lost:
        log.warning("informal shard %d of level %d (%s): run again on %s after a lost run on %s", shard.index,
                    shard.level, shard.key, worker_id(), ", ".join(lost))
    keys = shard.todo.column("key").to_pylist()
    stored = store.part(shard.key) if store is not None else None
    if stored is None and lost:
        stored = store.load(pl.Series(keys))
    found = {} if stored is None else dict(zip(stored["key"].to_list(), stored["text"].to_list()))
    todo = shard.todo.filter(pa.array([k not in found for k in keys], pa.bool_())) if found else shard.todo
    answers = dict(zip(todo.column("key").to_pylist(), informaliser.render_many(_inputs(todo))))
    ok = [(k, r.text) for k, r in answers.items() if r.status == "ok"]
    if store is not None:
        store.put(pl.DataFrame(ok, schema={"key": pl.String, "text": pl.String}, orient="row"))
        marks.done()
    rows = [(k, *((found[k], "ok", None) if k in found else (answers[k].text, answers[k].status, answers[k].reason)))
            for k in keys]
    return RenderedShard(shard.index, shard.key, worker_id(), tuple(lost), todo.num_rows, time.perf_counter() - t0,
                         pa.Table.from_pylist([dict(zip(ANSWERS.names, r)) for r in rows], schema=ANSWERS),
                         informaliser.closed())


def sharded_renderer(run: Callable[[list[InformalShard]], list[RenderedShard]], shard_items: int,
                     spread: int = 1) -> Renderer:
    """A `Renderer` for `informalise.informalise_reported`: each level's declarations as shards
    (`plan_shards`) given to `run` (the flow's task runner, through `tasks.shards.run_shards`),
    their answers read back by key in level order."""
    levels = count()

    def render(inputs: list[InformalInput], keys: list[str]) -> list[Rendering]:
        answers: dict[str, Rendering] = {}
        for done in run(plan_shards(next(levels), inputs, keys, shard_items, spread)):
            for r in done.rows.to_pylist():
                answers[r["key"]] = Rendering(r["text"], r["status"], r["reason"])
        return [answers[k] for k in keys]
    return render
