"""The serving process's memory, part by part: RSS as `mathindex serve` opens a release.

    .venv/bin/python -m bench.serve_memory RELEASE [--queries SUITE] [--json OUT]

Opens RELEASE as the server does (`ServedRelease`, answer cache off) with each part of the opening
wrapped in place, and prints the process's RSS (/proc/self/statm) after the imports and the growth
while each part opened: the nodes table with the identifier resolver and the prior, the parent
sets, each channel, the query encoder, the premise ranker, DuckDB and the warm-up query. With
`--queries`, every distinct query of the load test's mix (bench/serve_load.py) is answered once
after opening and the RSS after them is printed too (caches fill: trees, renderings). Nested parts
(the lexical index the premise ranker opens) count in their own line, not their parent's.

To pair two builds of the code, run it with the baseline's checkout first on PYTHONPATH and `-P`
(the working directory is then not put first on the path, so the baseline's `mathindex` is the one
imported): `PYTHONPATH=build/wt-base:. .venv/bin/python -P -m bench.serve_memory RELEASE`. It wraps
the parts by name, and a part a build lacks is left out of its report.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bench.common.serving import suite_queries

PAGE = os.sysconf("SC_PAGE_SIZE")
# (label, module, class or None, attribute): what ServedRelease and SearchEngine call while opening, in order
PARTS = (
    ("identifier resolver", "mathindex.search.engine", None, "IdentifierResolver"),
    ("prior", "mathindex.search.engine", None, "read_prior"),
    ("parent sets", "mathindex.search.engine", None, "parent_sets"),
    ("lexical", "mathindex.search.lexical", "LexicalChannel", "open"),
    ("vector channel", "mathindex.embed.channel", "VectorChannel", "open"),
    ("formula", "mathindex.formula.channel", "FormulaChannel", "open"),
    ("informal", "mathindex.search.informal", "InformalReranker", "open"),
    ("formal", "mathindex.formal.channel", "FormalChannel", "open"),
    ("query encoder", "mathindex.serve.release", None, "_thread_safe_encoding"),
    ("premises", "mathindex.serve.release", "ServedRelease", "_open_premises"),
    ("duckdb", "mathindex.serve.release", None, "_open_duckdb"),
    ("warm-up", "mathindex.serve.release", "ServedRelease", "_warm"),
)


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


class Meter:
    """RSS growth per wrapped part; a nested part's growth is taken out of its parent's."""

    def __init__(self):
        self.grown: dict[str, float] = {}
        self.stack: list[list[float]] = []

    def wrap(self, label: str, fn):
        def measured(*args, **kwargs):
            frame = [rss_mb(), 0.0]
            self.stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                self.stack.pop()
                total = rss_mb() - frame[0]
                self.grown[label] = self.grown.get(label, 0.0) + total - frame[1]
                if self.stack:
                    self.stack[-1][1] += total
        return measured


def instrument(meter: Meter) -> list[str]:
    """Wraps every part of PARTS this build has; returns the labels of those it lacks."""
    import importlib

    missing = []
    for label, module, cls, attr in PARTS:
        owner = importlib.import_module(module)
        owner = getattr(owner, cls) if cls else owner
        if not hasattr(owner, attr):
            missing.append(label)
            continue
        setattr(owner, attr, meter.wrap(label, getattr(owner, attr)))
    return missing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--queries", type=Path, help="a suite: answer the load test's distinct queries after opening")
    ap.add_argument("--json", type=Path, help="also write the report here")
    args = ap.parse_args()

    start = rss_mb()
    from mathindex.serve.app import configure_runtime
    from mathindex.serve.release import ServedRelease

    configure_runtime()
    meter = Meter()
    missing = instrument(meter)
    imported = rss_mb()
    t0 = time.perf_counter()
    served = ServedRelease(args.release, verify=False, cache_size=0)
    opened = rss_mb()
    report = {"release": served.release_id, "code": str(Path(sys.modules["mathindex"].__file__).parent.parent),
              "rss_mb": {"interpreter": round(start, 1), "imports": round(imported - start, 1),
                         **{label: round(meter.grown[label], 1) for label, *_ in PARTS if label in meter.grown},
                         "rest of opening": round(opened - imported - sum(meter.grown.values()), 1)},
              "rss_after_open_mb": round(opened, 1), "open_s": round(time.perf_counter() - t0, 1), "not_in_this_build": missing}
    if args.queries:
        queries = list(dict.fromkeys(text for _, text in suite_queries(args.queries)))
        for q in queries:
            served.search(q, 10)
        report["queries"] = len(queries)
        report["rss_after_queries_mb"] = round(rss_mb(), 1)
    served.close()
    for key, value in report.items():
        if key == "rss_mb":
            for part, mb in value.items():
                print(f"  {part:22s} {mb:8.1f} MB")
        else:
            print(f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
