"""The release on a real Dask cluster (issue 32): a `dask scheduler` and two `dask worker` processes
on 127.0.0.1, started here and always torn down. The sample release built through them is
byte-identical to the local runner's (but for the files that record the run), and so is one whose
worker is killed in the middle of the embed stage: the lost shard runs again on the other worker,
and the flow's log names it. The Lean files are scanned on the workers too, in shards, and so are
the formulas and formal statements parsed, the lexical index's texts tokenised and the premise
goals ranked."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from bench.common.cluster import dask_cluster
from bench.release_diff import RECORDS_THE_RUN, compare
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import worker_id
from mathindex.cli import main
from mathindex.lean.shards import rows_version
from mathindex.store.integrity import read_manifest
from mathindex.store.layout import RootLayout
from mathindex.store.releases import published_release
from mathindex.tasks.extract import SHARD_BYTES_ENV
from mathindex.tasks.formal import SHARD_ENV as FORMAL_SHARD_ENV
from mathindex.tasks.formulas import SHARD_ENV
from mathindex.tasks.informalise import SHARD_ENV as INFORMAL_SHARD_ENV
from mathindex.tasks.premises import SHARD_ENV as PREMISE_SHARD_ENV
from mathindex.tasks.search_index import SHARD_ENV as TOKEN_SHARD_ENV

pytestmark = pytest.mark.e2e
SHARD_TEXTS = "100"  # the sample's 740 texts to embed as 8 shards, spread over both workers
LEAN_SHARD_BYTES = "8000"  # the sample's 6 Lean files (52 KB) as 4 shards
SHARD_FORMULAS = "100"  # the sample's 457 distinct formulas to parse as 5 shards, on both workers
SHARD_STATEMENTS = "50"  # the sample's 218 distinct Lean statements' formal facts as 5 shards
SHARD_DECLARATIONS = "50"  # the sample's 254 declarations to informalise (6 levels: 166, 62, 17, 4, 4, 1) as 10 shards
TOKEN_SHARD_TEXTS = "200"  # the sample's 758 distinct texts of the lexical index as 4 shards
SHARD_GOALS = "2"  # the sample's 9 premise goals' candidates and features as 5 shards


def _seeded_root(sample_root: Path, root: Path) -> Path:
    """A new root with the sample root's caches, less the embeddings, the Lean rows, the parsed
    formulas, the formal statements' facts, the informal renderings, the texts' tokens and the
    premise stage's entries and candidates (hard links): every vector is embedded, every Lean file
    scanned, every formula and statement parsed, every declaration informalised, every text
    tokenised and every premise goal ranked again, by the cluster's workers, and the other stages
    are not paid for twice."""
    src, dst = RootLayout(sample_root).cache, RootLayout(root).cache
    dst.mkdir(parents=True)
    for entry in src.iterdir():
        if entry.name not in (CacheLayout.EMBEDDINGS, CacheLayout.LEAN, CacheLayout.FORMULAS, CacheLayout.FORMAL,
                              CacheLayout.INFORMAL, CacheLayout.TOKENS, CacheLayout.PREMISES,
                              CacheLayout.PREMISE_FEATURES):
            subprocess.run(["cp", "-al", str(entry), str(dst / entry.name)], check=True)
    shutil.rmtree(CacheLayout(dst).stage("informalise"), ignore_errors=True)  # else the whole table is read back
    return root


def _the_release(root: Path) -> Path:
    (release,) = [p for p in RootLayout(root).releases.iterdir() if not p.name.startswith(".")]
    return release


def _assert_same_bytes(local: Path, cluster: Path) -> None:
    same, diff, only_a, only_b = compare(local, cluster)
    data = [d for d in diff if not d.endswith(RECORDS_THE_RUN)]
    assert (data, only_a, only_b) == ([], [], []) and len(same) > 40


def test_the_sample_release_on_a_two_worker_cluster_is_byte_identical(sample_release_root, tmp_path, monkeypatch,
                                                                       caplog):
    monkeypatch.setenv("MATHINDEX_EMBED_SHARD_TEXTS", SHARD_TEXTS)
    monkeypatch.setenv(SHARD_BYTES_ENV, LEAN_SHARD_BYTES)
    monkeypatch.setenv(SHARD_ENV, SHARD_FORMULAS)
    monkeypatch.setenv(FORMAL_SHARD_ENV, SHARD_STATEMENTS)
    monkeypatch.setenv(INFORMAL_SHARD_ENV, SHARD_DECLARATIONS)
    monkeypatch.setenv(TOKEN_SHARD_ENV, TOKEN_SHARD_TEXTS)
    monkeypatch.setenv(PREMISE_SHARD_ENV, SHARD_GOALS)
    root = _seeded_root(sample_release_root, tmp_path / "root")
    with dask_cluster(tmp_path / "logs") as cluster, caplog.at_level(logging.INFO, logger="prefect"):
        code = main(["release", "--out", str(root), "--runner", "dask", "--dask-address", cluster.address])
        assert code == 0
        assert all(w.poll() is None for w in cluster.workers)
    release = _the_release(root)
    _assert_same_bytes(published_release(sample_release_root), release)
    embedding = read_manifest(release).vector_index.embedding
    assert embedding.runner == "dask" and embedding.shards["count"] == 8 and embedding.shards["lost_runs"] == 0
    # the shards really ran on the workers: each left the model's vectors in the shared cache
    local = read_manifest(published_release(sample_release_root)).vector_index.embedding
    assert embedding.embedded == local.distinct and embedding.cached == 0
    # and the Lean files were scanned there, a rows cache entry a shard
    assert len(CacheLayout(RootLayout(root).cache).lean_rows_entries(rows_version("sample-lean"))) == 4
    # and each formula shard its rows in the parse cache (the flow merges them past 16 only)
    assert len(list((RootLayout(root).cache / CacheLayout.FORMULAS).rglob("*.parquet"))) == 5
    # and each formal facts shard its rows in the facts cache
    assert len(list((RootLayout(root).cache / CacheLayout.FORMAL).rglob("*.parquet"))) == 5
    assert read_manifest(release).formal_index.statements_parsed == 218
    # and each informal shard its renderings in the informal cache, level by level
    assert len(list((RootLayout(root).cache / CacheLayout.INFORMAL).rglob("*.parquet"))) == 10
    informaliser = read_manifest(release).informaliser
    assert (informaliser.rendered, informaliser.cached) == (254, 0)
    # and each token shard its rows in the token cache, tokenised on the workers, not in the flow process
    # (a fifth file: the premise stage's statement index, which runs again here, adds its own tokens)
    assert len(list((RootLayout(root).cache / CacheLayout.TOKENS).rglob("*.parquet"))) == 5
    (tokens,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("lexical tokens:")]
    assert " 758 tokenised in 4 shards on " in tokens and worker_id() not in tokens, tokens
    # and each premise features shard its goals' candidates in the root's cache
    assert len(list((RootLayout(root).cache / CacheLayout.PREMISE_FEATURES).rglob("*.parquet"))) == 5


class _Killer(threading.Thread):
    """Kills the first worker that marks a run of an embed shard in the root's cache (`RunMarks`):
    the worker dies in the middle of that shard (its first: while it loads the embedder)."""

    def __init__(self, cache: Path, workers: list[subprocess.Popen], timeout_s: float = 300):
        super().__init__(daemon=True)
        self.cache, self.workers, self.timeout_s = cache, {w.pid: w for w in workers}, timeout_s
        self.killed: tuple[str, int] | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        end = time.monotonic() + self.timeout_s
        while not self.stop.is_set() and time.monotonic() < end:
            for mark in self.cache.glob("embeddings/*/.run-*"):
                pid = int(mark.name.rsplit("-", 1)[1])
                if pid in self.workers:
                    os.kill(pid, signal.SIGKILL)
                    self.workers[pid].wait(timeout=30)
                    self.killed = (mark.name.split("-")[1], pid)
                    return
            time.sleep(0.01)


def test_a_worker_killed_in_the_embed_stage_costs_a_retry_not_the_bytes(sample_release_root, tmp_path, monkeypatch,
                                                                         caplog):
    monkeypatch.setenv("MATHINDEX_EMBED_SHARD_TEXTS", SHARD_TEXTS)
    monkeypatch.setenv(SHARD_BYTES_ENV, LEAN_SHARD_BYTES)
    root = _seeded_root(sample_release_root, tmp_path / "root")
    with dask_cluster(tmp_path / "logs") as cluster:
        killer = _Killer(RootLayout(root).cache, cluster.workers)
        killer.start()
        try:
            with caplog.at_level(logging.WARNING):
                code = main(["release", "--out", str(root), "--runner", "dask", "--dask-address", cluster.address])
        finally:
            killer.stop.set()
            killer.join(timeout=10)
        assert code == 0
        assert killer.killed is not None, "no worker marked an embed shard"
        assert sum(w.poll() is None for w in cluster.workers) == 1
    key, pid = killer.killed
    lost = [r.getMessage() for r in caplog.records if f"({key})" in r.getMessage()]
    assert any(f"-{pid} was lost; retried on" in m for m in lost), caplog.text[-3000:]
    _assert_same_bytes(published_release(sample_release_root), _the_release(root))
    assert read_manifest(_the_release(root)).vector_index.embedding.shards["lost_runs"] >= 1
