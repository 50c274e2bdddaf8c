"""The premise stage's candidates and features in content-keyed shards (issue 32): goals keyed and cut
by content; a shard stored in the root's cache under its key and read back on a rerun that names
the lost run; and the sample's premises/ files (weights, model, metrics, suite) byte-identical to the
in-process stage's for one shard, small shards, and small shards finishing in shuffled order."""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

import mathindex.tasks.premises as premise_tasks
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import RunMarks, part_name, worker_id
from mathindex.embed.channel import spec_channel
from mathindex.embed.embedder import EMBED_BACKEND, onnx_dir_for
from mathindex.embed.shards import EmbedderSpec, load_embedder
from mathindex.formal import build_formal_index
from mathindex.formal.search import FormalIndex
from mathindex.premises.build import build_premises, prepare_premises
from mathindex.premises.imports import read_imports
from mathindex.premises.priors import PREMISES_DIR
from mathindex.premises.ranker import FEATURES
from mathindex.premises.shards import (close_rankers, features_shard, features_store, goal_key, goal_rows, plan_goal_shards,
                                       ranker_source, read_candidates)
from mathindex.schemas import table_specs
from mathindex.store.integrity import read_manifest
from mathindex.store.layout import ReleaseLayout
from mathindex.store.releases import published_release
from mathindex.store.tables import write_table
from mathindex.tasks.premises import features_shard_task, merge_premise_shards, plan_premise_shards, premises_in_shards
from mathindex.tasks.shards import run_shards

GOALS = [{"id": f"T.g{i}", "query": f"a + {i} = {i} + a", "context": "(a : Nat)", "theorem": f"T.g{i}",
          "file": "T/A.lean", "line": 10 + i, "gold": ["Nat.add_comm"]} for i in range(7)]


def test_goals_are_keyed_and_cut_by_content():
    keyed = goal_rows(GOALS)
    assert keyed.height == 7 and keyed["key"].n_unique() == 7
    shards = plan_goal_shards(keyed, 3)
    assert [s.goals.num_rows for s in shards] == [3, 3, 1]
    assert all(s.key == part_name(s.goals.column("key").to_pylist()) for s in shards)
    again = plan_goal_shards(goal_rows(list(reversed(GOALS)) + GOALS[:2]), 3)  # another order, repeated goals
    assert [(s.key, s.goals) for s in again] == [(s.key, s.goals) for s in shards]
    assert len(plan_goal_shards(keyed, 100, spread=2)) == 2
    # the gold is no input of the candidates; the goal's place in its file is
    assert goal_key({**GOALS[0], "gold": []}) == goal_key(GOALS[0]) != goal_key({**GOALS[0], "line": 99})


class Staged(NamedTuple):
    """A staging-like copy of the sample release (its formal index rebuilt from the release's own
    sorted tables, so that the premise index built from them lists the same rows), without premises/."""

    release: Path
    declarations: pa.Table
    dependencies: pa.Table
    lean_roots: list[str]
    spec: EmbedderSpec


@pytest.fixture(scope="module")
def staged(sample_release_root, tmp_path_factory) -> Staged:
    sample = published_release(sample_release_root)
    base = tmp_path_factory.mktemp("premise-shards") / "base"
    shutil.copytree(sample, base)
    shutil.rmtree(base / PREMISES_DIR)
    shutil.rmtree(ReleaseLayout(base).formal)
    declarations = pq.read_table(ReleaseLayout(base).table("declarations"))
    dependencies = pq.read_table(ReleaseLayout(base).table("dependencies"))
    statements, _ = build_formal_index(declarations, dependencies, ReleaseLayout(base).formal)
    write_table(statements, table_specs()["formal_statements"], base)
    roots = [c.path for c in read_manifest(sample).corpora if c.kind == "lean"]
    spec = EmbedderSpec(None, EMBED_BACKEND, str(onnx_dir_for(base)), workers=1, threads=1)
    return Staged(base, declarations, dependencies, roots, spec.named(load_embedder(spec)))


def _copy(staged: Staged, to: Path) -> Path:
    shutil.copytree(staged.release, to)
    return to


def _premise_files(release: Path) -> dict[str, bytes]:
    base = release / PREMISES_DIR
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def test_a_stored_shard_is_read_back_and_a_rerun_names_the_lost_run(staged, tmp_path):
    release, cache = _copy(staged, tmp_path / "rel"), tmp_path / "cache"
    goals = prepare_premises(release, staged.declarations, staged.dependencies, token_cache=cache,
                             imports=read_imports(staged.lean_roots))
    source = ranker_source(release, staged.spec, cache)
    (shard,) = plan_goal_shards(goal_rows(goals.ranked()), 1000)
    first = features_shard(shard, source)
    store = features_store(source)
    assert first.computed == shard.goals.num_rows > 0 and first.lost == ()
    assert store.dir == CacheLayout(cache).premise_feature_set(source.key) and (store.dir / f"{shard.key}.parquet").is_file()
    (store.dir / f"{RunMarks.PREFIX}{shard.key}-gone-1").touch()  # a run whose worker died
    again = features_shard(shard, source)
    assert again.computed == 0 and again.lost == ("gone-1",) and again.worker == worker_id()
    assert not list(store.dir.glob(f"{RunMarks.PREFIX}*"))
    keys = shard.goals.column("key").to_pylist()
    stored = read_candidates(list(reversed(keys)), source)
    assert [c.constants for c in stored] == [c.constants for c in reversed(read_candidates(keys, source))]
    assert all(c.features.shape == (c.docs.size, len(FEATURES)) and c.features.dtype == np.float32 for c in stored)
    close_rankers()
    # another file the ranker reads, another folder: one release's rows are never read for another's
    (release / PREMISES_DIR / "imports.parquet").unlink()
    assert ranker_source(release, staged.spec, cache).key != source.key


@task(name="shuffled_premise_shard", cache_policy=NO_CACHE, persist_result=False)
def _shuffled_shard(shard, source, delays: dict):
    time.sleep(delays[shard.index])  # a later shard may finish first
    return features_shard(shard, source)


def test_the_sample_premises_do_not_depend_on_the_shards(staged, tmp_path, monkeypatch):
    """The in-process stage (the local default), one shard, shards of one goal, and shards of two,
    four at a time, finishing in shuffled order: every premises/ file byte-identical."""
    imports = read_imports(staged.lean_roots)
    reference = _copy(staged, tmp_path / "in-process")
    channel = spec_channel(reference, staged.spec, tmp_path / "c-in-process")
    build_premises(reference, staged.declarations, staged.dependencies, FormalIndex(reference), channel,
                   token_cache=tmp_path / "c-in-process", imports=imports)
    delays = {i: random.Random(11).random() / 20 for i in range(100)}
    monkeypatch.setattr(premise_tasks, "LOCAL_IN_PROCESS", False)
    names = ("one", "small", "shuffled")
    rels = {n: _copy(staged, tmp_path / n) for n in names}

    @flow
    def runs() -> tuple[list, int]:
        plan = plan_premise_shards(rels["one"], staged.declarations, staged.dependencies, staged.spec, None,
                                   tmp_path / "c-one", staged.lean_roots, 1000, 1)
        out = [merge_premise_shards(plan, run_shards(features_shard_task, plan.shards, "test", None, source=plan.source))]
        out.append(premises_in_shards(rels["small"], staged.declarations, staged.dependencies, channel, staged.spec,
                                      None, tmp_path / "c-small", staged.lean_roots, 1))
        plan = plan_premise_shards(rels["shuffled"], staged.declarations, staged.dependencies, staged.spec, None,
                                   tmp_path / "c-shuffled", staged.lean_roots, 2, 1)
        done = run_shards(_shuffled_shard, plan.shards, "test", 4, source=plan.source, delays=delays)
        out.append(merge_premise_shards(plan, done))
        return out, len(plan.shards)

    built, shuffled_shards = runs()
    assert shuffled_shards >= 4
    expected = _premise_files(reference)
    assert {"weights.json", "metrics.json", "suite.json", "priors.parquet"} <= set(expected)
    for name, result in zip(names, built):
        assert _premise_files(rels[name]) == expected, name
        assert json.loads(expected["metrics.json"])["figures"] == result.figures["figures"], name
    # each run's rows sit in its root's cache: one shard of every goal, or a shard a goal
    (one,) = CacheLayout(tmp_path / "c-one").premise_features.rglob("*.parquet")
    small = list(CacheLayout(tmp_path / "c-small").premise_features.rglob("*.parquet"))
    assert len(small) == pq.read_table(one).num_rows > 1
