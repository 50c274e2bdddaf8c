"""Runs every query of a suite through each channel of a release once and pickles the lists, so
that later benchmarks (bench/experiments/symbol_map.py) rescore without running the embedder again.

    .venv/bin/python -m bench.cache_runs RELEASE_DIR SUITE.json OUT.pkl
"""

from __future__ import annotations

import pickle
import sys
import time
from pathlib import Path

from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine


def main() -> None:
    release, suite_path, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    engine = SearchEngine(release)
    suite = load_suite(suite_path)
    t0 = time.perf_counter()
    runs = {q.id: (engine.channel_hits(q.text), engine.resolver.resolve(q.text)) for q in suite.queries}
    engine.flush()
    if engine.informal is not None:
        print(f"informal renderings: {engine.informal.stats}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pickle.dumps({"release": str(release), "suite": str(suite_path), "runs": runs}))
    print(f"{len(runs)} queries through every channel in {time.perf_counter() - t0:.0f} s -> {out}")


if __name__ == "__main__":
    main()
