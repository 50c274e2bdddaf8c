"""The formal statements' content-keyed shards (issue 32): planned by content, stored in the facts
cache under their key and read back on a rerun that names the lost run; a damaged facts entry
costs a recompute; and the sample's formal_statements and formal/ are byte-identical whatever the
number of shards or the order they finish."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

import mathindex.tasks.formal as formal_tasks
from mathindex.cache.shards import RunMarks, part_name, worker_id
from mathindex.formal.formal_index import plan_facts, statement_facts, unique_declarations
from mathindex.formal.shards import facts_cache, facts_shard
from mathindex.schemas import table_specs
from mathindex.store.layout import ReleaseLayout
from mathindex.store.releases import published_release
from mathindex.store.tables import write_table
from mathindex.tasks.formal import formal_in_shards, formal_index, merge_formal_shards, plan_formal_shards
from mathindex.tasks.shards import run_shards
from tests.formal_fixture import STATEMENTS, declarations_table


def _decls() -> pa.Table:
    return unique_declarations(declarations_table(STATEMENTS))


def test_shards_are_planned_by_content(tmp_path):
    keyed, found, shards = plan_facts(_decls(), None, 3)
    # Demo.prod_one and Demo.sum_zero share their text but not `to_additive`: 20 distinct statements
    assert keyed.height == 20 and found.is_empty() and [s.todo.num_rows for s in shards] == [3] * 6 + [2]
    assert all(s.key == part_name(s.todo.column("key").to_pylist()) for s in shards)
    _, _, again = plan_facts(_decls().take(pa.array(list(reversed(range(20))))), None, 3)
    assert [(s.key, s.todo) for s in again] == [(s.key, s.todo) for s in shards]
    assert len(plan_facts(_decls(), None, 100, spread=2)[2]) == 2


def test_a_stored_shard_is_read_back_and_a_rerun_names_the_lost_run(tmp_path):
    (shard,) = plan_facts(_decls(), tmp_path, 100)[2]
    first = facts_shard(shard, tmp_path)
    store = facts_cache(tmp_path)
    assert first.computed == 20 and first.lost == () and (store.dir / f"{shard.key}.parquet").is_file()
    (store.dir / f"{RunMarks.PREFIX}{shard.key}-gone-1").touch()  # a run whose worker died
    again = facts_shard(shard, tmp_path)
    assert again.computed == 0 and again.lost == ("gone-1",) and again.worker == worker_id()
    assert again.rows.equals(first.rows) and not list(store.dir.glob(f"{RunMarks.PREFIX}*"))
    assert plan_facts(_decls(), tmp_path, 100)[2] == []


def test_a_damaged_facts_entry_is_recomputed(tmp_path, caplog):
    expected, _ = statement_facts(_decls(), None, workers=1)
    _, _, shards = plan_facts(_decls(), tmp_path, 7)
    for shard in shards:
        facts_shard(shard, tmp_path)
    damaged = facts_cache(tmp_path).dir / f"{shards[1].key}.parquet"
    damaged.write_bytes(b"not parquet")
    again, counts = statement_facts(_decls(), tmp_path, workers=1, shard_statements=7)
    assert "skipping damaged" in caplog.text
    assert counts == {"statements_parsed": 7, "statements_cached": 13} and again.equals(expected)
    assert damaged.is_file()  # stored again under the same content key


@task(name="shuffled_formal_shard", cache_policy=NO_CACHE, persist_result=False)
def _shuffled_shard(shard, cache_dir: Path | None, delays: dict):
    time.sleep(delays[shard.index])  # a later shard may finish first
    return facts_shard(shard, cache_dir)


def _bytes(table: pa.Table, directory: Path) -> bytes:
    directory.mkdir(parents=True, exist_ok=True)
    return write_table(table, table_specs()["formal_statements"], directory).read_bytes()


def _files(release_dir: Path) -> dict[str, bytes]:
    formal = ReleaseLayout(release_dir).formal
    return {p.name: p.read_bytes() for p in sorted(formal.iterdir())}


def test_the_sample_formal_index_does_not_depend_on_the_shards(sample_release_root, tmp_path, monkeypatch):
    """The process pool (the local default), one shard, shards of 9 statements, and shards of 5 four
    at a time finishing in shuffled order: formal_statements and formal/ byte-identical."""
    release = published_release(sample_release_root)
    declarations = pq.read_table(ReleaseLayout(release).table("declarations"))
    dependencies = pq.read_table(ReleaseLayout(release).table("dependencies"))
    delays = {i: random.Random(11).random() / 20 for i in range(500)}
    monkeypatch.setattr(formal_tasks, "LOCAL_POOL", False)

    @flow
    def runs() -> list:
        out = [formal_index(declarations, dependencies, tmp_path / "pool", tmp_path / "c-pool"),
               formal_in_shards(declarations, dependencies, tmp_path / "one", tmp_path / "c-one", None),
               formal_in_shards(declarations, dependencies, tmp_path / "small", tmp_path / "c-small", None, 9)]
        plan = plan_formal_shards(declarations, tmp_path / "c-shuffled", 5, 1)
        parsed = run_shards(_shuffled_shard, plan.shards, "test", 4, cache_dir=tmp_path / "c-shuffled", delays=delays)
        out.append(merge_formal_shards(plan, parsed, dependencies, tmp_path / "shuffled", tmp_path / "c-shuffled", None))
        return out, len(plan.shards)

    results, shuffled_shards = runs()
    assert shuffled_shards > 10 and results[2].index.figures["statements_parsed"] > 9 * 5
    reference = _bytes(results[0].table, tmp_path / "t0")
    for i, (built, name) in enumerate(zip(results, ("pool", "one", "small", "shuffled"))):
        assert _bytes(built.table, tmp_path / f"t{i}") == reference, name
        assert _files(tmp_path / name) == _files(tmp_path / "pool"), name
