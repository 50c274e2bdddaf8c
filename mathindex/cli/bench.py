"""`mathindex bench RELEASE --suite FILE`: one query set's metrics against a release."""

from __future__ import annotations

import argparse
import json

from mathindex.cli.exits import EXIT_OK
from mathindex.cli.release_arg import resolved_release
from mathindex.evaluation.bench import run_suite
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine


def run(args: argparse.Namespace) -> int:
    release = resolved_release(args)
    suite = load_suite(args.suite)
    engine = SearchEngine(release)
    summary, _ = run_suite(engine.names, suite, engine.same_as.key)  # a folded hit counts by fact
    if args.json:
        print(json.dumps({"suite": suite.name, **summary}, indent=2, sort_keys=True))
        return EXIT_OK
    print(f"suite {suite.name}: {summary['queries']} queries (points)")
    print("  " + "  ".join(f"{m} {v:.2f}" for m, v in summary["metrics"].items()))
    for style, m in summary["by_style"].items():
        print(f"  {style:<16} n={m['queries']:<4} " + "  ".join(f"{k} {v:.2f}" for k, v in m.items() if k != "queries"))
    if "fair" in summary:
        print("  fair subset      " + "  ".join(f"{k} {v}" for k, v in summary["fair"].items()))
    return EXIT_OK
