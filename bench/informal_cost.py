"""What the informal channel costs a prose query: `channel_hits` timed with the channel off and on,
query by query in one process (paired, so the machine's load falls on both alike).

    .venv/bin/python bench/informal_cost.py RELEASE_DIR SUITE.json [--rounds 2] [--limit N]

Round 1 starts with an empty vector cache (each candidate's rendering embedded on first sight);
later rounds find the renderings of earlier queries' candidates in it, as a server does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mathindex.evaluation.suites import load_suite  # noqa: E402
from mathindex.search.engine import SearchEngine, query_kind  # noqa: E402


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
    args = ap.parse_args()
    engine = SearchEngine(args.release)
    informal = engine.informal
    if informal is None:
        sys.exit(f"error: {args.release} has no informal channel ({engine.unavailable or 'no renderings'})")
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
              f"p95 {extra[int(0.95 * (len(extra) - 1))]:.1f} ms; {len(informal._vectors)} renderings cached")


if __name__ == "__main__":
    main()
