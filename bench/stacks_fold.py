"""Duplicate folding (search/sameas.py) on a release with Mathlib and the Stacks Project: how often a
Stacks-worded query returns the folded entry, and what folding does to a suite.

    python -m bench.stacks_fold RELEASE [--suite SUITE.json] [--limit N] [--chars 300]

The query set is made here from the release itself, never committed: for each `same_as` pair (a
declaration's `@[stacks TAG]` and the statement of that tag), the query is the Stacks statement as
plain reading text (`latex.plain.plain_statement` of its title and macro-expanded body, cut at
`--chars` characters at a word boundary). Such a query finds the statement itself almost always;
what it measures is whether the declaration answers too, so that the two fold into one entry. A
pair counts when one of the top 10 hits holds both (its name or `also`). The same queries run with
folding off say how often the two were both in the top 10 as separate hits. With --suite, the suite
runs with folding on and off, both scored by fact (`evaluation.metrics.same_fact`).
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import pyarrow.parquet as pq

from bench.common.machine import cpu_model
from mathindex.evaluation.bench import run_suite
from mathindex.evaluation.suites import load_suite
from mathindex.latex.plain import plain_statement
from mathindex.search.engine import SearchEngine
from mathindex.search.sameas import SameAsGroups
from mathindex.store.layout import ReleaseLayout
from mathindex.store.releases import resolve_release

K = 10


def stacks_queries(release: Path, chars: int) -> list[tuple[str, str, str]]:
    """(declaration, tag, query) per same_as pair, the query the tag's statement as plain text."""
    layout = ReleaseLayout(release)
    edges = pq.read_table(layout.table("same_as"), columns=["name", "target", "target_node_id"]).to_pylist()
    wanted = {e["target_node_id"] for e in edges}
    statements = pq.read_table(layout.table("latex_statements"), columns=["node_id", "title", "body", "body_normalised"])
    text = {s["node_id"]: plain_statement(". ".join(p for p in (s["title"], s["body_normalised"] or s["body"]) if p), chars)
            for s in statements.to_pylist() if s["node_id"] in wanted}
    return [(e["name"], e["target"], text[e["target_node_id"]]) for e in edges if text.get(e["target_node_id"])]


def top_entries(engine: SearchEngine, query: str) -> list[set[str]]:
    """The top K hits of `query`, each as the set of its names (the hit's and those folded into it)."""
    return [{h.name, *(m.name for m in h.also)} for h in engine.search(query, K).hits]


def fold_shares(engine: SearchEngine, pairs: list[tuple[str, str, str]]) -> dict[str, float]:
    """Shares (percent of pairs) with folding on and off: the folded entry in the top K, either
    member in the top K, and (folding off) both members as separate hits in the top K."""
    groups, counts = engine.same_as, {"folded": 0, "either_on": 0, "either_off": 0, "both_apart_off": 0}
    answers: dict[tuple[bool, str], list[set[str]]] = {}
    for folding in (True, False):
        engine.same_as = groups if folding else SameAsGroups()
        for decl, tag, query in pairs:
            if (folding, query) not in answers:  # a tag cited by several declarations is one query
                answers[folding, query] = top_entries(engine, query)
            top = answers[folding, query]
            either = any(decl in e or tag in e for e in top)
            if folding:
                counts["folded"] += any({decl, tag} <= e for e in top)
                counts["either_on"] += either
            else:
                counts["either_off"] += either
                counts["both_apart_off"] += any(decl in e for e in top) and any(tag in e for e in top)
    engine.same_as = groups
    return {key: round(100.0 * n / len(pairs), 2) if pairs else 0.0 for key, n in counts.items()}


def suite_delta(engine: SearchEngine, suite_path: Path) -> dict[str, dict[str, float]]:
    """The suite's headline metrics with folding on and off, both scored by fact."""
    suite, groups, out = load_suite(suite_path), engine.same_as, {}
    for label, using in (("on", groups), ("off", SameAsGroups())):
        engine.same_as = using
        out[label] = run_suite(engine.names, suite, groups.key)[0]["metrics"]
    engine.same_as = groups
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", type=Path, help="a release (or a root: its published release) with a same_as table")
    parser.add_argument("--suite", type=Path, help="a suite to run with folding on and off (MathlibQR dev)")
    parser.add_argument("--limit", type=int, help="only the first N pairs (by declaration name)")
    parser.add_argument("--chars", type=int, default=300, help="the query's length cap, characters")
    args = parser.parse_args()
    release = resolve_release(args.release)
    started, cpu0 = time.monotonic(), time.process_time()
    engine = SearchEngine(release)
    pairs = stacks_queries(release, args.chars)[: args.limit]
    print(f"release {release.name}: {len(engine.same_as.group_of)} nodes in same_as groups; "
          f"{len(pairs)} (declaration, Stacks tag) pairs, {len({q for *_, q in pairs})} distinct queries "
          f"(the tag's statement as plain text, at most {args.chars} characters)")
    shares = fold_shares(engine, pairs)
    print(f"folded entry (declaration and tag in one hit) in the top {K}: {shares['folded']} % of pairs")
    print(f"either member in the top {K}: folding on {shares['either_on']} %, off {shares['either_off']} %")
    print(f"both members in the top {K} as separate hits, folding off: {shares['both_apart_off']} %")
    if args.suite:
        delta = suite_delta(engine, args.suite)
        for metric, on in delta["on"].items():
            off = delta["off"][metric]
            print(f"suite {args.suite.name} {metric}: folding on {on}, off {off}, difference {round(on - off, 2)}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    print(f"took {time.monotonic() - started:.1f} s wall, {time.process_time() - cpu0:.1f} s CPU, peak RSS {peak:.2f} GB "
          f"on {cpu_model()}")


if __name__ == "__main__":
    main()
