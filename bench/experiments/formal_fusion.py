"""The formal channel's fusion weight, measured on a release's suite (MathlibQR dev).

Every query runs through each channel once (the formal channel only for Lean-looking queries,
engine.looks_like_lean); the lists are then re-fused under each formal weight, so the grid costs
only arithmetic. Reported per query style, overall, and by two-fold cross-validation (the folds of
bench/fusion_weights.py: split by target): the weight chosen on one half is scored on the other.
Weight 0 is the engine without the formal channel (the other channels' weights unchanged).

    .venv/bin/python -m bench.experiments.formal_fusion RELEASE_DIR SUITE.json [--metric ndcg@10] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench.common.rescoring import fold_of, grouped_scores
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import query_kind
from mathindex.search.weights import weights_for

WEIGHTS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def evaluate(engine, runs, weight: float, metric: str, k: int) -> dict[str, float]:
    """Mean metric over `runs` with the formal channel at `weight`, overall, per style and fold."""
    return grouped_scores(engine, runs, lambda q: dict(weights_for(query_kind(q.text)), formal=weight), metric, k)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--json", type=Path, help="write the figures here as well")
    args = ap.parse_args()
    engine = SearchEngine(args.release)
    if engine.formal is None:
        sys.exit(f"error: {args.release} has no formal index ({engine.unavailable.get('formal', 'formal_statements.parquet missing')})")
    suite = load_suite(args.suite)
    t0 = time.perf_counter()
    runs = []
    for q in suite.queries:
        results = engine.channel_hits(q.text)
        runs.append((q, results, engine.resolver.resolve(q.text)))
    print(f"{len(runs)} queries through every channel in {time.perf_counter() - t0:.0f} s; "
          f"{sum(1 for _, r, _ in runs if 'formal' in r)} ran the formal channel")
    table = {w: evaluate(engine, runs, w, args.metric, suite.k) for w in WEIGHTS}
    cv = {}
    for f in (0, 1):
        train_key, test_key = f"fold{1 - f}", f"fold{f}"
        chosen = max(WEIGHTS, key=lambda w: (table[w][train_key], -w))
        cv[test_key] = (chosen, table[chosen][test_key])
    n = {f: sum(1 for q, _, _ in runs if f"fold{fold_of(q.id)}" == f) for f in ("fold0", "fold1")}
    cv_score = sum(cv[f][1] * n[f] for f in cv) / len(runs)
    styles = sorted({q.style for q, _, _ in runs})
    cv_style = {}  # each style scored on each fold with the weight the other fold chose
    for s in styles:
        parts = [(cv[f][0], f, sum(1 for q, _, _ in runs if q.style == s and f"fold{fold_of(q.id)}" == f)) for f in cv]
        cv_style[s] = sum(table[w].get(f"{s}/{f}", 0.0) * m for w, f, m in parts) / max(1, sum(m for _, _, m in parts))
    print(f"{'formal w':>8} {'all':>6} {'fair':>6} " + " ".join(f"{s[:12]:>12}" for s in styles))
    for w in WEIGHTS:
        r = table[w]
        print(f"{w:8.1f} {r['all']:6.2f} {r.get('fair', float('nan')):6.2f} " + " ".join(f"{r.get(s, float('nan')):12.2f}" for s in styles))
    print("two-fold CV by style: " + ", ".join(f"{s} {v:.2f}" for s, v in cv_style.items()))
    print(f"two-fold CV ({args.metric}): {cv_score:.2f}; fold choices {[cv[f][0] for f in sorted(cv)]}; "
          f"without the formal channel: {table[0.0]['all']:.2f}")
    if args.json:
        args.json.write_text(json.dumps({
            "suite": suite.name, "metric": args.metric, "cross_validated": cv_score, "cross_validated_by_style": cv_style,
            "fold_choices": {f: cv[f][0] for f in cv}, "settings": [{"weight": w, **table[w]} for w in WEIGHTS]},
            indent=2) + "\n")


if __name__ == "__main__":
    main()
