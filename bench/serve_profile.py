"""CPU per query of the serving path, split by component, and the answers' top-k hits (to check that
a change keeps search results identical).

    .venv/bin/python -m bench.serve_profile RELEASE --suite bench/suites/mathlibqr-dev.json \
        [--names-out AFTER.json] [--compare BEFORE.json] [--engine] [--no-informal]

Opens RELEASE as `mathindex serve` does (`ServedRelease`, answer cache off) and answers every distinct
query of the load test's mix (bench/serve_load.py: the suite's query styles and target names) in one
thread, `--rounds` times. Each component's thread CPU time (CLOCK_THREAD_CPUTIME_ID: what the query
costs a core, whatever else runs on the machine) is taken by wrapping the engine's parts in place:
the identifier resolver, the lexical channel, query encoding, the vector index (the embedding channel
less encoding), the formula and formal channels, fusion with the prior (`SearchEngine.rank`), the
serving layer (locations and the response model) and the JSON serialisation. Medians over rounds of
the per-query mean; the means by kind of query and the slowest queries (each with its largest part)
are those of the last round, when the caches are as a warm server's. `--engine` answers with a plain `SearchEngine` instead (what `mathindex search`
and `bench` use), for the hits only: `--compare` two `--names-out` files (names, scores and channel
ranks of every hit) to check that two runs, two builds of the code or the server and the engine give
the same answers. The other build's run: `PYTHONPATH=OTHER_CHECKOUT:. .venv/bin/python -P -m
bench.serve_profile ...` (`-P`: the working directory's `mathindex` does not come first).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench.common.serving import suite_queries

PARTS = ("resolver", "lexical", "encode", "vector index", "formula", "formal", "fusion + prior", "serving layer",
         "json")


class Clock:
    """Thread CPU ns per component for the current query; nested parts are subtracted from their parent."""

    def __init__(self):
        self.spent: dict[str, int] = defaultdict(int)
        self.stack: list[list] = []

    def wrap(self, part: str, fn):
        def timed(*args, **kwargs):
            frame = [time.thread_time_ns(), 0]
            self.stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                self.stack.pop()
                total = time.thread_time_ns() - frame[0]
                self.spent[part] += total - frame[1]
                if self.stack:
                    self.stack[-1][1] += total
        return timed


def instrument(served, clock: Clock) -> None:
    """Wraps the engine's parts of `served` (a ServedRelease) in `clock`, in place."""
    engine = served.engine
    engine.resolver.resolve = clock.wrap("resolver", engine.resolver.resolve)
    engine.rank = clock.wrap("fusion + prior", engine.rank)
    if engine.lexical is not None:
        engine.lexical.search = clock.wrap("lexical", engine.lexical.search)
    if engine.vector is not None:
        engine.vector.embedder.encode = clock.wrap("encode", engine.vector.embedder.encode)
        engine.vector.search = clock.wrap("vector index", engine.vector.search)  # encode is nested, subtracted
    if engine.formula is not None:
        engine.formula.search = clock.wrap("formula", engine.formula.search)
    if engine.formal is not None:
        engine.formal.search = clock.wrap("formal", engine.formal.search)


def profile(release: Path, queries: list[str], k: int, rounds: int) -> tuple[dict, dict[str, list[str]]]:
    from mathindex.search.kinds import query_kind
    from mathindex.serve.app import configure_runtime
    from mathindex.serve.release import ServedRelease

    configure_runtime()
    t0 = time.perf_counter()
    served = ServedRelease(release, verify=False, cache_size=0)
    opened_s = time.perf_counter() - t0
    if served.engine.formula is not None:  # SymPy's worker up first: else the first queries lack canonical matches
        served.engine.formula.index.wait_ready()
    clock = Clock()
    instrument(served, clock)
    search = clock.wrap("serving layer", served.search)
    per_round: list[dict[str, float]] = []
    names: dict[str, list] = {}  # query -> [name, score, channels] of each hit
    per_query: dict[str, dict[str, float]] = {}  # query -> its parts' ms in the last round
    for r in range(rounds):
        totals: dict[str, int] = defaultdict(int)
        for q in queries:
            clock.spent.clear()
            answer = search(q, k)
            clock.wrap("json", answer.model_dump_json)()
            for part, ns in clock.spent.items():
                totals[part] += ns
            if r == rounds - 1:  # the last round: the caches (informal renderings, trees) as a warm server has them
                per_query[q] = {"kind": query_kind(q), "total": sum(clock.spent.values()) / 1e6,
                                **{p: ns / 1e6 for p, ns in clock.spent.items()}}
            if r == 0:
                names[q] = [[h.name, h.score, h.channels] for h in answer.hits]
        per_round.append({p: totals.get(p, 0) / 1e6 / len(queries) for p in PARTS})
    parts = {p: round(statistics.median(x[p] for x in per_round), 3) for p in PARTS}
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for v in per_query.values():
        by_kind[v["kind"]].append(v)
    kinds = {kind: {"queries": len(rows), **{p: round(statistics.fmean(ms), 3) for p in (*PARTS, "total")
                                             if (ms := [x[p] for x in rows if p in x])}}  # over the queries it ran for
             for kind, rows in sorted(by_kind.items())}
    return {"release": served.release_id, "opened_s": round(opened_s, 1), "queries": len(queries), "rounds": rounds,
            "ms_per_query": parts, "total_ms_per_query": round(sum(parts.values()), 3), "by_kind_last_round": kinds,
            "slowest_last_round": [(q, {p: x if p == "kind" else round(x, 3) for p, x in v.items()})
                                   for q, v in sorted(per_query.items(), key=lambda x: -x[1]["total"])[:40]]}, names


def engine_names(release: Path, queries: list[str], k: int) -> dict[str, list]:
    from mathindex.search.engine import SearchEngine

    engine = SearchEngine(release, verify="none")
    return {q: [[h.name, h.score, h.channels] for h in engine.search(q, k).hits] for q in queries}


def compare(before: dict[str, list], after: dict[str, list]) -> dict:
    """Queries whose hits (names, scores and channel ranks) differ between two runs."""
    common = sorted(set(before) & set(after))
    differ = [q for q in common if before[q] != after[q]]
    return {"compared": len(common), "differ": len(differ),
            "names_differ": sum(1 for q in differ if [h[0] for h in before[q]] != [h[0] for h in after[q]]),
            "samples": [{"query": q, "before": before[q], "after": after[q]} for q in differ[:5]]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--suite", type=Path, required=True)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, help="the first N distinct queries only")
    ap.add_argument("--engine", action="store_true", help="names from a plain SearchEngine (no profile)")
    ap.add_argument("--names-out", type=Path, help="write {query: top-k names} here")
    ap.add_argument("--compare", type=Path, help="a --names-out file of another run: count the queries whose hits differ")
    ap.add_argument("--json", type=Path, help="also write the report here")
    ap.add_argument("--no-informal", action="store_true",
                    help="the informal channel off (weights.INFORMAL_DEPTH = 0): its query-time encoding is not measured")
    args = ap.parse_args(argv)
    if args.no_informal:
        import mathindex.search.weights as settings

        settings.INFORMAL_DEPTH = 0

    queries = list(dict.fromkeys(q for _, q in suite_queries(args.suite)))[: args.limit]
    if args.engine:
        report, names = {"engine": True, "queries": len(queries)}, engine_names(args.release, queries, args.k)
    else:
        report, names = profile(args.release, queries, args.k, args.rounds)
        print(f"release {report['release']} opened in {report['opened_s']} s; {report['queries']} distinct queries, "
              f"{report['rounds']} rounds (median of per-query means), thread CPU ms a query:")
        for part, ms in report["ms_per_query"].items():
            print(f"  {part:<15} {ms:7.3f}")
        print(f"  {'total':<15} {report['total_ms_per_query']:7.3f}")
        for kind, v in report["by_kind_last_round"].items():
            print(f"  {kind}: {v['queries']} queries, " + ", ".join(f"{p} {v[p]:.2f}" for p in (*PARTS, "total") if p in v))
        print("slowest queries of the last round (total ms, kind, its largest part):")
        for q, v in report["slowest_last_round"][:10]:
            part = max((p for p in PARTS if p in v), key=v.get)
            print(f"  {v['total']:8.2f} {v['kind']:<8} {part} {v[part]:.2f}  {q[:70]!r}")
    if args.names_out:
        args.names_out.write_text(json.dumps(names, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    if args.compare:
        report["compare"] = compare(json.loads(args.compare.read_text(encoding="utf-8")), names)
        c = report["compare"]
        print(f"top-{args.k} hits (names, scores, channel ranks): {c['differ']} of {c['compared']} queries differ "
              f"from {args.compare} ({c['names_differ']} in their names)")
        for x in c["samples"]:
            print(f"  {x['query'][:80]!r}: {x['before'][:2]} -> {x['after'][:2]}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
