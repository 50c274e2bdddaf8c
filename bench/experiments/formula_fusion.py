"""The formula channel's weight and calibration, by kind of query, measured on a release's suite.

Reads the channel lists of bench/cache_runs.py's pickle (every query through every channel once)
and re-fuses them, for each kind of query that runs the formula channel (`query_kind`: formula-like
TeX or math symbols, Lean-looking), under a grid of the channel's weight and its gap calibration
(fusion.gap_weights: the weight times (1 - score at rank 10 / score at rank 1) ** p). It prints the
formula channel's contribution per style (current weights against the channel off), the best
setting in-sample and two-fold cross-validation by target (bench/fusion_weights.py's folds).

    .venv/bin/python -m bench.experiments.formula_fusion RELEASE_DIR SUITE.json RUNS.pkl [--metric ndcg@10] [--skip-variables 0|1]
"""

from __future__ import annotations

import argparse
import itertools
import pickle
from pathlib import Path

from bench.common.rescoring import fold_of, grouped_scores
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import query_kind, runs_formula_channel
from mathindex.search.weights import CANDIDATES, weights_for
from mathindex.search.fusion import GAP_PREFIX

WEIGHTS = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0)
GAP_POWERS = (0.0, 1.0, 2.0)


def setting_weights(kind: str, weight: float, power: float) -> dict[str, float]:
    return {**weights_for(kind), "formula": weight, GAP_PREFIX + "formula": power}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--skip-variables", choices=("0", "1"), help="re-run the formula channel (not the pickle's "
                    "lists) with its pieces that are one variable skipped (1) or searched (0)")
    args = ap.parse_args()
    engine = SearchEngine(args.release)
    suite = load_suite(args.suite)
    cached = pickle.loads(args.runs.read_bytes())["runs"]
    if args.skip_variables is not None:
        engine.formula.skip_variables = args.skip_variables == "1"
        cached = {q.id: _rerun_formula(engine, q.text, *cached[q.id]) for q in suite.queries}
    everything = [(q, _as_now(q.text, cached[q.id][0]), cached[q.id][1]) for q in suite.queries]
    runs = [r for r in everything if "formula" in r[1]]
    styles = sorted({q.style for q, _, _ in runs})
    for kind in sorted({query_kind(q.text) for q, _, _ in runs}):
        mine = [r for r in runs if query_kind(r[0].text) == kind]
        grid = list(itertools.product(WEIGHTS, GAP_POWERS))
        grid = [s for s in grid if s[0] > 0 or s[1] == 0]
        scores = {s: grouped_scores(engine, mine, lambda q, s=s: setting_weights(kind, *s), args.metric, suite.k) for s in grid}
        current = grouped_scores(engine, mine, lambda q: weights_for(kind), args.metric, suite.k)
        off = scores[(0.0, 0.0)]
        print(f"{kind}: {len(mine)} queries run the formula channel; current weights {weights_for(kind)}")
        print(f"  {'setting (weight, gap power)':<28} {'all':>6} " + " ".join(f"{st[:11]:>11}" for st in styles))
        for name, sc in [("current", current), ("channel off", off)] + sorted(scores.items(), key=lambda x: -x[1]["all"])[:8]:
            print(f"  {str(name):<28} {sc['all']:6.2f} " + " ".join(f"{sc.get(st, float('nan')):11.2f}" for st in styles))
        held = []
        for f in (0, 1):
            chosen = max(grid, key=lambda s: (scores[s][f"fold{1 - f}"], -abs(s[0] - weights_for(kind)["formula"])))
            n = sum(1 for q, _, _ in mine if f"fold{f}" in scores[chosen] and fold_of(q.id) == f)
            held.append((scores[chosen][f"fold{f}"], n, chosen, current[f"fold{f}"]))
            print(f"  fold{f}: chosen on the other fold {chosen}: {scores[chosen][f'fold{f}']:.2f} (current {current[f'fold{f}']:.2f})")
        total = sum(n for _, n, _, _ in held)
        print(f"  two-fold CV {sum(s * n for s, n, _, _ in held) / total:.2f}, current {sum(c * n for _, n, _, c in held) / total:.2f} ({args.metric})")
    summary(engine, everything, sorted({q.style for q in suite.queries}), args.metric, suite.k)


def _rerun_formula(engine, text: str, results: dict, resolved: list) -> tuple[dict, list]:
    """The pickle's lists with the formula channel's searched again where it runs."""
    if "formula" not in results and not runs_formula_channel(text):
        return results, resolved
    return {**results, "formula": engine.formula.search(text, CANDIDATES)}, resolved


def _as_now(text: str, results: dict) -> dict:
    """A cached query's lists as the engine makes them now: no formula list where
    `runs_formula_channel` says the channel does not run (pickles made before the rule have one)."""
    return results if runs_formula_channel(text) else {c: v for c, v in results.items() if c != "formula"}


def summary(engine, everything, styles, metric: str, k: int) -> None:
    """Every query of the suite under the engine's weights, with and without the formula channel."""
    now = grouped_scores(engine, everything, lambda q: weights_for(query_kind(q.text)), metric, k)
    off = grouped_scores(engine, everything, lambda q: {**weights_for(query_kind(q.text)), "formula": 0.0}, metric, k)
    print(f"whole suite ({len(everything)} queries)  {'all':>6} " + " ".join(f"{st[:11]:>11}" for st in styles))
    for name, sc in (("engine weights", now), ("formula channel off", off)):
        print(f"  {name:<24} {sc['all']:6.2f} " + " ".join(f"{sc.get(st, float('nan')):11.2f}" for st in styles))


if __name__ == "__main__":
    main()
