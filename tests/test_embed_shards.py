"""The embed stage's content-keyed shards (issue 32): planned by content, stored in the embedding
cache under their key, a rerun skipped; run marks name a lost run; the shard runner keeps shard
order and resubmits a shard lost with its worker, saying so in the log."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from mathindex.cache.shards import RunMarks, worker_id
from mathindex.embed.embedder import EMBED_BACKEND, EmbeddingCache, onnx_dir_for
from mathindex.embed.shards import EmbedderSpec, embed_shard, load_embedder, missing_texts, plan_shards
from mathindex.tasks.shards import run_shards

TEXTS = ["a group is a monoid with inverses", "every prime above two is odd", "x", "the sum of two even numbers is even",
         "every prime above two is odd"]  # fmt: skip


def _table(texts: list[str]) -> pa.Table:
    return pa.table({"text": texts, "sha256": [hashlib.sha256(t.encode()).hexdigest() for t in texts]})


class _NoCache:
    def contains(self, keys):
        return np.zeros(len(keys), dtype=bool)


def test_shards_are_planned_by_content_shortest_first():
    keys, todo = missing_texts(_table(TEXTS), _NoCache())
    assert todo.to_pylist() == sorted(set(TEXTS), key=len)  # distinct lengths here; ties go by key
    shards = plan_shards(keys, todo, 3)
    assert [len(s.texts) for s in shards] == [3, 1] and [s.index for s in shards] == [0, 1]
    again = plan_shards(*missing_texts(_table(list(reversed(TEXTS))), _NoCache()), 3)
    assert [(s.key, s.texts.to_pylist()) for s in again] == [(s.key, s.texts.to_pylist()) for s in shards]


def test_run_marks_name_a_lost_run_and_go_when_the_shard_is_stored(tmp_path):
    (tmp_path / f"{RunMarks.PREFIX}abc-otherhost-4242").touch()  # a run whose worker died
    marks = RunMarks(tmp_path, "abc")
    assert marks.start() == ["otherhost-4242"]
    assert (tmp_path / f"{RunMarks.PREFIX}abc-{worker_id()}").is_file()
    assert RunMarks(tmp_path, "other").start() == []
    marks.done()
    assert [p.name for p in tmp_path.iterdir()] == [f"{RunMarks.PREFIX}other-{worker_id()}"]


@pytest.mark.slow
def test_a_shard_is_stored_under_its_key_and_a_rerun_embeds_nothing(tmp_path):
    spec = EmbedderSpec(None, EMBED_BACKEND, str(onnx_dir_for(tmp_path)), workers=1)
    embedder = load_embedder(spec)
    spec = spec.named(embedder)
    (shard,) = plan_shards(*missing_texts(_table(TEXTS), EmbeddingCache(tmp_path, embedder.name, embedder.revision, embedder.dim)))
    first = embed_shard(shard, spec, tmp_path)
    cache = EmbeddingCache(tmp_path, embedder.name, embedder.revision, embedder.dim)
    assert first.computed == 4 and first.lost == () and (cache.dir / f"{shard.key}.keys.npy").is_file()
    found, vectors = cache.lookup(shard.raw_keys())
    assert found.all() and np.array_equal(vectors, embedder.encode(shard.texts.to_pylist()))
    (cache.dir / f"{RunMarks.PREFIX}{shard.key}-gone-1").touch()
    again = embed_shard(shard, spec, tmp_path)
    assert again.computed == 0 and again.lost == ("gone-1",)
    assert not list(cache.dir.glob(f"{RunMarks.PREFIX}*"))
    assert not missing_texts(_table(TEXTS), cache)[1]


class KilledWorker(Exception):
    """Named as distributed's (`tasks.is_transient` goes by class name)."""


@dataclass(frozen=True)
class _Shard:
    index: int
    key: str


def test_the_shard_runner_keeps_order_and_resubmits_a_lost_shard(prefect_harness, caplog):
    runs: list[int] = []  # in the closure: Prefect copies a flow's parameters

    @task(name="shard", cache_policy=NO_CACHE, persist_result=False)  # no retries of its own: the runner's
    def shard_task(shard: _Shard, scale: int) -> int:
        runs.append(shard.index)
        if shard.index == 1 and runs.count(1) == 1:
            raise KilledWorker("worker tcp://127.0.0.1:1 died")  # as a future raises it when Dask gives up
        return shard.index * scale

    @flow
    def stage() -> list[int]:
        return run_shards(shard_task, [_Shard(i, f"k{i}") for i in range(4)], "test", window=2, scale=10)

    with caplog.at_level(logging.WARNING):
        assert stage() == [0, 10, 20, 30]
    assert runs.count(1) == 2
    assert "test shard 2 of 4 (k1) lost (KilledWorker" in caplog.text
