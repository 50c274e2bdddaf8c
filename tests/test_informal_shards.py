"""The informalise stage's content-keyed shards (issue 32): a level planned by content, a shard's
answers stored in the informal cache under its key and read back on a rerun that names the lost
run; the sample's informalisations byte-identical whatever the number of shards or the order they
finish; and the HTTP backend in shards as a Dask worker gets it (a pickled copy that carries why the
endpoint was given up and the budget left), against the test's chat-completions server."""

from __future__ import annotations

import pickle
import random
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

import mathindex.tasks.informalise as informal_tasks
from mathindex.cache.shards import RunMarks, part_name, worker_id
from mathindex.informal import InformalInput, RuleInformaliser, informalise_reported
from mathindex.informal.http import HttpInformaliser
from mathindex.informal.informalise import informal_store
from mathindex.informal.shards import plan_shards, render_shard, sharded_renderer
from mathindex.schemas import table_specs
from mathindex.store.layout import ReleaseLayout
from mathindex.store.releases import published_release
from mathindex.store.tables import write_table
from mathindex.tasks.informalise import SHARD_ENV, informalise_declarations, informalise_in_shards, shard_items
from mathindex.tasks.shards import run_shards
from tests.test_informaliser_http import EchoChat, demo_corpus, spec


def _items(n: int) -> tuple[list[InformalInput], list[str]]:
    items = [InformalInput(f"Demo.t{i}", "theorem", f"(n : Nat) : n + {i} = {i} + n", f"n + {i} = {i} + n", "",
                           (("Demo.Double", "Twice n."),) if i % 3 == 0 else ()) for i in range(n)]
    return items, [f"k{i:02d}" for i in range(n)]


def test_a_level_is_planned_by_content():
    items, keys = _items(20)
    shards = plan_shards(0, items + items[:4], keys + keys[:4], 3)  # a key twice is rendered once
    assert [s.todo.num_rows for s in shards] == [3] * 6 + [2]
    assert all(s.key == part_name(s.todo.column("key").to_pylist()) for s in shards)
    again = plan_shards(0, items[::-1], keys[::-1], 3)
    assert [(s.key, s.todo) for s in again] == [(s.key, s.todo) for s in shards]
    assert len(plan_shards(0, items, keys, 100, spread=2)) == 2
    assert shards[0].todo.column("context_texts").to_pylist()[0] == ["Twice n."]


def test_a_stored_shard_is_read_back_and_a_rerun_names_the_lost_run(tmp_path):
    items, keys = _items(7)
    (shard,) = plan_shards(0, items, keys, 100)
    first = render_shard(shard, RuleInformaliser(), tmp_path)
    store = informal_store(tmp_path, remote=False)
    assert first.computed == 7 and first.lost == () and (store.dir / f"{shard.key}.parquet").is_file()
    assert set(first.rows.column("status").to_pylist()) == {"ok"} and first.closed is None
    (store.dir / f"{RunMarks.PREFIX}{shard.key}-gone-1").touch()  # a run whose worker died
    again = render_shard(shard, RuleInformaliser(), tmp_path)
    assert again.computed == 0 and again.lost == ("gone-1",) and again.worker == worker_id()
    assert again.rows.equals(first.rows) and not list(store.dir.glob(f"{RunMarks.PREFIX}*"))


def test_a_rerun_asks_only_what_the_lost_run_had_not_stored(tmp_path):
    chat = EchoChat()
    try:
        chat.fail = {"Demo.t1"}  # a fallback: the shard's stored part is named by the other keys
        items, keys = _items(4)
        (shard,) = plan_shards(0, items, keys, 100)
        first = render_shard(shard, HttpInformaliser(base_url=chat.url, model="m", retries=0), tmp_path)
        assert first.rows.column("status").to_pylist() == ["ok", "fallback", "ok", "ok"] and chat.requests == 4
        chat.fail = set()
        store = informal_store(tmp_path, remote=True)
        (store.dir / f"{RunMarks.PREFIX}{shard.key}-gone-2").touch()
        again = render_shard(shard, HttpInformaliser(base_url=chat.url, model="m", retries=0), tmp_path)
        assert again.lost == ("gone-2",) and again.computed == 1 and chat.requests == 5
        assert again.rows.column("status").to_pylist() == ["ok"] * 4
    finally:
        chat.close()


def test_the_shard_size_comes_from_the_environment(monkeypatch):
    assert shard_items(RuleInformaliser()) == 20_000
    monkeypatch.setenv(SHARD_ENV, "7")
    assert shard_items(RuleInformaliser()) == 7
    monkeypatch.setenv(SHARD_ENV, "0")
    with pytest.raises(ValueError, match=SHARD_ENV):
        shard_items(RuleInformaliser())


@task(name="shuffled_informal_shard", cache_policy=NO_CACHE, persist_result=False)
def _shuffled_shard(shard, informaliser, cache_dir: Path | None, delays: dict):
    time.sleep(delays[shard.index])  # a later shard may finish first
    return render_shard(shard, informaliser, cache_dir)


def _bytes(table: pa.Table, directory: Path) -> bytes:
    directory.mkdir(parents=True, exist_ok=True)
    return write_table(table, table_specs()["informalisations"], directory).read_bytes()


def test_the_sample_informalisations_do_not_depend_on_the_shards(sample_release_root, tmp_path, monkeypatch):
    """The stage's own task (the local default), shards of the default size (a level cut in a shard a
    core), shards of 9, and shards of 5 four at a time finishing in shuffled order: informalisations
    byte-identical, the same report."""
    release = published_release(sample_release_root)
    declarations = pq.read_table(ReleaseLayout(release).table("declarations"))
    dependencies = pq.read_table(ReleaseLayout(release).table("dependencies"))
    delays = {i: random.Random(7).random() / 20 for i in range(500)}
    monkeypatch.setattr(informal_tasks, "LOCAL_IN_PROCESS", False)

    @flow
    def runs() -> list:
        out = [informalise_declarations(declarations, dependencies, tmp_path / "c-task"),
               informalise_in_shards(declarations, dependencies, tmp_path / "c-one")]
        monkeypatch.setenv(SHARD_ENV, "9")
        out.append(informalise_in_shards(declarations, dependencies, tmp_path / "c-small"))
        rules, shuffled = RuleInformaliser(), tmp_path / "c-shuffled"

        def run(shards: list) -> list:
            planned.extend(shards)
            return run_shards(_shuffled_shard, shards, "test", 4, informaliser=rules, cache_dir=shuffled, delays=delays)

        out.append(informalise_reported(declarations, rules, shuffled, dependencies, sharded_renderer(run, 5)))
        return out

    planned: list = []
    results = runs()
    tables = [r.table for r in results[:3]] + [results[3][0]]
    reports = [r.report for r in results[:3]] + [results[3][1]]
    reference = _bytes(tables[0], tmp_path / "t0")
    assert tables[0].num_rows > 200
    for i, (table, name) in enumerate(zip(tables, ("task", "one", "small", "shuffled"))):
        assert _bytes(table, tmp_path / f"t{i}") == reference, name
        assert reports[i] == reports[0], name
    assert len(planned) >= tables[0].num_rows // 5 and len({s.level for s in planned}) < len(planned) / 4
    # each shard stored its answers under its key: the shards of 9 more than the default's
    one, small = (len(informal_store(tmp_path / c, remote=False).shards()) for c in ("c-one", "c-small"))
    assert len({s.level for s in planned}) <= one < small


@task(name="informal_shard_on_a_worker", cache_policy=NO_CACHE, persist_result=False)
def _on_a_worker(shard, informaliser, cache_dir: Path | None):
    """A shard as a Dask worker runs it: with its own copy of the informaliser, pickled."""
    return render_shard(shard, pickle.loads(pickle.dumps(informaliser)), cache_dir)


def test_the_http_backend_in_shards_on_workers(prefect_harness, tmp_path, monkeypatch):
    """Shards of two on copies of the informaliser: the local path's table, each declaration asked
    once; a dead endpoint given up by one shard is not asked by the shards after it."""
    chat = EchoChat()
    try:
        decls, deps = demo_corpus(tmp_path / "lean", extra=6)
        local = informalise_declarations.fn(decls, deps, tmp_path / "c-local", spec(chat.url))
        assert chat.requests == decls.num_rows == 11
        monkeypatch.setattr(informal_tasks, "LOCAL_IN_PROCESS", False)
        monkeypatch.setattr(informal_tasks, "render_shard_task", _on_a_worker)
        monkeypatch.setenv(SHARD_ENV, "2")

        @flow
        def sharded_run(decls: pa.Table, deps: pa.Table, cache: Path, settings) -> informal_tasks.Informalised:
            return informalise_in_shards(decls, deps, cache, settings)

        sharded = sharded_run(decls, deps, tmp_path / "c-shards", spec(chat.url))
        assert chat.requests == 2 * 11 and sharded.table.equals(local.table) and sharded.report == local.report
        assert len(informal_store(tmp_path / "c-shards", remote=True).shards()) >= 11 // 2
        # the endpoint down: the first shard's copy gives it up after 8 failures, the next shards are not asked
        chat.mode = "500"
        monkeypatch.setattr(informal_tasks, "SHARDS_IN_FLIGHT", 1)
        monkeypatch.setenv(SHARD_ENV, "10")
        decls, deps = demo_corpus(tmp_path / "lean2", extra=20)
        out = sharded_run(decls, deps, tmp_path / "c-down", spec(chat.url, retries=0, concurrency=1))
        assert out.report.fell_back == decls.num_rows == 25 and chat.requests == 2 * 11 + 8
        assert sum(r.startswith("not asked: ") for r in out.table.column("reason").to_pylist()) == 25 - 8
    finally:
        chat.close()


def test_a_pickled_http_informaliser_carries_its_state(tmp_path):
    backend = HttpInformaliser(base_url="http://127.0.0.1:9/v1", model="m", budget_s=3600, api_key="k")
    copy = pickle.loads(pickle.dumps(backend))
    assert (copy.model, copy.api_key, copy.endpoint, copy.prompt_version) == ("m", "k", "127.0.0.1:9",
                                                                              backend.prompt_version)
    assert copy._deadline is not None and copy._deadline <= backend._deadline + 1  # the budget left, not afresh
    backend.close("down elsewhere")
    assert pickle.loads(pickle.dumps(backend)).closed() == "down elsewhere"
    render = pickle.loads(pickle.dumps(backend)).render(InformalInput("Demo.x", "theorem", "", "n = n", ""))
    assert render.status == "fallback" and render.reason == "not asked: down elsewhere"
