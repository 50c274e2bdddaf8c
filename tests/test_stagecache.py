"""Whole-stage results cached by the content of their inputs."""

from __future__ import annotations

import os

import pyarrow as pa

from mathindex import stagecache
from mathindex.stagecache import KEEP, StageCache, table_digest


def test_a_stage_runs_once_per_distinct_input_and_a_bad_entry_is_recomputed(tmp_path, caplog):
    calls = []

    def stage(t: pa.Table) -> pa.Table:
        calls.append(t.num_rows)
        return pa.table({"y": [v * 2 for v in t.column("x").to_pylist()]})

    cache = StageCache(tmp_path)
    a = pa.table({"x": [1, 2, 3]})
    first, hit = cache.run("double", lambda: stage(a), {"t": a})
    assert not hit and calls == [3]
    chunked = pa.concat_tables([a.slice(0, 1), a.slice(1)])  # the same rows in other chunks
    again, hit = cache.run("double", lambda: stage(chunked), {"t": chunked})
    assert hit and calls == [3] and again.equals(first)
    b = pa.table({"x": [1, 2, 4]})
    _, hit = cache.run("double", lambda: stage(b), {"t": b})
    assert not hit and calls == [3, 3]
    _, hit = cache.run("double", lambda: stage(a), {"t": a}, params={"factor": 2})  # other parameters
    assert not hit
    entry = tmp_path / "stages" / "double" / f"{cache.key('double', {'t': a})}.parquet"
    entry.write_bytes(b"damaged")
    redone, hit = cache.run("double", lambda: stage(a), {"t": a})
    assert not hit and redone.equals(first) and "cannot be read" in caplog.text
    assert StageCache(None).run("double", lambda: stage(a), {"t": a})[1] is False  # no cache directory


def test_the_code_version_is_part_of_the_key_and_old_entries_are_pruned(tmp_path, monkeypatch):
    cache = StageCache(tmp_path)
    a = pa.table({"x": [1]})
    key = cache.key("s", {"t": a})
    monkeypatch.setattr(stagecache, "code_version", lambda: "another")
    assert cache.key("s", {"t": a}) != key
    for i in range(KEEP + 2):
        t = pa.table({"x": [i]})
        cache.run("s", lambda: t, {"t": t})
        for p in (tmp_path / "stages" / "s").glob("*.parquet"):
            os.utime(p, ns=(p.stat().st_mtime_ns - 10**9, p.stat().st_mtime_ns - 10**9))  # older than the next
    assert len(list((tmp_path / "stages" / "s").glob("*.parquet"))) == KEEP
    assert table_digest(None) == "none" and table_digest(a) != table_digest(pa.table({"x": [2]}))
