"""Whole-suite figures of two channel-list pickles (bench/cache_runs.py) side by side: a baseline
(main's engine, its lists and, with --baseline-parent, main's formula-kind parent weight) and this
branch's, re-fused with the engine's weights; nDCG@10, R@10 and MRR@10, overall, fair subset and per style.

    .venv/bin/python -m bench.experiments.latex_summary RELEASE_DIR SUITE.json BASE.pkl NEW.pkl [--baseline-parent 0.25]
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

METRICS = ("ndcg@10", "recall@10", "mrr@10")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("base", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--baseline-parent", type=float, help="the formula kind's parent weight of the baseline")
    args = ap.parse_args()
    engine = SearchEngine(args.release)
    suite = load_suite(args.suite)
    styles = sorted({q.style for q in suite.queries})
    print(f"{'':<10} {'metric':<10} {'all':>6} {'fair':>6} " + " ".join(f"{st[:11]:>11}" for st in styles))
    for label, path, parent in (("baseline", args.base, args.baseline_parent), ("branch", args.new, None)):
        cached = pickle.loads(path.read_bytes())["runs"]
        runs = [(q, *cached[q.id]) for q in suite.queries]

        def weights(q, parent=parent):
            w = weights_for(query_kind(q.text))
            return {**w, "parent": parent} if parent is not None and query_kind(q.text) == "formula" else w

        for metric in METRICS:
            g = grouped_scores(engine, runs, weights, metric, suite.k)
            print(f"{label:<10} {metric:<10} {g['all']:6.2f} {g['fair']:6.2f} " + " ".join(f"{g[st]:11.2f}" for st in styles))


if __name__ == "__main__":
    main()
