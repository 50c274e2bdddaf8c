"""Lean extraction in content-keyed shards of files (`lean.shards`): the tables are the same bytes
whatever the shard count, the order the shards finished in, or what the rows cache held before;
a rerun of a lost shard names the lost run; and the flow's task runner path matches the pool's."""

from __future__ import annotations

import io
import random
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from prefect import flow

import mathindex.lean.shards as shards
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import RunMarks
from mathindex.lean.extract import LeanExtraction, extract_lean_tree, finish_extraction, plan_extraction
from mathindex.lean.shards import extract_shard, rows_version
from mathindex.schemas.manifest import SourceSpec
from mathindex.sources import Source
from mathindex.tasks import extract

REPO = Path(__file__).resolve().parent.parent
TABLES = ("declarations", "dependencies", "errors", "descriptions", "citations")


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    """The sample's Lean corpus (with its docs) and the scanner's fixtures, one tree, and a file that is not text."""
    root = tmp_path / "lib"
    shutil.copytree(REPO / "data" / "sample" / "lean", root)
    shutil.copytree(REPO / "tests" / "fixtures" / "lean", root / "Fixtures")
    (root / "Fixtures" / "Binary.lean").write_bytes(b"theorem t : True := trivial\n\0\0")
    return root


def _bytes(ex: LeanExtraction) -> dict[str, bytes]:
    """Each table as Parquet bytes (what the release writes is made from these)."""
    out = {}
    for name in TABLES:
        buf = io.BytesIO()
        pq.write_table(getattr(ex, name), buf)
        out[name] = buf.getvalue()
    return out


def _sharded(root: Path, cache: Path, size: int, order: random.Random | None = None) -> tuple[LeanExtraction, int]:
    """The tree extracted as the flow's runner does it: shards of `size` bytes, run in `order`
    (shuffled) or in index order, then the reduce; with the number of shards."""
    plan = plan_extraction(root, "c", cache, shard_bytes=size)
    todo = list(plan.shards)
    if order is not None:
        order.shuffle(todo)
    for shard in todo:
        extract_shard(shard, cache)
    return finish_extraction(plan, cache), len(plan.shards)


def test_one_shard_many_shards_and_shuffled_finishes_give_the_same_bytes(corpus, tmp_path):
    one, n_one = _sharded(corpus, tmp_path / "c1", size=1 << 30)
    many, n_many = _sharded(corpus, tmp_path / "c2", size=1)
    shuffled, _ = _sharded(corpus, tmp_path / "c3", size=2000, order=random.Random(7))
    pooled = extract_lean_tree(corpus, "c", tmp_path / "c4")
    uncached = extract_lean_tree(corpus, "c")
    assert n_one == 1 and n_many == sum(1 for _ in corpus.rglob("*.lean"))
    assert one.declarations.num_rows > 20 and one.descriptions.num_rows and one.errors.num_rows
    for other in (many, shuffled, pooled, uncached):
        assert _bytes(other) == _bytes(one)


def test_a_changed_file_rescans_one_shard_and_the_tables_match_a_cold_run(corpus, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    _sharded(corpus, cache, size=1)
    changed = corpus / "Fixtures" / "Demo" / "Basic.lean"
    changed.write_text(changed.read_text() + "\ntheorem added_later : True := trivial\n")
    shutil.rmtree(CacheLayout(cache).lean_finals()[0])  # the whole-tree entry would not match anyway
    plan = plan_extraction(corpus, "c", cache, shard_bytes=1)
    assert [f for s in plan.shards for f, _ in s.files] == ["Fixtures/Demo/Basic.lean"]
    monkeypatch.setattr(shards, "MAX_ENTRIES", 1)  # the reduce folds the two entries into one
    for shard in plan.shards:
        extract_shard(shard, cache)
    warm = finish_extraction(plan, cache)
    assert "added_later" in warm.declarations["full_name"].to_pylist()
    assert len(CacheLayout(cache).lean_rows_entries(rows_version("c"))) == 1
    cold, _ = _sharded(corpus, tmp_path / "cold", size=1 << 30)
    assert _bytes(warm) == _bytes(cold)
    again = plan_extraction(corpus, "c", cache)  # the whole tree is cached now
    assert again.shards == [] and again.done is not None


def test_a_stale_entry_is_dropped_and_an_unchanged_tree_scans_nothing(corpus, tmp_path):
    cache = tmp_path / "cache"
    extract_lean_tree(corpus, "c", cache)
    (corpus / "Fixtures" / "Binary.lean").unlink()
    shutil.rmtree(CacheLayout(cache).lean_finals()[0])
    plan = plan_extraction(corpus, "c", cache)
    assert plan.shards == []  # every file left is in the rows cache
    ex = finish_extraction(plan, cache)
    assert "Fixtures/Binary.lean" not in ex.errors["file"].to_pylist()


def test_a_rerun_names_the_lost_run_and_stores_the_shard_once(corpus, tmp_path):
    cache = tmp_path / "cache"
    (shard, *_) = plan_extraction(corpus, "c", cache).shards
    RunMarks(CacheLayout(cache).lean_rows(shard.version), shard.key).dir.mkdir(parents=True)
    (CacheLayout(cache).lean_rows(shard.version) / f".run-{shard.key}-otherhost-42").touch()
    done = extract_shard(shard, cache)
    assert done.lost == ("otherhost-42",) and done.computed == len(shard.files)
    again = extract_shard(shard, cache)  # stored already: nothing scanned, no marks left
    assert again.lost == () and again.computed == 0
    assert not list(CacheLayout(cache).lean_rows(shard.version).glob(".run-*"))


def test_rows_the_cache_lost_after_the_plan_are_scanned_in_the_reduce(corpus, tmp_path, caplog):
    """A shard that never stored its rows, and an entry damaged after the plan read its file list:
    the reduce scans those files itself, says so, and the tables are a cold run's."""
    cache = tmp_path / "cache"
    plan = plan_extraction(corpus, "c", cache, shard_bytes=1)
    for shard in plan.shards[1:]:
        extract_shard(shard, cache)
    entry = CacheLayout(cache).lean_rows_entry(plan.shards[2].version, plan.shards[2].key)
    (entry / "raw.arrow").write_bytes(b"not what the cache wrote")
    with caplog.at_level("WARNING"):
        got = finish_extraction(plan, cache)
    assert "lacks 2 file(s)" in caplog.text
    assert _bytes(got) == _bytes(extract_lean_tree(corpus, "c"))


def test_the_flow_runs_the_shards_through_its_task_runner(corpus, tmp_path, prefect_harness, monkeypatch):
    """`extract_lean_sources` off the pool path: every source's shards as tasks on the flow's thread
    pool (as on Dask), two sources indexed apart; the tables are the pool's."""
    monkeypatch.setenv(extract.SHARD_BYTES_ENV, "3000")
    other = tmp_path / "other"
    shutil.copytree(REPO / "tests" / "fixtures" / "lean", other)
    sources = [Source(SourceSpec(name="c", kind="lean", path=str(corpus)), corpus, None),
               Source(SourceSpec(name="d", kind="lean", path=str(other)), other, None)]
    cache = tmp_path / "cache"

    @flow
    def run() -> list[LeanExtraction]:
        return extract.extract_lean_sources(sources, cache, local=False)

    got = run()
    assert [_bytes(g) for g in got] == [_bytes(extract_lean_tree(corpus, "c")), _bytes(extract_lean_tree(other, "d"))]
    assert len(CacheLayout(cache).lean_finals()) == 2  # one a corpus: neither removed the other's
    assert all(isinstance(t, pa.Table) for t in (got[0].declarations, got[1].declarations))
