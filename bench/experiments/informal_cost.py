"""What the informal channel costs a prose query: `channel_hits` timed with the channel off and on,
query by query in one process (paired, so the machine's load falls on both alike).

    .venv/bin/python -m bench.experiments.informal_cost RELEASE_DIR SUITE.json [--rounds 2] [--limit N] [--no-store]

Round 1 starts with an empty in-process vector cache: a candidate's rendering comes from the
root's embedding cache (the store, filled by earlier processes: the bench stage, a server) or is
embedded on first sight (`--no-store`: always, nothing read or written); later rounds find the
renderings of earlier queries' candidates in the process's LRU, as a server does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import query_kind


def timed(engine, query: str) -> float:
    t = time.perf_counter()
    engine.channel_hits(query)
    return 1000 * (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0, help="the first N prose queries only (0: all)")
    ap.add_argument("--no-store", action="store_true", help="no root embedding cache: every new rendering is embedded")
    args = ap.parse_args()
    engine = SearchEngine(args.release)
    informal = engine.informal
    if informal is None:
        sys.exit(f"error: {args.release} has no informal channel ({engine.unavailable or 'no renderings'})")
    if args.no_store:
        informal.store = informal._reader = None
    queries = [q.text for q in load_suite(args.suite).queries if query_kind(q.text) == "words"]
    queries = queries[: args.limit] if args.limit else queries
    for r in range(1, args.rounds + 1):
        off, on = [], []
        for q in queries:
            engine.informal = None
            off.append(timed(engine, q))
            engine.informal = informal
            on.append(timed(engine, q))
        extra = sorted(b - a for a, b in zip(off, on))
        print(f"round {r}: {len(queries)} prose queries; channel_hits median {statistics.median(off):.1f} ms off, "
              f"{statistics.median(on):.1f} ms on; added median {statistics.median(extra):.1f} ms, "
              f"p95 {extra[int(0.95 * (len(extra) - 1))]:.1f} ms; {len(informal._vectors)} renderings cached; "
              f"renderings from lru / store / encoded so far: {informal.stats}")


if __name__ == "__main__":
    main()
