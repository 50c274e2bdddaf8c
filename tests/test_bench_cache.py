"""The benchmark stage's results, reused when every input of a run is that of an earlier one."""

from __future__ import annotations

import json
import shutil

import pytest

from mathindex.schemas.manifest import SuiteSpec
from mathindex.sources import PACKAGE_ROOT
from mathindex.store.layout import ReleaseLayout
from mathindex.store.releases import published_release
from mathindex.tasks import bench


def test_unchanged_inputs_reuse_the_results_and_a_changed_file_runs_again(sample_release_root, tmp_path, monkeypatch):
    rel = tmp_path / "rel"
    shutil.copytree(published_release(sample_release_root), rel)
    suites = [SuiteSpec(name="sample", path=str(PACKAGE_ROOT / "data" / "sample" / "queries.json"))]
    cache = tmp_path / "cache"
    first = bench.run_benchmarks.fn(rel, suites, None, None, cache)
    assert first.metrics["headline"], "the sample suite gave no metrics"

    def no_engine(*a, **k):
        raise AssertionError("the engine was opened for unchanged inputs")

    monkeypatch.setattr(bench, "SearchEngine", no_engine)
    ReleaseLayout(rel).duckdb.write_bytes(b"being written beside the run")  # left out of the key
    again = bench.run_benchmarks.fn(rel, suites, None, None, cache)
    assert json.dumps(dict(again.metrics), sort_keys=True) == json.dumps(dict(first.metrics), sort_keys=True)
    assert again.rows.equals(first.rows.cast(again.rows.schema))
    monkeypatch.undo()
    with open(ReleaseLayout(rel).table("nodes"), "ab") as f:  # any file of the release changed: run again
        f.write(b"\0")
    monkeypatch.setattr(bench, "SearchEngine", no_engine)
    with pytest.raises(AssertionError, match="engine was opened"):
        bench.run_benchmarks.fn(rel, suites, None, None, cache)
