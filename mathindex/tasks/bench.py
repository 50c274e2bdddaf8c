"""Benchmark tasks: run the query sets through the search code path, gate, write notes."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq

from mathindex.cache.codes import BENCH
from mathindex.cache.filehash import sha256_file
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import keep_newest, publish_dir, read_parquet, verify
from mathindex.embed.channel import VectorChannel
from mathindex.evaluation.bench import headline, run_suite
from mathindex.evaluation.gate import GateReport, gate_metrics
from mathindex.evaluation.suites import load_suite
from mathindex.schemas.common import BENCH_RESULTS, table
from mathindex.schemas.manifest import SuiteSpec
from mathindex.search.engine import SearchEngine
from mathindex.sources import PACKAGE_ROOT
from mathindex.store.layout import ReleaseLayout
from mathindex.store.releases import published_release
from mathindex.tasks import HOUR_S, BenchRun, stage

BASELINES = PACKAGE_ROOT / "bench" / "baselines"
KEEP = 3  # entries of CacheLayout.bench: the runs of the last few inputs
log = logging.getLogger(__name__)


@stage(name="run_benchmarks", timeout_seconds=2 * HOUR_S)
def run_benchmarks(release_dir: Path, suites: list[SuiteSpec], vector: VectorChannel | None, model: str | None,
                   cache_dir: Path | None = None) -> BenchRun:
    """Every suite through `SearchEngine` (the `mathindex search` code path) over the release's
    files, its channels opened through the engine's registry but for `vector`, the embed stage's
    embedding channel, taken as it is; `model` is the reference the manifest will record (resolved
    against the release's root, as searches will). A suite that fails to run is recorded with its error and no metrics, which the gate then
    treats as a failure. With `cache_dir` (the root's cache), a release whose every file, suite,
    model and line of code is that of an earlier run gets that run's results (`bench_key`): the
    engine is a function of them (the no-change rebuild's `bench_results` were byte-identical). An
    entry whose files differ from what was sealed is logged, dropped and run again."""
    if cache_dir is None:
        return _run_suites(release_dir, suites, vector, model)
    key = bench_key(release_dir, suites, model)
    entry = CacheLayout(cache_dir).bench / key
    if (entry / "metrics.json").is_file() and verify(entry):
        rows = read_parquet(entry / "rows.parquet", BENCH_RESULTS)
        if rows is not None:
            log.info("benchmarks: every input unchanged (key %s): results of the earlier run", key[:16])
            return BenchRun(json.loads((entry / "metrics.json").read_text(encoding="utf-8")), rows)
    run = _run_suites(release_dir, suites, vector, model)
    _store(entry, run)
    return run


def bench_key(release_dir: Path, suites: list[SuiteSpec], model: str | None) -> str:
    """sha256 of what a benchmark run reads: every file of the release so far (its database, being
    written beside the run, and bench/ left out), the suites' bytes, the model reference and the
    digest of the code that runs them (`cache.codes.BENCH`)."""
    release_dir = Path(release_dir)
    h = hashlib.sha256(json.dumps({"code": BENCH.digest(), "model": model,
                                   "suites": [(s.name, _file_sha(Path(s.path))) for s in suites]}).encode())
    for p in sorted(release_dir.rglob("*")):
        rel = p.relative_to(release_dir).as_posix()
        if p.is_file() and not rel.startswith((ReleaseLayout.DUCKDB, ReleaseLayout.BENCH + "/")):
            h.update(f"\0{rel}\0{sha256_file(p)}".encode())
    return h.hexdigest()


def _file_sha(path: Path) -> str:
    return sha256_file(path) if path.is_file() else "missing"


def _store(entry: Path, run: BenchRun) -> None:
    """The run's metrics and rows under `entry`, sealed and renamed into place whole; the newest KEEP kept."""
    tmp = entry.with_name(f".tmp-{entry.name}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / "metrics.json").write_text(json.dumps(dict(run.metrics)), encoding="utf-8")
    pq.write_table(run.rows, tmp / "rows.parquet")
    publish_dir(tmp, entry)
    keep_newest(entry.parent, KEEP)


def _run_suites(release_dir: Path, suites: list[SuiteSpec], vector: VectorChannel | None, model: str | None) -> BenchRun:
    """The suites through a SearchEngine of the release (see `run_benchmarks`)."""
    engine = SearchEngine(release_dir, model=model, channels={VectorChannel.name: vector} if vector is not None else None)
    results, rows = {}, []
    for spec in suites:
        try:
            suite = load_suite(Path(spec.path), spec.name)
            summary, suite_rows = run_suite(engine.names, suite, engine.same_as.key)  # a folded hit counts by fact
        except Exception as exc:
            results[spec.name] = {"error": f"{type(exc).__name__}: {exc}", "metrics": {}, "queries": 0, "by_style": {}}
            continue
        results[spec.name] = summary
        rows += suite_rows
    engine.flush()  # the renderings the suites' prose queries embedded: the next release reads them
    metrics = {"suites": results, "headline": headline(results), "channels_unavailable": engine.unavailable}
    return BenchRun(metrics, table(rows, BENCH_RESULTS))


def baseline_metrics(root: Path, suite_names: list[str], baselines: Path = BASELINES) -> tuple[dict[str, float], str]:
    """Headline metrics to gate against, restricted to the suites this release runs, and where
    they come from: the last published release under root (`release <id>`), else the committed
    `bench/baselines/*.json` (a first release on a fresh root: `committed_source` names the files
    and the releases they were measured on)."""
    last = published_release(root)
    if last is not None and ReleaseLayout(last).metrics.is_file():
        head = json.loads(ReleaseLayout(last).metrics.read_text())["headline"]
        return {k: v for k, v in head.items() if k.split("/", 1)[0] in suite_names}, f"release {last.name}"
    head, used = {}, []
    for f in sorted(baselines.glob("*.json")):
        doc = json.loads(f.read_text(encoding="utf-8"))
        mine = {k: v for k, v in doc["headline"].items() if k.split("/", 1)[0] in suite_names}
        if mine:
            head.update(mine)
            used.append((f.name, doc.get("source")))
    return head, committed_source(used)


def committed_source(used: list[tuple[str, str | None]]) -> str:
    """`committed baseline bench/baselines/<file> (release <id>), …`: what a first release was gated
    against, for its manifest and notes; `committed baselines bench/baselines (none for these
    suites)` when no file has one of its suites."""
    if not used:
        return "committed baselines bench/baselines (none for these suites)"
    files = ", ".join(f"bench/baselines/{name}" + (f" (release {src})" if src else "") for name, src in used)
    return f"committed baseline {files}"


@stage(name="gate")
def gate_release(metrics: dict, baseline: dict[str, float], no_gate: bool = False) -> GateReport:
    """The verdict (`evaluation.gate.gate_metrics`): failed with no suite, unless `no_gate`."""
    return gate_metrics(metrics, baseline, no_gate=no_gate)
