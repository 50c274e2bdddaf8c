"""Premise selection on a release's held-out suite: R@10, R@32 and MRR@32 of the ranker, of BM25
over statements and of the embedding channel alone (when the release has a vector index), and the
latency of `PremiseRanker.rank` (goal check, every signal, the weighted sum) with the release loaded.

    .venv/bin/python -m bench.premises RELEASE_DIR [--suite SUITE.json] [--sample N] [--latency N] [--json OUT]

The suite defaults to the one the release stage wrote (RELEASE/premises/suite.json: theorems of
the held-out files, mathindex.premises.suite); the weights are the release's (weights.json).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from mathindex.premises.build import SUITE_FILE, evaluate
from mathindex.premises.fit import sample_queries
from mathindex.premises.priors import PREMISES_DIR
from mathindex.premises.api import ranker_of
from mathindex.premises.ranker import PremiseRanker
from mathindex.search.engine import SearchEngine


def latencies(ranker: PremiseRanker, queries: list[dict]) -> list[float]:
    """Milliseconds of one `rank` call per query (k 32, the theorem itself left out, in its file
    when the suite says), after one warm-up."""
    ranker.rank("0 = 0", "", 1)
    out = []
    for q in queries:
        t0 = time.perf_counter()
        ranker.rank(q["query"], q.get("context", ""), 32, frozenset([q["theorem"]]), q.get("file"), q.get("line"))
        out.append(1000 * (time.perf_counter() - t0))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--suite", type=Path, help="default: RELEASE/premises/suite.json")
    ap.add_argument("--sample", type=int, help="score a seeded sample of this many goals (default: all)")
    ap.add_argument("--latency", type=int, default=1000, help="queries timed (a seeded sample of the suite)")
    ap.add_argument("--json", type=Path, help="write the figures here as well")
    args = ap.parse_args()
    t0 = time.perf_counter()
    engine = SearchEngine(args.release)
    ranker = ranker_of(engine)
    print(f"release loaded in {time.perf_counter() - t0:.1f} s; channels unavailable: {sorted(engine.unavailable) or 'none'}")
    suite = json.loads((args.suite or args.release / PREMISES_DIR / SUITE_FILE).read_text(encoding="utf-8"))
    queries = sample_queries(suite["queries"], args.sample, 0) if args.sample else suite["queries"]
    t0 = time.perf_counter()
    figures, _ = evaluate(ranker, queries, ranker.weights, ranker.model)
    print(f"{len(queries)} goals of {suite.get('files', '?')} held-out files, scored in {time.perf_counter() - t0:.0f} s; "
          f"weights {ranker.weights}")
    print(f"{'method':<26} {'R@10':>6} {'R@32':>6} {'MRR@32':>7}")
    for name, m in figures.items():
        print(f"{name:<26} {m['recall@10']:6.2f} {m['recall@32']:6.2f} {m['mrr@32']:7.2f}")
    ms = latencies(ranker, sample_queries(queries, args.latency, 0))
    p50, p95 = (float(np.percentile(ms, q)) for q in (50, 95))
    print(f"latency over {len(ms)} goals: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {max(ms):.1f} ms")
    if args.json:
        args.json.write_text(json.dumps({"suite": suite.get("suite"), "queries": len(queries), "figures": figures,
                                         "weights": ranker.weights, "latency_ms": {"p50": p50, "p95": p95, "n": len(ms)}},
                                        indent=2) + "\n")


if __name__ == "__main__":
    main()
