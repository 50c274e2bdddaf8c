"""What the eleventh session's signals add to premise selection: the proofs above a goal in its
file (`above`, `knn_above`) and the goal's operator pairs (`pairs`). The stage's fit with and
without each, on the same candidates, against both baselines.

    .venv/bin/python -m bench.experiments.premises_signals RELEASE_DIR [--work DIR] [--json OUT]

The release is read, never written (bench/common/premises.py's `stage_release`; its premises/ files
linked, with `file_proofs.parquet` built from its tables when it predates them). Candidates are
collected once, each goal in its file, for the stage's samples: FIT_QUERIES tune goals (the
weights), MODEL_QUERIES tune goals (the trees) and EVAL_QUERIES held-out goals (the figures). Each
variant is then fitted as the stage fits: coordinate ascent from DEFAULT_WEIGHTS on the FIT_QUERIES
goals, the trees on the MODEL_QUERIES goals. A variant without a signal sets its column to 0 (so
neither the weights, nor the linear order, nor the trees can use it; the candidate pool itself is
the same: the rows it would add are in it either way)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import pyarrow.parquet as pq

from bench.common.premises import stage_release, link_premises
from mathindex.premises.build import BASELINES, EVAL_QUERIES
from mathindex.premises.fit import FIT_QUERIES, MODEL_QUERIES, Run, collect, fit_model, fit_weights, sample_queries, score
from mathindex.premises.priors import FILE_PROOFS_FILE, PREMISES_DIR, build_file_proofs
from mathindex.premises.ranker import DEFAULT_WEIGHTS, FEATURES, PremiseRanker
from mathindex.premises.split import SEED, TEST, TUNE, split_files
from mathindex.premises.suite import build_suite
from mathindex.premises.api import ranker_of
from mathindex.search.engine import SearchEngine
from mathindex.store.integrity import read_manifest

ABOVE, PAIRS = ("above", "knn_above"), ("pairs",)
VARIANTS = {"without the new signals": ABOVE + PAIRS, "+ pairs": ABOVE, "+ above, knn_above": PAIRS, "+ both (the stage)": ()}


def without(runs: list[Run], signals: tuple[str, ...]) -> list[Run]:
    """The runs with the signals' columns set to 0 (copies)."""
    cols = [FEATURES.index(s) for s in signals]
    out = []
    for r in runs:
        features = r.candidates.features.copy()
        features[:, cols] = 0.0
        out.append(Run(dataclasses.replace(r.candidates, features=features), r.gold))
    return out


def fitted(ranker: PremiseRanker, fit_runs: list[Run], model_runs: list[Run], test_runs: list[Run]) -> dict:
    """The stage's fit (weights, then trees) and its held-out figures, linear and with the trees."""
    t0 = time.perf_counter()
    weights, how = fit_weights(ranker, fit_runs, DEFAULT_WEIGHTS)
    model, model_how = fit_model(ranker, model_runs, weights)
    return {"weights": weights, "tune": how["after"], "trees": model_how, "seconds": round(time.perf_counter() - t0, 1),
            "linear": score(ranker, test_runs, weights), "ranker": score(ranker, test_runs, weights, model=model)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--work", type=Path, default=Path("build/premises-signals"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rel = stage_release(args.release, args.work.resolve())
    decl, deps = pq.read_table(args.release / "declarations.parquet"), pq.read_table(args.release / "dependencies.parquet")
    link_premises(args.release, rel, decl)
    if not (rel / PREMISES_DIR / FILE_PROOFS_FILE).exists():
        pq.write_table(build_file_proofs(decl, deps, split_files(decl.column("file").to_pylist(), SEED)),
                       rel / PREMISES_DIR / FILE_PROOFS_FILE)
    test = sample_queries(build_suite(decl, deps, SEED, TEST)["queries"], EVAL_QUERIES, SEED)
    tune = build_suite(decl, deps, SEED, TUNE)["queries"]
    fit_q, model_q = sample_queries(tune, FIT_QUERIES, SEED), sample_queries(tune, MODEL_QUERIES, SEED)
    model_name = read_manifest(args.release).vector_index.model
    ranker = ranker_of(SearchEngine(rel, model=model_name), weights=dict(DEFAULT_WEIGHTS))
    t0 = time.perf_counter()
    unique = list({q["id"]: q for q in fit_q + model_q}.values())
    runs = dict(zip([q["id"] for q in unique], collect(ranker, unique)))
    test_runs = collect(ranker, test)
    print(f"{len(unique)} tune and {len(test)} held-out goals collected in {time.perf_counter() - t0:.0f} s", flush=True)
    fit_runs, model_runs = [runs[q["id"]] for q in fit_q], [runs[q["id"]] for q in model_q]
    report = {"held_out_goals": len(test), "variants": {}, "baselines": {}}
    for label, strip in VARIANTS.items():
        f, m, t = (without(x, strip) if strip else x for x in (fit_runs, model_runs, test_runs))
        report["variants"][label] = got = fitted(ranker, f, m, t)
        print(f"{label}: fitted in {got['seconds']} s, weights {got['weights']}", flush=True)
    for name, w in BASELINES.items():
        report["baselines"][name] = score(ranker, test_runs, w, fallback=False)
    print(f"{'method':<44} {'R@10':>6} {'R@32':>6} {'MRR@32':>7}")
    for label, got in report["variants"].items():
        for kind in ("linear", "ranker"):
            m = got[kind]
            print(f"{label + (' + trees' if kind == 'ranker' else ', linear'):<44} {m['recall@10']:6.2f} {m['recall@32']:6.2f} {m['mrr@32']:7.2f}")
    for name, m in report["baselines"].items():
        print(f"{name:<44} {m['recall@10']:6.2f} {m['recall@32']:6.2f} {m['mrr@32']:7.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, default=float) + "\n")


if __name__ == "__main__":
    main()
