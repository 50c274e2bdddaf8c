"""The reference prior (search/prior.py) measured on a release's suite: signal, weight, depth.

Every query runs through each channel once at the deepest candidate depth; the lists are then cut
to each depth and re-ranked under every (signal, weight) setting, so the grid costs only
arithmetic. Settings are scored on the whole suite and by two-fold cross-validation (the folds of
bench/fusion_weights.py: split by target, so a target's paraphrases stay together): the setting
chosen on one half is scored on the other. Channel weights stay the engine's.

    .venv/bin/python -m bench.experiments.ranking_prior RELEASE_DIR SUITE.json [--metric ndcg@10] [--json OUT]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

from bench.common.rescoring import fold_of, grouped_scores
import mathindex.search.weights as channel_weights
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import query_kind
from mathindex.search.weights import weights_for
from mathindex.search.prior import SIGNALS, read_prior
from mathindex.store.layout import ReleaseLayout

DEPTHS = (50, 100, 200)
WEIGHTS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)


def evaluate(engine, runs, priors, setting, metric: str, k: int) -> dict[str, float]:
    """Mean metric over `runs` under one (signal, weight, depth), overall and per style and fold."""
    signal, weight, depth = setting
    engine.prior = priors[signal]
    cut = [(q, {c: hits[:depth] for c, hits in results.items()}, resolved) for q, results, resolved in runs]
    return grouped_scores(engine, cut, lambda q: dict(weights_for(query_kind(q.text)), prior=weight), metric, k)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--json", type=Path, help="write the figures here as well")
    args = ap.parse_args()
    channel_weights.CANDIDATES = max(DEPTHS)
    engine = SearchEngine(args.release)
    priors = {s: read_prior(ReleaseLayout(args.release).table("nodes"), s) for s in SIGNALS}
    if not all(priors.values()):
        sys.exit(f"error: {args.release}/nodes.parquet has no {' / '.join(SIGNALS)} columns (a release built before the prior)")
    suite = load_suite(args.suite)
    t0 = time.perf_counter()
    runs = [(q, engine.channel_hits(q.text), engine.resolver.resolve(q.text)) for q in suite.queries]
    print(f"{len(runs)} queries through every channel in {time.perf_counter() - t0:.0f} s")
    settings = [("in_degree", 0.0, d) for d in DEPTHS] + [
        (s, w, d) for s, w, d in itertools.product(SIGNALS, WEIGHTS, DEPTHS) if w > 0]
    table = {s: evaluate(engine, runs, priors, s, args.metric, suite.k) for s in settings}
    cv = {}
    for f in (0, 1):
        train_key, test_key = f"fold{1 - f}", f"fold{f}"
        chosen = max(settings, key=lambda s: (table[s][train_key], -s[1]))
        cv[test_key] = (chosen, table[chosen][test_key])
    n = {f: sum(1 for q, _, _ in runs if f"fold{fold_of(q.id)}" == f) for f in ("fold0", "fold1")}
    cv_score = sum(cv[f][1] * n[f] for f in cv) / len(runs)
    styles = sorted({q.style for q, _, _ in runs})
    print(f"{'signal':<10} {'w':>4} {'depth':>5} {'all':>6} {'fair':>6} " + " ".join(f"{s[:10]:>10}" for s in styles))
    for s in settings:
        r = table[s]
        print(f"{s[0] if s[1] else 'none':<10} {s[1]:4.1f} {s[2]:5d} {r['all']:6.2f} {r.get('fair', float('nan')):6.2f} "
              + " ".join(f"{r.get(st, float('nan')):10.2f}" for st in styles))
    current = ("in_degree" if weights_for("words").get("prior") else "none", weights_for("words").get("prior", 0.0), channel_weights.CANDIDATES)
    print(f"two-fold CV ({args.metric}): {cv_score:.2f}; fold choices {[cv[f][0] for f in sorted(cv)]}; "
          f"no prior at depth 50 (before): {table[('in_degree', 0.0, 50)]['all']:.2f}")
    if args.json:
        args.json.write_text(json.dumps({
            "suite": suite.name, "metric": args.metric, "cross_validated": cv_score,
            "fold_choices": {f: list(cv[f][0]) for f in cv},
            "settings": [{"signal": s[0], "weight": s[1], "depth": s[2], **table[s]} for s in settings],
            "current": list(current)}, indent=2) + "\n")


if __name__ == "__main__":
    main()
