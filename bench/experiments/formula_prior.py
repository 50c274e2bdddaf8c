"""The reference prior's weight for one kind of query, re-fused from bench/cache_runs.py's pickle:
nDCG@10 (or --metric) of that kind's queries per weight, overall, for one style and per fold
(bench/fusion_weights.py's folds by target), the kind's other weights the engine's.

    .venv/bin/python -m bench.experiments.formula_prior RELEASE_DIR SUITE.json RUNS.pkl [--kind formula] [--style q1b_latex]
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path

from bench.common.rescoring import grouped_scores
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import query_kind
from mathindex.search.weights import weights_for

PRIORS = (0.75, 1.0, 1.5, 2.0, 3.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("--kind", default="formula", choices=("formula", "lean", "words"))
    ap.add_argument("--style", default="q1b_latex")
    ap.add_argument("--metric", default="ndcg@10")
    args = ap.parse_args()
    engine = SearchEngine(args.release)
    suite = load_suite(args.suite)
    cached = pickle.loads(args.runs.read_bytes())["runs"]
    mine = [(q, *cached[q.id]) for q in suite.queries if query_kind(q.text) == args.kind]
    print(f"{args.kind}: {len(mine)} queries; prior  all  {args.style}  fold0  fold1 (engine: {weights_for(args.kind)['prior']})")
    for prior in PRIORS:
        g = grouped_scores(engine, mine, lambda q, p=prior: {**weights_for(args.kind), "prior": p}, args.metric, suite.k)
        print(f"  {prior:5.2f} {g['all']:6.2f} {g.get(args.style, float('nan')):6.2f} {g['fold0']:6.2f} {g['fold1']:6.2f}")


if __name__ == "__main__":
    main()
