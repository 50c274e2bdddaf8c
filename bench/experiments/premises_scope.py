"""Premise selection step by step on a whole-Mathlib release: what the goal's file (its imports, the
declarations above it) adds to the ranker, against BM25 over statements and the embedding channel.

    .venv/bin/python -m bench.experiments.premises_scope RELEASE_DIR --tables DIR --corpus ROOT [--work DIR] [--json OUT]

The release is read, never written: its files are linked into `WORK/releases/r/` (as
bench/premises_stage.py does) and the priors, the statement index and the import graph of
`ROOT` (premises.imports) are written there, from the release's tables (`--tables`: the flow's
declarations.arrow and dependencies.arrow instead, a root's `cache/lean/lean-final-*/`). The held-out and tune samples are the
stage's (EVAL_QUERIES and FIT_QUERIES, seeded); every goal is collected twice, without its file
and in it. Each step fits its weights on the tune goals (premises.fit, the stage's fit) with only
its features and is scored on the same held-out goals; the baselines are scored on the step's
candidates (so "in its file" they see only what the file sees too). Then the p50 and p95 of a
`rank` call with the release loaded (the last step's weights), each goal without and in its file in
turn, and the median per-goal ratio. The runs are kept in WORK/runs.pkl: a second call re-fits
and re-times from them (the fit is deterministic: the same figures).
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bench.common.premises import stage_release
from mathindex.premises.build import BASELINES, EVAL_QUERIES
from mathindex.premises.fit import FIT_QUERIES, Run, fit_weights, sample_queries, score
from mathindex.premises.imports import read_imports
from mathindex.premises.priors import PREMISES_DIR, write_premise_index
from mathindex.premises.ranker import DEFAULT_WEIGHTS, FEATURES, FILE_FEATURES, PremiseRanker
from mathindex.premises.split import SEED, TEST, TUNE, split_files
from mathindex.premises.suite import build_suite
from mathindex.premises.api import ranker_of
from mathindex.search.engine import SearchEngine
from mathindex.store.integrity import read_manifest

OLD = tuple(f for f in FEATURES if f not in FILE_FEATURES)
STEPS = [  # (name, in its file, features)
    ("0 no file (the release's ranker, refitted)", False, OLD),
    ("1 in its file: only what it can see", True, OLD),
    ("2 + earlier, near", True, OLD + ("earlier", "near")),
    ("3 + imported, knn_near (the stage)", True, FEATURES),
]


def read_tables(release: Path, tables: Path | None) -> tuple[pa.Table, pa.Table]:
    """(declarations, dependencies): the flow's Arrow files under `tables`, else the release's
    Parquet tables with the declarations put back in the order of the release's own priors (the
    store's order differs among declarations of one line, and the formal index has the flow's)."""
    if tables is not None:
        def read(name):
            with pa.memory_map(str(tables / f"{name}.arrow")) as f:
                return pa.ipc.open_file(f).read_all()
        return read("declarations"), read("dependencies")
    decl = pl.read_parquet(release / "declarations.parquet")
    order = pl.read_parquet(release / PREMISES_DIR / "priors.parquet", columns=["name"]).with_row_index("pos")
    decl = decl.join(order.rename({"name": "full_name"}), on="full_name", how="left").sort("pos", maintain_order=True, nulls_last=True)
    return decl.drop("pos").to_arrow(), pq.read_table(release / "dependencies.parquet")


def only(runs: list[Run], features: tuple[str, ...]) -> list[Run]:
    """The runs with every feature outside `features` zeroed."""
    keep = np.array([f in features for f in FEATURES], dtype=np.float32)
    return [Run(replace(r.candidates, features=r.candidates.features * keep), r.gold) for r in runs]


def collect(ranker: PremiseRanker, queries: list[dict], in_file: bool) -> list[Run]:
    return [Run(ranker.candidates(q["query"], q.get("context", ""), frozenset([q["theorem"]]),
                                  q["file"] if in_file else None, q["line"] if in_file else None), set(q["gold"]))
            for q in queries]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--tables", type=Path, help="the flow's declarations.arrow and dependencies.arrow (default: the release's tables)")
    ap.add_argument("--corpus", type=Path, required=True, help="the Lean corpus root the release was built from")
    ap.add_argument("--work", type=Path, default=Path("build/premises-scope"))
    ap.add_argument("--latency", type=int, default=300, help="held-out goals timed")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rel = stage_release(args.release, args.work.resolve())
    decl, deps = read_tables(args.release, args.tables)
    imports = read_imports([args.corpus])
    parts = split_files(decl.column("file").to_pylist(), SEED)
    index = write_premise_index(decl, deps, parts, rel / PREMISES_DIR, args.work / "cache", imports)
    print(f"priors, statements and {imports.num_rows} files' imports written in {time.perf_counter() - t0:.0f} s: {index}", flush=True)
    test = sample_queries(build_suite(decl, deps, SEED, TEST)["queries"], EVAL_QUERIES, SEED)
    tune = sample_queries(build_suite(decl, deps, SEED, TUNE)["queries"], FIT_QUERIES, SEED)
    model = read_manifest(args.release).vector_index.model
    ranker = ranker_of(SearchEngine(rel, model=model), weights=dict(DEFAULT_WEIGHTS))
    runs_file = args.work / "runs.pkl"
    if runs_file.is_file():
        runs = pickle.loads(runs_file.read_bytes())
    else:
        runs = {}
        for part, queries in (("tune", tune), ("test", test)):
            for in_file in (False, True):
                t1 = time.perf_counter()
                runs[part, in_file] = collect(ranker, queries, in_file)
                print(f"{part} {'in its file' if in_file else 'no file'}: {len(queries)} goals in {time.perf_counter() - t1:.0f} s", flush=True)
        runs_file.write_bytes(pickle.dumps(runs))
    report = {"held_out_goals": len(test), "tune_goals": len(tune), "steps": {}}
    print(f"{'step':<46} {'method':<26} {'R@10':>6} {'R@32':>6} {'MRR@32':>7}")
    for name, in_file, features in STEPS:
        fit_runs, test_runs = only(runs["tune", in_file], features), only(runs["test", in_file], features)
        weights, how = fit_weights(ranker, fit_runs, {f: DEFAULT_WEIGHTS[f] for f in features})
        figures = {"ranker": score(ranker, test_runs, weights)}
        figures |= {b: score(ranker, test_runs, w, fallback=False) for b, w in BASELINES.items()}
        report["steps"][name] = {"figures": figures, "weights": {f: w for f, w in weights.items() if w},
                                 "tune_recall@10": how["after"]["recall@10"]}
        for method, m in figures.items():
            print(f"{name:<46} {method:<26} {m['recall@10']:6.2f} {m['recall@32']:6.2f} {m['mrr@32']:7.2f}", flush=True)
        print(f"{'':<46} weights {report['steps'][name]['weights']} (tune R@10 {how['after']['recall@10']:.2f})", flush=True)
    ranker.weights = weights
    ranker.rank("0 = 0", "", 1)
    ms: dict[bool, list[float]] = {False: [], True: []}
    for q in sample_queries(test, args.latency, 0):  # each goal without and in its file, in turn
        for in_file in (False, True):
            t1 = time.perf_counter()
            ranker.rank(q["query"], q.get("context", ""), 32, frozenset([q["theorem"]]),
                        q["file"] if in_file else None, q["line"] if in_file else None)
            ms[in_file].append(1000 * (time.perf_counter() - t1))
    report["latency_ms"] = {}
    for in_file, got in ms.items():
        p50, p95 = (float(np.percentile(got, p)) for p in (50, 95))
        key = "in its file" if in_file else "no file"
        report["latency_ms"][key] = {"p50": round(p50, 1), "p95": round(p95, 1), "n": len(got)}
        print(f"rank {key}, {len(got)} goals: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {max(got):.1f} ms")
    ratio = float(np.median(np.array(ms[True]) / np.array(ms[False])))
    report["latency_ms"]["median ratio in file / no file"] = round(ratio, 3)
    print(f"median per-goal ratio in its file / no file: {ratio:.3f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
