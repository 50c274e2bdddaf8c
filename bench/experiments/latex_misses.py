"""The misses of one style's queries, one line a query: where each channel and the fused list put
the gold, the gold's node kind, and the query text.

Reads bench/cache_runs.py's pickle (every query through every channel once) and re-fuses each query
with the engine's weights (`SearchEngine.rank`), so the fused rank is the engine's. Queries whose
fused rank is 1 are left out unless `--all`.

    .venv/bin/python -m bench.experiments.latex_misses RELEASE_DIR SUITE.json RUNS.pkl [--style q1b_latex] [--all]
"""

from __future__ import annotations

import argparse
import pickle
from collections import Counter
from pathlib import Path

from bench.common.rescoring import node_kinds, rank_of, ranking_engine
from mathindex.evaluation.suites import load_suite
from mathindex.search.kinds import query_kind

CHANNELS = ("lexical", "embedding", "formula", "parent")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("--style", default="q1b_latex")
    ap.add_argument("--all", action="store_true", help="also the queries whose gold is first")
    args = ap.parse_args()
    engine = ranking_engine(args.release)  # ranks the cached lists: no channel opened
    kind_of = node_kinds(args.release)
    suite = load_suite(args.suite)
    cached = pickle.loads(args.runs.read_bytes())["runs"]
    buckets: Counter = Counter()
    for q in suite.queries:
        if q.style != args.style:
            continue
        res, resolved = cached[q.id]
        gold = set(q.gold)
        fused = engine.rank(q.text, res, resolved, 200)
        fr = rank_of([h.name for h in fused.hits], gold)
        ranks = {c: rank_of([n for n, _ in res[c]], gold) for c in res}
        parent = next((h.channels.get("parent") for h in fused.hits if h.name in gold), None)
        ranks["parent"] = parent
        buckets["fused top 10" if fr and fr <= 10 else "fused 11-200" if fr else "fused none"] += 1
        if fr == 1 and not args.all:
            continue
        cells = " ".join(f"{c[:3]}={ranks[c] if ranks.get(c) else '-':>3}" for c in CHANNELS if c in ranks)
        golds = ",".join(sorted(gold))
        print(f"{q.id:<8} {query_kind(q.text):<7} fused={fr if fr else '-':>3} {cells:<34} "
              f"{golds[:48]:<48} {kind_of.get(next(iter(gold)), '?'):<11} {q.text[:110]}")
    print(dict(buckets))


if __name__ == "__main__":
    main()
