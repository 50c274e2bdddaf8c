"""Whole-stage results cached by the content of their inputs (`cache.stages.StageCache`)."""

from __future__ import annotations

import os

import pyarrow as pa

from mathindex.cache.layout import CacheLayout
from mathindex.cache.codes import EMBEDDING_TEXTS, INFORMAL
from mathindex.cache.digest import table_digest
from mathindex.cache.stages import KEEP, StageCache

SCHEMA = pa.schema([("y", pa.int64())])


def test_a_stage_runs_once_per_distinct_input_and_a_bad_entry_is_recomputed(tmp_path, caplog):
    calls = []

    def stage(t: pa.Table) -> pa.Table:
        calls.append(t.num_rows)
        return pa.table({"y": [v * 2 for v in t.column("x").to_pylist()]})

    cache = StageCache(tmp_path)
    a = pa.table({"x": [1, 2, 3]})
    first, hit = cache.run("double", INFORMAL, lambda: stage(a), {"t": a}, schema=SCHEMA)
    assert not hit and calls == [3]
    chunked = pa.concat_tables([a.slice(0, 1), a.slice(1)])  # the same rows in other chunks
    again, hit = cache.run("double", INFORMAL, lambda: stage(chunked), {"t": chunked}, schema=SCHEMA)
    assert hit and calls == [3] and again.equals(first)
    b = pa.table({"x": [1, 2, 4]})
    _, hit = cache.run("double", INFORMAL, lambda: stage(b), {"t": b}, schema=SCHEMA)
    assert not hit and calls == [3, 3]
    _, hit = cache.run("double", INFORMAL, lambda: stage(a), {"t": a}, params={"factor": 2})  # other parameters
    assert not hit
    entry = CacheLayout(tmp_path).stage("double") / f"{cache.key('double', INFORMAL, {'t': a})}.parquet"
    entry.write_bytes(b"damaged")
    redone, hit = cache.run("double", INFORMAL, lambda: stage(a), {"t": a}, schema=SCHEMA)
    assert not hit and redone.equals(first) and "skipping damaged" in caplog.text
    caplog.clear()
    other = pa.table({"y": ["not an int"]})
    (CacheLayout(tmp_path).stage("double") / entry.name).unlink()
    cache.run("double", INFORMAL, lambda: other, {"t": a})  # an entry of another schema than the stage's
    redone, hit = cache.run("double", INFORMAL, lambda: stage(a), {"t": a}, schema=SCHEMA)
    assert not hit and redone.equals(first) and "differ from the cache schema" in caplog.text
    assert StageCache(None).run("double", INFORMAL, lambda: stage(a), {"t": a})[1] is False  # no cache directory


def test_the_code_digest_is_part_of_the_key_and_old_entries_are_pruned(tmp_path):
    cache = StageCache(tmp_path)
    a = pa.table({"x": [1]})
    assert INFORMAL.digest() != EMBEDDING_TEXTS.digest()
    assert cache.key("s", INFORMAL, {"t": a}) != cache.key("s", EMBEDDING_TEXTS, {"t": a})
    folder = CacheLayout(tmp_path).stage("s")
    for i in range(KEEP + 2):
        t = pa.table({"x": [i]})
        cache.run("s", INFORMAL, lambda: t, {"t": t})
        for p in folder.glob("*.parquet"):
            os.utime(p, ns=(p.stat().st_mtime_ns - 10**9, p.stat().st_mtime_ns - 10**9))  # older than the next
    assert len(list(folder.glob("*.parquet"))) == KEEP
    assert table_digest(None) == "none" and table_digest(a) != table_digest(pa.table({"x": [2]}))


def test_a_fresh_table_and_its_cached_copy_key_the_next_stage_alike(tmp_path):
    """A list column's child is `item` in a fresh Arrow table and `element` once read from Parquet:
    the stage returns its table as it reads back, so the stage after it has one key either way."""
    cache = StageCache(tmp_path)
    words = pa.table({"w": pa.array([["a", "b"], []], pa.list_(pa.string()))})
    fresh, hit = cache.run("split", INFORMAL, lambda: words, {})
    cached, hit_again = cache.run("split", INFORMAL, lambda: words, {})
    assert not hit and hit_again
    assert table_digest(fresh) == table_digest(cached)
    assert cache.key("next", EMBEDDING_TEXTS, {"t": fresh}) == cache.key("next", EMBEDDING_TEXTS, {"t": cached})
