"""Benchmark tasks: run the query sets through the search code path, gate, write notes."""

from __future__ import annotations

import json
from pathlib import Path

from mathindex.evaluation.bench import headline, run_suite
from mathindex.evaluation.gate import GateReport, gate_metrics
from mathindex.evaluation.suites import load_suite
from mathindex.schemas.common import BENCH_RESULTS, table
from mathindex.schemas.manifest import SuiteSpec
from mathindex.search.engine import SearchEngine
from mathindex.sources import PACKAGE_ROOT
from mathindex.store import ReleaseLayout, published_release
from mathindex.tasks import HOUR_S, BenchRun, stage

BASELINES = PACKAGE_ROOT / "bench" / "baselines"


@stage(name="run_benchmarks", timeout_seconds=2 * HOUR_S)
def run_benchmarks(release_dir: Path, suites: list[SuiteSpec], model: str | None) -> BenchRun:
    """Every suite through `SearchEngine` (the `mathindex search` code path), with `model` the
    reference the manifest will record (resolved against the release's root, as searches will).
    A suite that fails to run is recorded with its error and no metrics, which the gate then
    treats as a failure."""
    engine = SearchEngine(release_dir, model=model)
    results, rows = {}, []
    for spec in suites:
        try:
            suite = load_suite(Path(spec.path), spec.name)
            summary, suite_rows = run_suite(engine.names, suite)
        except Exception as exc:
            results[spec.name] = {"error": f"{type(exc).__name__}: {exc}", "metrics": {}, "queries": 0, "by_style": {}}
            continue
        results[spec.name] = summary
        rows += suite_rows
    metrics = {"suites": results, "headline": headline(results), "channels_unavailable": engine.unavailable}
    return BenchRun(metrics, table(rows, BENCH_RESULTS))


def baseline_metrics(root: Path, suite_names: list[str]) -> tuple[dict[str, float], str]:
    """Headline metrics to gate against, restricted to the suites this release runs: the last
    published release under root, else the committed `bench/baselines/*.json`."""
    last = published_release(root)
    if last is not None and ReleaseLayout(last).metrics.is_file():
        head, source = json.loads(ReleaseLayout(last).metrics.read_text())["headline"], f"release {last.name}"
    else:
        head, source = {}, "bench/baselines"
        for f in sorted(BASELINES.glob("*.json")):
            head.update(json.loads(f.read_text())["headline"])
    return {k: v for k, v in head.items() if k.split("/", 1)[0] in suite_names}, source


@stage(name="gate")
def gate_release(metrics: dict, baseline: dict[str, float], no_gate: bool = False) -> GateReport:
    """The verdict (`evaluation.gate.gate_metrics`): failed with no suite, unless `no_gate`."""
    return gate_metrics(metrics, baseline, no_gate=no_gate)
