"""The lexical index's token shards (issue 32): planned by content, stored in the token cache under
their key and read back on a rerun that names the lost run; a damaged shard costs a recompute; and
the sample's lexical/ is byte-identical whatever the number of shards or the order they finish."""

from __future__ import annotations

import random
import time
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

import mathindex.tasks.search_index as search_tasks
from mathindex.cache.shards import RunMarks, part_name, worker_id
from mathindex.search.lexical import informal_texts, text_rows
from mathindex.search.token_cache import MAX_PARTS, cached_tokens, token_store, uncached
from mathindex.search.token_shards import plan_shards, tokenise_shard
from mathindex.store.layout import ReleaseLayout
from mathindex.store.releases import published_release
from mathindex.tasks.search_index import (SHARD_ENV, lexical_in_shards, lexical_index, merge_token_shards,
                                          plan_token_shards, token_shard_texts)
from mathindex.tasks.shards import run_shards
from tests.test_bm25 import ROWS, texts_table

MORE = ROWS + [(f"Demo.t{i}", "name_signature", f"theorem Demo.t{i} : {i} + 0 = {i}") for i in range(6)]


def _todo(rows: list, cache_dir: Path | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    keyed = text_rows(texts_table(rows))
    return uncached(keyed.select("key", "text"), cache_dir, informal_texts(keyed))


def test_shards_are_planned_by_content():
    found, todo = _todo(MORE, None)
    assert found.is_empty() and todo.height == 11  # the shared docstring once
    shards = plan_shards(todo, 4)
    assert [s.todo.num_rows for s in shards] == [4, 4, 3] and [s.index for s in shards] == [0, 1, 2]
    assert all(s.key == part_name(s.todo.column("key").to_pylist()) for s in shards)
    assert [(s.key, s.todo) for s in plan_shards(_todo(list(reversed(MORE)), None)[1], 4)] == \
        [(s.key, s.todo) for s in shards]
    assert len(plan_shards(todo, 100, spread=2)) == 2 and plan_shards(todo.clear(), 4) == []


def test_a_stored_shard_is_read_back_and_a_rerun_names_the_lost_run(tmp_path):
    (shard,) = plan_shards(_todo(MORE, tmp_path)[1])
    first = tokenise_shard(shard, tmp_path)
    store = token_store(tmp_path)
    assert first.computed == 11 and first.lost == () and (store.dir / f"{shard.key}.parquet").is_file()
    keyed = text_rows(texts_table(MORE))
    expected = cached_tokens(keyed.select("key", "text"), None, informal_texts(keyed)).sort("key")
    assert pl.from_arrow(first.rows).sort("key").equals(expected)
    (store.dir / f"{RunMarks.PREFIX}{shard.key}-gone-1").touch()  # a run whose worker died
    again = tokenise_shard(shard, tmp_path)
    assert again.computed == 0 and again.lost == ("gone-1",) and again.worker == worker_id()
    assert again.rows.equals(first.rows) and not list(store.dir.glob(f"{RunMarks.PREFIX}*"))
    assert _todo(MORE, tmp_path)[1].is_empty()


def test_a_damaged_shard_costs_a_recompute_not_the_tokens(tmp_path, caplog):
    shards = plan_shards(_todo(MORE, tmp_path)[1], 4)
    expected = pl.concat([pl.from_arrow(tokenise_shard(s, tmp_path).rows) for s in shards]).sort("key")
    damaged = token_store(tmp_path).dir / f"{shards[1].key}.parquet"
    damaged.write_bytes(b"not parquet")
    found, todo = _todo(MORE, tmp_path)
    assert "skipping damaged" in caplog.text and not damaged.exists()
    (replan,) = plan_shards(todo, 4)
    assert replan.key == shards[1].key and tokenise_shard(replan, tmp_path).computed == 4
    assert damaged.is_file()  # stored again under the same content key
    assert pl.concat([found, pl.from_arrow(tokenise_shard(replan, None).rows)]).sort("key").equals(expected)


def test_the_shard_size_comes_from_the_environment(monkeypatch):
    assert token_shard_texts(7) == 7
    monkeypatch.setenv(SHARD_ENV, "40")
    assert token_shard_texts() == 40
    monkeypatch.setenv(SHARD_ENV, "0")
    with pytest.raises(ValueError, match=SHARD_ENV):
        token_shard_texts()


@task(name="shuffled_token_shard", cache_policy=NO_CACHE, persist_result=False)
def _shuffled_shard(shard, cache_dir: Path | None, delays: dict):
    time.sleep(delays[shard.index])  # a later shard may finish first
    return tokenise_shard(shard, cache_dir)


def _files(release_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(ReleaseLayout(release_dir).lexical.iterdir())}


def test_the_sample_lexical_index_does_not_depend_on_the_shards(sample_release_root, tmp_path, monkeypatch):
    """The in-process loop (the local default), one shard, shards of 50 texts a core at a time, and
    shards of 20 two at a time finishing in shuffled order: lexical/ byte-identical to the sample
    release's, and the manifest's figures alike."""
    release = published_release(sample_release_root)
    texts = pq.read_table(ReleaseLayout(release).table("embedding_texts"))
    delays = {i: random.Random(5).random() / 20 for i in range(500)}

    @flow
    def runs() -> tuple[list, int]:
        out = [lexical_index(texts, tmp_path / "loop", tmp_path / "c-loop")]
        plan = plan_token_shards(texts, tmp_path / "c-one", 10**6, 1)
        out.append(merge_token_shards(plan, run_shards(search_tasks.tokenise_shard_task, plan.shards, "test", 1,
                                                       cache_dir=tmp_path / "c-one"), tmp_path / "one", tmp_path / "c-one"))
        monkeypatch.setattr(search_tasks, "LOCAL_LOOP", False)
        out.append(lexical_in_shards(texts, tmp_path / "small", tmp_path / "c-small", 50))
        plan = plan_token_shards(texts, tmp_path / "c-shuffled", 20, 1)
        done = run_shards(_shuffled_shard, plan.shards, "test", 2, cache_dir=tmp_path / "c-shuffled", delays=delays)
        out.append(merge_token_shards(plan, done, tmp_path / "shuffled", tmp_path / "c-shuffled"))
        return out, len(plan.shards)

    results, shuffled_shards = runs()
    assert shuffled_shards > MAX_PARTS and len(token_store(tmp_path / "c-shuffled").shards()) == 1  # merged by the reduce
    for built, name in zip(results, ("loop", "one", "small", "shuffled")):
        assert _files(tmp_path / name) == _files(release), name
        assert built.manifest_entry() == results[0].manifest_entry(), name
