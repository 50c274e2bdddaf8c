"""Channel weights for reciprocal-rank fusion, by kind of query, measured on a release's suite.

Every query runs through each channel once (the `mathindex search` code path); the candidate lists
are then re-fused under a grid of weights, so the grid costs nothing but arithmetic. Queries are
grouped by the kind the engine can see at query time (`query_kind`: formula-like or words), never
by the suite's own labels, and a weight setting is chosen per kind. To keep the choice honest on a
small dev set the script also reports two-fold cross-validation: weights chosen on the targets of
one half, scored on the other half (folds split by target id, so a target's paraphrases stay
together). The current weights are scored beside it as the baseline.

    .venv/bin/python -m bench.fusion_weights RELEASE_DIR SUITE.json [--metric ndcg@10]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections import defaultdict
from pathlib import Path

from bench.common.rescoring import fold_of
from mathindex.evaluation.metrics import metric_value
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import query_kind
from mathindex.search.weights import weights_for

GRID = {"lexical": (1.0,), "embedding": (0.25, 0.5, 1.0, 1.5, 2.0, 3.0), "formula": (0.25, 0.5, 1.0, 2.0)}


def score(engine, runs, weights, metric: str, k: int) -> float:
    if not runs:
        return float("nan")
    total = 0.0
    for q, results, resolved in runs:
        merged = {**weights_for(query_kind(q.text)), **weights}  # the grid's channels; the prior stays the engine's
        names = [h.name for h in engine.rank(q.text, results, resolved, k, merged).hits]
        total += metric_value(metric, names, set(q.gold))
    return total / len(runs)


def best(engine, runs, metric: str, k: int) -> tuple[dict, float]:
    settings = [dict(zip(GRID, combo)) for combo in itertools.product(*GRID.values())]
    scored = [(score(engine, runs, w, metric, k), -abs(w["embedding"] - 1) - abs(w["formula"] - 1), i) for i, w in enumerate(settings)]
    top = max(scored)  # ties go to the setting nearest equal weights
    return settings[top[2]], top[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--json", type=Path, help="write the figures here as well")
    args = ap.parse_args()
    engine = SearchEngine(args.release)
    suite = load_suite(args.suite)
    t0 = time.perf_counter()
    by_kind = defaultdict(list)
    for q in suite.queries:
        by_kind[query_kind(q.text)].append((q, engine.channel_hits(q.text), engine.resolver.resolve(q.text)))
    print(f"{len(suite.queries)} queries through every channel in {time.perf_counter() - t0:.0f} s; "
          f"unavailable: {engine.unavailable or 'none'}")
    report = {"suite": suite.name, "metric": args.metric, "kinds": {}}
    overall = defaultdict(float)
    for kind, runs in sorted(by_kind.items()):
        current = score(engine, runs, weights_for(kind), args.metric, suite.k)
        chosen, in_sample = best(engine, runs, args.metric, suite.k)
        held_out = []
        for f in (0, 1):
            train = [r for r in runs if fold_of(r[0].id) != f]
            test = [r for r in runs if fold_of(r[0].id) == f]
            w, _ = best(engine, train, args.metric, suite.k)
            held_out.append((score(engine, test, w, args.metric, suite.k), len(test), w))
        cv = sum(s * n for s, n, _ in held_out) / len(runs)
        equal = score(engine, runs, dict.fromkeys(GRID, 1.0), args.metric, suite.k)
        report["kinds"][kind] = {"queries": len(runs), "current_weights": weights_for(kind), "current": current,
                                 "equal_weights": equal, "chosen": chosen, "in_sample": in_sample,
                                 "cross_validated": cv, "fold_choices": [w for _, _, w in held_out]}
        for name, value in (("current", current), ("chosen", in_sample), ("cv", cv), ("equal", equal)):
            overall[name] += value * len(runs) / len(suite.queries)
        print(f"{kind:<8} {len(runs):4d} queries  current {current:5.1f}  equal {equal:5.1f}  "
              f"best in-sample {in_sample:5.1f} {chosen}  2-fold CV {cv:5.1f} (fold choices "
              f"{[w for _, _, w in held_out]})")
    report["overall"] = {k: round(v, 2) for k, v in overall.items()}
    print(f"all      {len(suite.queries):4d} queries  current {overall['current']:5.1f}  equal {overall['equal']:5.1f}  "
          f"best in-sample {overall['chosen']:5.1f}  2-fold CV {overall['cv']:5.1f}  ({args.metric})")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
