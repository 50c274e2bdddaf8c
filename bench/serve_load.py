"""Load test of `mathindex serve` on 127.0.0.1: latency under concurrent clients, errors, and the
serving process's memory. Bounded in count and time; it stops by itself.

    .venv/bin/python -m bench.serve_load build/mathlib --suite bench/suites/mathlibqr-dev.json

Starts the server on ROOT (or uses --url), then runs `--single` queries from one client, then
`--queries` queries from `--clients` concurrent clients (closed loop, keep-alive connections), drawn
from the suite's query styles and target names (identifiers), shuffled with a fixed seed. Prints
p50/p95/max latency, errors, throughput, the server's RSS after the load (and its peak), the CPU
a query costs the server and this load generator, and how busy the machine's cores were (a server
that leaves cores idle while clients wait is bound by something else: the GIL, a lock).
`--cache 0` (the default here) measures the engine on every query rather than the answer cache.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from bench.common.serving import (STYLES, Client, cpu_seconds, loadavg, machine_ticks, query_packs, rss_mb,
                                  run_queries, start_server, suite_queries, workload)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path, nargs="?", help="release root to serve (omit with --url)")
    ap.add_argument("--suite", type=Path, default=Path("bench/suites/mathlibqr-dev.json"))
    ap.add_argument("--url", help="an already running server (http://127.0.0.1:PORT); else one is started")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--single", type=int, default=300, help="queries from one client first")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--cache", type=int, default=0, help="server answer cache (0: every query runs the engine)")
    ap.add_argument("--threads", type=int, help="server query threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=600, help="bound on each phase")
    ap.add_argument("--json", type=Path, help="also write the report here")
    ap.add_argument("--swap-to", metavar="RELEASE_ID", help="publish this release of ROOT (rewrites ROOT/published.json: "
                    "use a root of your own) once a quarter of the concurrent queries are sent: a hot swap under load")
    ap.add_argument("--no-informal", action="store_true",
                    help="the server runs without the informal channel (weights.INFORMAL_DEPTH = 0)")
    args = ap.parse_args(argv)

    pool = suite_queries(args.suite)
    proc = None
    if args.swap_to and (args.url or args.root is None):
        raise SystemExit("--swap-to needs ROOT (and no --url)")
    if args.url:
        parts = urlsplit(args.url)
        if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise SystemExit("--url must be on the loopback interface")
        host, port = parts.hostname, parts.port or 80
    else:
        if args.root is None:
            raise SystemExit("give ROOT or --url")
        host, port = "127.0.0.1", args.port
        t0 = time.monotonic()
        proc = start_server(args.root, port, args.cache, args.threads, wait_s=600, informal=not args.no_informal)
        print(f"server up in {time.monotonic() - t0:.1f} s (pid {proc.pid}, code {proc.args_code})", file=sys.stderr)
    report: dict = {"cores": os.cpu_count(), "pool": len(pool), "distinct": len({q for _, q in pool}),
                    "styles": {s: sum(1 for st, _ in pool if st == s) for s in STYLES}, "cache": args.cache}
    try:
        if proc is not None:
            report["rss_idle_mb"] = round(rss_mb(proc.pid)[0])
        Client(host, port, 30).get("/search?q=warm%20up&k=10")
        single = workload(pool, args.single, args.seed + 1)
        report["load_before"] = loadavg()
        report["single"] = run_queries(host, port, single, 1, args.k, time.monotonic() + args.max_seconds, 60)
        items = workload(pool, args.queries, args.seed)
        report["load_mid"] = loadavg()
        cpu0 = cpu_seconds(proc.pid) if proc is not None else None
        own0 = cpu_seconds(os.getpid())
        busy0, total0 = machine_ticks()
        swap = None
        if args.swap_to:
            from mathindex.store.releases import publish

            def swap_now():
                report["swap_published_at_query"] = len(items) // 4
                publish(args.root, args.swap_to)

            swap = (len(items) // 4, swap_now)
        packs0 = query_packs(host, port)
        report["concurrent"] = run_queries(host, port, items, args.clients, args.k,
                                           time.monotonic() + args.max_seconds, 60, at=swap)
        busy1, total1 = machine_ticks()
        packs1 = query_packs(host, port)
        if packs0 and packs1 and packs1["packs"] > packs0["packs"]:
            report["texts_per_pack"] = round((packs1["texts"] - packs0["texts"]) / (packs1["packs"] - packs0["packs"]), 2)
        report["machine_busy_share"] = round((busy1 - busy0) / max(1, total1 - total0), 3)
        report["client_cpu_ms_per_query"] = round((cpu_seconds(os.getpid()) - own0) * 1000
                                                  / max(1, report["concurrent"]["answered"]), 1)
        if proc is not None:  # what the load costs the server, whatever else runs on the machine
            report["server_cpu_ms_per_query"] = round((cpu_seconds(proc.pid) - cpu0) * 1000
                                                      / max(1, report["concurrent"]["answered"]), 1)
        report["load_after"] = loadavg()
        if proc is not None:
            now, peak = rss_mb(proc.pid)
            report["rss_after_mb"], report["rss_peak_mb"] = round(now), round(peak)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    s, c = report["single"], report["concurrent"]
    print(f"queries: pool {report['pool']} ({report['distinct']} distinct), answer cache {args.cache}, "
          f"informal channel {'off' if args.no_informal else 'on'}")
    print(f"single client:  {s['answered']} queries  p50 {s['p50_ms']} ms  p95 {s['p95_ms']} ms  max {s['max_ms']} ms  "
          f"errors {s['errors']}  (load {report['load_before']})")
    print(f"{c['clients']} clients:     {c['answered']} queries  p50 {c['p50_ms']} ms  p95 {c['p95_ms']} ms  "
          f"p99 {c['p99_ms']} ms  max {c['max_ms']} ms  errors {c['errors']}  {c['throughput_qps']} q/s  "
          f"(load {report['load_mid']} -> {report['load_after']})")
    if "server_cpu_ms_per_query" in report:
        cpu = report["server_cpu_ms_per_query"]
        print(f"server CPU: {cpu} ms a query under load; {report['cores']} idle cores would answer at most "
              f"{report['cores'] * 1000 / cpu:.0f} q/s")
    print(f"load generator CPU: {report['client_cpu_ms_per_query']} ms a query (the same cores as the server's); "
          f"the machine's cores were busy {100 * report['machine_busy_share']:.1f} % of the concurrent phase")
    if "texts_per_pack" in report:
        print(f"query encoder: {report['texts_per_pack']} texts (queries, and renderings the informal store lacked) a pack on average under load")
    if "rss_after_mb" in report:
        print(f"server RSS: idle {report['rss_idle_mb']} MB, after load {report['rss_after_mb']} MB, peak {report['rss_peak_mb']} MB")
    if args.swap_to:
        print(f"swap to {args.swap_to} published at query {report.get('swap_published_at_query')}: answers by release {c['releases']}")
    if c["error_samples"]:
        print("errors: " + " | ".join(c["error_samples"]))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if c["errors"] == 0 and s["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
