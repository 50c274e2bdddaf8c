"""The parent channel (search/parents.py) by kind of query, measured on a release's suite.

Reads bench/cache_runs.py's pickle and re-fuses every query with the parent channel under a grid
of its weight, depth and what a member that is no field counts, per kind of query (`query_kind`),
each kind's choice by two-fold cross-validation by target (bench/fusion_weights.py's folds; ties go
to the engine's weights).
Prints per style, in-sample and held out. `--lexical-text unicode` first re-runs the lexical
channel of formula-like queries on `latexquery.unicode_math` of their text (as the engine does when
`LEXICAL_TEXT` says so), `raw` on the text as typed.

    .venv/bin/python -m bench.experiments.parent_channel RELEASE_DIR SUITE.json RUNS.pkl [--lexical-text raw|unicode]
        [--cap KIND=WEIGHT]... [--depths D...] [--others O...]
"""

from __future__ import annotations

import argparse
import itertools
import pickle
from collections import Counter
from pathlib import Path

from bench.common.rescoring import fold_of, grouped_scores
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import query_kind
from mathindex.search.weights import CANDIDATES, weights_for
from mathindex.search.latexquery import unicode_math

WEIGHTS = (0.0, 0.25, 0.5, 1.0, 1.5)
DEPTHS = (10, 20, 50, 100)
OTHERS = (1.0, 0.1, 0.0)  # what a member that is no field or constructor counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("--lexical-text", choices=("raw", "unicode"), default="raw")
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--depths", type=int, nargs="+", default=list(DEPTHS), help="the depths the grid tries")
    ap.add_argument("--others", type=float, nargs="+", default=list(OTHERS),
                    help="the shares of a member that is no field the grid tries")
    ap.add_argument("--cap", action="append", default=[], metavar="KIND=WEIGHT",
                    help="the highest parent weight the grid tries for a kind (what the sample's release gate allows)")
    args = ap.parse_args()
    caps = {k: float(v) for k, v in (c.split("=", 1) for c in args.cap)}
    engine = SearchEngine(args.release)
    suite = load_suite(args.suite)
    cached = pickle.loads(args.runs.read_bytes())["runs"]
    runs = []
    for q in suite.queries:
        res, resolved = cached[q.id]
        if args.lexical_text == "unicode" and query_kind(q.text) == "formula":
            res = {**res, "lexical": engine.lexical.search(unicode_math(q.text), CANDIDATES)}
        runs.append((q, res, resolved))
    styles = sorted({q.style for q in suite.queries})
    depths, others = tuple(args.depths), tuple(args.others)
    full_grid = [s for s in itertools.product(WEIGHTS, depths, others) if s[0] > 0 or s[1:] == (depths[0], others[0])]

    def weights(kind: str, setting) -> dict:
        return {**weights_for(kind), "parent": setting[0], "parent_depth": setting[1], "parent_others": setting[2]}

    chosen_by_kind = {}
    for kind in sorted({query_kind(q.text) for q in suite.queries}):
        mine = [r for r in runs if query_kind(r[0].text) == kind]
        grid = [s for s in full_grid if s[0] <= caps.get(kind, max(WEIGHTS))]
        now = weights_for(kind)
        current = (0.0, depths[0], others[0])  # the channel off: what the grid is measured against
        scores = {s: grouped_scores(engine, mine, lambda q, s=s: weights(kind, s), args.metric, suite.k) for s in grid}
        print(f"{kind}: {len(mine)} queries; (parent weight, depth, others)  all  " + " ".join(f"{st[:11]:>11}" for st in styles))
        for s in [current] + sorted(grid, key=lambda s: -scores[s]["all"])[:6]:
            print(f"  {str(s):<20} {scores[s]['all']:6.2f} " + " ".join(f"{scores[s].get(st, float('nan')):11.2f}" for st in styles))
        folds = []
        for f in (0, 1):
            pick = max(grid, key=lambda s: (scores[s].get(f"fold{1 - f}", 0.0), s == current))
            folds.append(pick)
            print(f"  fold{f}: chosen on the other fold {pick}: {scores[pick].get(f'fold{f}', float('nan')):.2f} "
                  f"(current {scores[current].get(f'fold{f}', float('nan')):.2f})")
        chosen_by_kind[kind] = folds
        n = [sum(1 for q, _, _ in mine if fold_of(q.id) == f) for f in (0, 1)]
        cv = sum(scores[folds[f]].get(f"fold{f}", 0.0) * n[f] for f in (0, 1)) / len(mine)
        today = sum(scores[current].get(f"fold{f}", 0.0) * n[f] for f in (0, 1)) / len(mine)
        print(f"  {kind} two-fold CV {cv:.2f} (current {today:.2f})")
    # whole suite: each kind and fold under the setting its other fold chose (CV), and under each kind's current
    held = Counter()
    for f in (0, 1):
        for q, res, resolved in runs:
            if fold_of(q.id) != f:
                continue
            s = chosen_by_kind[query_kind(q.text)][f]
            v = grouped_scores(engine, [(q, res, resolved)], lambda q, s=s: weights(query_kind(q.text), s), args.metric, suite.k)["all"]
            held["all"] += v
            held[q.style] += v
    counts = Counter(q.style for q in suite.queries)
    now = grouped_scores(engine, runs, lambda q: weights_for(query_kind(q.text)), args.metric, suite.k)
    print(f"whole suite, engine weights: all {now['all']:.2f}; " + ", ".join(f"{st} {now[st]:.2f}" for st in styles))
    print(f"whole suite, two-fold CV:    all {held['all'] / len(runs):.2f}; "
          + ", ".join(f"{st} {held[st] / counts[st]:.2f}" for st in styles))


if __name__ == "__main__":
    main()
