"""The premise ranker's tree model (premises.boosted) on a whole-Mathlib release: held-out figures
with and without it, against both baselines, and the latency of `rank` with it.

    .venv/bin/python -m bench.experiments.premises_trees RELEASE_DIR [--work DIR] [--latency N] [--json OUT]

The release is read, never written: its files (premises/ too; its priors rewritten with the `simp` column when they lack it) are linked into
`WORK/releases/r/` (bench/common/premises.py's `stage_release`). The weights are the release's
(the stage's coordinate ascent on its FIT_QUERIES tune goals: this code fits them the same way);
the held-out goals are the stage's EVAL_QUERIES sample, each in its file. The tree model is fitted
as the stage fits it (premises.fit.fit_model) on MODEL_QUERIES tune goals, and, for comparison, on
all tune goals and on the FIT_QUERIES goals alone; the tune figure is the model's on its own fitting goals. Then the p50
and p95 of `rank` with the release loaded and the model in use, over held-out goals in their file."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from bench.common.premises import link_premises, stage_release
from mathindex.premises.build import BASELINES, EVAL_QUERIES
from mathindex.premises.fit import FIT_QUERIES, MODEL_QUERIES, collect, fit_model, sample_queries, score
from mathindex.premises.priors import PREMISES_DIR
from mathindex.premises.api import ranker_of
from mathindex.premises.ranker import read_weights
from mathindex.premises.split import SEED, TEST, TUNE
from mathindex.premises.suite import build_suite
from mathindex.search.engine import SearchEngine
from mathindex.store.integrity import read_manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--work", type=Path, default=Path("build/premises-trees"))
    ap.add_argument("--latency", type=int, default=300, help="held-out goals timed")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rel = stage_release(args.release, args.work.resolve())
    decl, deps = pq.read_table(args.release / "declarations.parquet"), pq.read_table(args.release / "dependencies.parquet")
    link_premises(args.release, rel, decl)
    test = sample_queries(build_suite(decl, deps, SEED, TEST)["queries"], EVAL_QUERIES, SEED)
    tune = build_suite(decl, deps, SEED, TUNE)["queries"]
    fit_q, model_q = sample_queries(tune, FIT_QUERIES, SEED), sample_queries(tune, MODEL_QUERIES, SEED)
    model_name = read_manifest(args.release).vector_index.model
    weights = read_weights(rel / PREMISES_DIR)["weights"]
    ranker = ranker_of(SearchEngine(rel, model=model_name), weights=dict(weights))
    t0 = time.perf_counter()
    unique = list({q["id"]: q for q in fit_q + model_q + tune}.values())
    runs = dict(zip([q["id"] for q in unique], collect(ranker, unique)))
    print(f"{len(unique)} tune goals collected in {time.perf_counter() - t0:.0f} s", flush=True)
    t0 = time.perf_counter()
    test_runs = collect(ranker, test)
    print(f"{len(test)} held-out goals collected in {time.perf_counter() - t0:.0f} s", flush=True)
    report = {"held_out_goals": len(test), "weights": weights, "methods": {}}
    rows = {"linear ranker (the release's weights)": (score(ranker, test_runs, weights), score(ranker, [runs[q["id"]] for q in fit_q], weights))}
    for label, queries in ((f"+ trees fitted on all {len(tune)} tune goals", tune),
                           (f"+ trees fitted on {len(model_q)} tune goals (the stage)", model_q),
                           (f"+ trees fitted on {len(fit_q)} tune goals (the weights' sample)", fit_q)):
        t0 = time.perf_counter()
        fit_runs = [runs[q["id"]] for q in queries]
        model, how = fit_model(ranker, fit_runs, weights)
        print(f"{label}: fitted in {time.perf_counter() - t0:.0f} s ({how})", flush=True)
        rows[label] = (score(ranker, test_runs, weights, model=model), score(ranker, fit_runs, weights, model=model))
        if queries is model_q:
            stage_model = model
    for name, w in BASELINES.items():
        rows[name] = (score(ranker, test_runs, w, fallback=False), None)
    print(f"{'method':<48} {'R@10':>6} {'R@32':>6} {'MRR@32':>7}   tune R@10")
    for name, (m, t) in rows.items():
        print(f"{name:<48} {m['recall@10']:6.2f} {m['recall@32']:6.2f} {m['mrr@32']:7.2f}   {'' if t is None else t['recall@10']}")
        report["methods"][name] = {"held_out": m, "tune": t}
    ranker.model = stage_model
    ranker.rank("0 = 0", "", 1)
    ms = []
    for q in sample_queries(test, args.latency, 0):
        t1 = time.perf_counter()
        ranker.rank(q["query"], q.get("context", ""), 32, frozenset([q["theorem"]]), q["file"], q["line"])
        ms.append(1000 * (time.perf_counter() - t1))
    p50, p95 = (float(np.percentile(ms, p)) for p in (50, 95))
    report["latency_ms"] = {"p50": round(p50, 1), "p95": round(p95, 1), "n": len(ms)}
    print(f"rank in its file with the trees, {len(ms)} goals: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {max(ms):.1f} ms")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
