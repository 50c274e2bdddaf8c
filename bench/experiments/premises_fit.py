"""The fit's scoring against the full sort it replaced, on a release's tune goals: CPU seconds of
`fit_weights` each way, and whether the weights, the fit's record and the figures are identical.

    .venv/bin/python -m bench.experiments.premises_fit RELEASE_DIR TABLES_DIR MODEL_REFERENCE

TABLES_DIR holds declarations.arrow and dependencies.arrow in the flow's order (bench/premises_stage.py
says why); RELEASE_DIR/premises/ must hold the stage's priors and statements index. `full_sort_*`
is the scoring before issue 13 (every positive candidate sorted, the weight vector made per goal).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import mathindex.premises.fit as fit
from mathindex.evaluation.metrics import mean_metrics
from mathindex.premises.build import BASELINES
from mathindex.premises.ranker import DEFAULT_WEIGHTS, FEATURES, rank_weights
from mathindex.premises.split import SEED, TUNE
from mathindex.premises.suite import build_suite
from mathindex.premises.api import ranker_of
from mathindex.search.engine import SearchEngine


def full_sort_ordered(cand, weights, k):
    w = np.array([weights.get(f, 0.0) for f in FEATURES], dtype=np.float32)
    scores = cand.features @ w
    positive = np.flatnonzero(scores > 0)
    return positive[np.lexsort((cand.docs[positive], -scores[positive]))][:k], scores


def full_sort_score(ranker, runs, weights, fallback=True):
    def ranked(run):
        c = run.candidates
        order, _ = full_sort_ordered(c, rank_weights(c, weights) if fallback else weights, 32)
        return [ranker.names[int(d)] for d in c.docs[order]]

    return mean_metrics([(ranked(r), r.gold) for r in runs], fit.METRICS)


def read_arrow(path: Path) -> pa.Table:
    with pa.memory_map(str(path)) as f:
        return pa.ipc.open_file(f).read_all()


def main() -> None:
    rel, tables, model = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    decl, deps = read_arrow(tables / "declarations.arrow"), read_arrow(tables / "dependencies.arrow")
    ranker = ranker_of(SearchEngine(rel, model=model), weights=dict(DEFAULT_WEIGHTS))
    tune = build_suite(decl, deps, SEED, TUNE)["queries"]
    runs = fit.collect(ranker, fit.sample_queries(tune, fit.FIT_QUERIES, SEED))
    now = fit.score
    t0 = time.process_time()
    w_new, how_new = fit.fit_weights(ranker, runs, DEFAULT_WEIGHTS)
    t_new = time.process_time() - t0
    fit.score = full_sort_score
    t0 = time.process_time()
    w_old, how_old = fit.fit_weights(ranker, runs, DEFAULT_WEIGHTS)
    t_old = time.process_time() - t0
    fit.score = now
    print(f"{len(runs)} tune goals; fit CPU: full sort {t_old:.1f} s, now {t_new:.1f} s, ratio {t_new / t_old:.2f}")
    print(f"weights identical: {w_new == w_old}; fit record identical: {how_new == how_old}; weights {w_new}")
    for name, w in {"ranker": w_new, **BASELINES}.items():
        a, b = now(ranker, runs, w, fallback=name == "ranker"), full_sort_score(ranker, runs, w, fallback=name == "ranker")
        print(f"{name}: identical {a == b} {a}")


if __name__ == "__main__":
    main()
