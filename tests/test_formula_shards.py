"""The formulas stage's content-keyed shards (issue 32): planned by content, stored in the parse
cache under their key and read back on a rerun that names the lost run; a damaged shard costs a
recompute; and the sample release's formula tables and index are byte-identical whatever the
number of shards or the order they finish."""

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

import mathindex.formula.api as api
from mathindex.cache.shards import RunMarks, part_name, worker_id
from mathindex.formula.api import formula_inputs, parse_formulas, uncached
from mathindex.formula.canonical import close_idle_workers
from mathindex.formula.parse_cache import parse_cache
from mathindex.formula.shards import parse_shard, plan_shards
from mathindex.schemas import table_specs
from mathindex.store.layout import ReleaseLayout
from mathindex.store.releases import published_release
from mathindex.store.tables import write_table
from mathindex.tasks.formulas import build_formula_index, merge_formula_shards, parse_in_shards, plan_formula_shards
from mathindex.tasks.shards import run_shards

BUDGET_S = 5.0
TEXTS = [r"(a+b)^2 = a^2 + 2ab + b^2", r"\frac{x}{y} + z", r"a + ) b", r"\frac{x}{y} + z", "∀ n : ℕ, n + 0 = n",
         r"x^2 - 1 = (x-1)(x+1)", r"\sum_{i=1}^{n} i", "a * b = b * a"]  # fmt: skip


def corpus(texts: list[str] = TEXTS) -> pa.Table:
    return pa.Table.from_pylist([
        {"formula_id": f"f{i}", "corpus": "c", "file": "a.tex", "line": i + 1, "latex": t, "latex_normalised": t,
         "source": "lean" if "∀" in t or "*" in t else "latex"} for i, t in enumerate(texts)])


def test_shards_are_planned_by_content():
    _, todo = uncached(formula_inputs(corpus()), None, BUDGET_S)
    shards = plan_shards(todo, 3)
    assert [s.todo.num_rows for s in shards] == [3, 3, 1] and [s.index for s in shards] == [0, 1, 2]
    assert all(s.key == part_name(s.todo.column("key").to_pylist()) for s in shards)
    _, again = uncached(formula_inputs(corpus(list(reversed(TEXTS)))), None, BUDGET_S)
    assert [(s.key, s.todo) for s in plan_shards(again, 3)] == [(s.key, s.todo) for s in shards]
    assert len(plan_shards(todo, 100, spread=2)) == 2 and plan_shards(todo.clear(), 3) == []


def _rows(shards, cache_dir: Path | None) -> pl.DataFrame:
    return pl.concat([pl.from_arrow(parse_shard(s, BUDGET_S, cache_dir).rows) for s in shards], how="vertical_relaxed")


def test_a_stored_shard_is_read_back_and_a_rerun_names_the_lost_run(tmp_path):
    inputs = formula_inputs(corpus())
    _, todo = uncached(inputs, tmp_path, BUDGET_S)
    (shard,) = plan_shards(todo)
    first = parse_shard(shard, BUDGET_S, tmp_path)
    store = parse_cache(tmp_path, BUDGET_S)
    assert first.computed == 7 and first.lost == () and (store.dir / f"{shard.key}.parquet").is_file()
    assert api.assemble(inputs, pl.from_arrow(first.rows)) == parse_formulas(corpus(), BUDGET_S)
    (store.dir / f"{RunMarks.PREFIX}{shard.key}-gone-1").touch()  # a run whose worker died
    again = parse_shard(shard, BUDGET_S, tmp_path)
    assert again.computed == 0 and again.lost == ("gone-1",) and again.worker == worker_id()
    assert again.rows.equals(first.rows) and not list(store.dir.glob(f"{RunMarks.PREFIX}*"))
    assert uncached(inputs, tmp_path, BUDGET_S)[1].is_empty()
    close_idle_workers()


def test_a_damaged_shard_costs_a_recompute_not_the_rows(tmp_path, caplog):
    inputs = formula_inputs(corpus())
    shards = plan_shards(uncached(inputs, tmp_path, BUDGET_S)[1], 3)
    expected = api.assemble(inputs, _rows(shards, tmp_path))
    damaged = parse_cache(tmp_path, BUDGET_S).dir / f"{shards[1].key}.parquet"
    damaged.write_bytes(b"not parquet")
    found, todo = uncached(inputs, tmp_path, BUDGET_S)
    assert "skipping damaged" in caplog.text and not damaged.exists()
    (replan,) = plan_shards(todo, 3)
    assert replan.key == shards[1].key and parse_shard(replan, BUDGET_S, tmp_path).computed == 3
    assert api.assemble(inputs, pl.concat([found, _rows([replan], None)], how="vertical_relaxed")) == expected
    close_idle_workers()


@task(name="shuffled_formula_shard", cache_policy=NO_CACHE, persist_result=False)
def _shuffled_shard(shard, budget_s: float, cache_dir: Path | None, delays: dict):
    time.sleep(delays[shard.index])  # a later shard may finish first
    return parse_shard(shard, budget_s, cache_dir)


def _bytes(table: pa.Table, name: str, directory: Path) -> bytes:
    return write_table(table, table_specs()[name], directory).read_bytes()


def test_the_sample_formula_tables_do_not_depend_on_the_shards(sample_release_root, tmp_path, monkeypatch):
    """One shard, shards of 7 formulas, and shards of 5 two at a time finishing in shuffled order:
    formula_trees and the formula index byte-identical to the sample release's, errors alike. (Two at
    a time, as on two single-threaded workers: more SymPy workers than cores would stretch the
    budget's wall-clock seconds, and a `timeout` row is a result like any other.)"""
    release = published_release(sample_release_root)
    formulas = pq.read_table(ReleaseLayout(release).table("formulas"))
    delays = {i: random.Random(7).random() / 10 for i in range(200)}

    @flow
    def runs() -> list[tuple[pa.Table, pa.Table]]:
        out = [parse_in_shards(formulas, 2.0, tmp_path / "one"), parse_in_shards(formulas, 2.0, tmp_path / "small", 7)]
        plan = plan_formula_shards(formulas, 2.0, tmp_path / "shuffled", 5)
        parsed = run_shards(_shuffled_shard, plan.shards, "test", 2, budget_s=2.0, cache_dir=tmp_path / "shuffled",
                            delays=delays)
        return out + [merge_formula_shards(plan, parsed, 2.0, tmp_path / "shuffled")]

    results = runs()
    assert results[1][0].num_rows == formulas.num_rows > 7 * 10
    for i, (trees, errors) in enumerate(results):
        out = tmp_path / f"out{i}"
        out.mkdir()
        assert _bytes(trees, "formula_trees", out) == ReleaseLayout(release).table("formula_trees").read_bytes()
        assert _bytes(errors, "errors", out) == _bytes(results[0][1], "errors", tmp_path)
    index = tmp_path / "index"
    build_formula_index.fn(results[2][0], formulas, index)
    built, shipped = ReleaseLayout(index).formula, ReleaseLayout(release).formula
    assert sorted(p.name for p in built.iterdir()) == sorted(p.name for p in shipped.iterdir())
    assert all((built / p.name).read_bytes() == p.read_bytes() for p in shipped.iterdir())
