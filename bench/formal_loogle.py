"""The formal channel in Loogle mode on its query set (bench/suites/loogle-mathlib.json): precision
and recall of the gold sets, per query form, and query latency with the release loaded.

Hit@10 is the share of queries with a gold name in the top 10 (the target: 90 % overall, 80 % for
every form); P@10 is |top 10 ∩ gold| / 10 (gold sets hold 1-3 names, so it is at most 0.1-0.3 per
query); R-prec is |top |gold| ∩ gold| / |gold|; R@10 is the share of gold in the top 10; R@all the
share of gold among all matches (Loogle's answer is a filter: a gold name missing there is a miss).

    .venv/bin/python -m bench.formal_loogle RELEASE_DIR [SUITE.json] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from pathlib import Path

from mathindex.formal.query import FormalQueryError, UnknownConstant
from mathindex.formal.search import FormalIndex

SUITE = Path(__file__).resolve().parent / "suites" / "loogle-mathlib.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path, nargs="?", default=SUITE)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    index = FormalIndex(args.release)
    print(f"formal index opened in {time.perf_counter() - t0:.1f} s")
    suite = json.loads(args.suite.read_text(encoding="utf-8"))
    rows, times, cpu = [], [], []
    for q in suite["queries"]:
        gold = set(q["gold"])
        t1, c1 = time.perf_counter(), time.thread_time()
        try:
            res = index.loogle(q["query"], 10)
            times.append(time.perf_counter() - t1)
            cpu.append(time.thread_time() - c1)
            every = {h.name for h in index.loogle(q["query"], 100_000).hits}
            error = None
        except (FormalQueryError, UnknownConstant) as exc:
            times.append(time.perf_counter() - t1)
            cpu.append(time.thread_time() - c1)
            res, every, error = None, set(), str(exc)
        top = [h.name for h in res.hits] if res else []
        r = {"id": q["id"], "form": q.get("form", q.get("style")), "query": q["query"], "count": res.count if res else 0,
             "hit@10": float(bool(set(top) & gold)),
             "p@10": len(set(top) & gold) / 10, "r-prec": len(set(top[:len(gold)]) & gold) / len(gold),
             "r@10": len(set(top) & gold) / len(gold), "r@all": len(every & gold) / len(gold), "error": error}
        rows.append(r)
        if args.verbose:
            print(f"{q['id']} [{r['form']}] {q['query']!r}: {r['count']} matches; R@10 {r['r@10']:.2f} R@all {r['r@all']:.2f} "
                  f"top {top[:3]}{' ERROR ' + error if error else ''}")
    groups = defaultdict(list)
    for r in rows:
        groups["all"].append(r)
        groups[r["form"]].append(r)
    print(f"{'form':<13} {'n':>3} {'Hit@10':>6} {'P@10':>6} {'R-prec':>6} {'R@10':>6} {'R@all':>6}")
    summary = {}
    for g, rs in groups.items():
        m = {k: 100 * sum(r[k] for r in rs) / len(rs) for k in ("hit@10", "p@10", "r-prec", "r@10", "r@all")}
        summary[g] = {"n": len(rs), **m}
        print(f"{g:<13} {len(rs):>3} {m['hit@10']:6.1f} {m['p@10']:6.1f} {m['r-prec']:6.1f} {m['r@10']:6.1f} {m['r@all']:6.1f}")
    times.sort()
    cpu.sort()
    p50, p95 = times[len(times) // 2], times[min(len(times) - 1, int(0.95 * len(times)))]
    c50, c95 = cpu[len(cpu) // 2], cpu[min(len(cpu) - 1, int(0.95 * len(cpu)))]
    print(f"latency per query: p50 {1000 * p50:.0f} ms, p95 {1000 * p95:.0f} ms, max {1000 * times[-1]:.0f} ms; "
          f"errors {sum(1 for r in rows if r['error'])}")
    print(f"CPU per query (thread time; what a query costs on a machine that is not shared): p50 {1000 * c50:.0f} ms, "
          f"p95 {1000 * c95:.0f} ms, max {1000 * cpu[-1]:.0f} ms; load average {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "p50_ms": 1000 * p50, "p95_ms": 1000 * p95,
                                         "cpu_p50_ms": 1000 * c50, "cpu_p95_ms": 1000 * c95, "queries": rows},
                                        ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
