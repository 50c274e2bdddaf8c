"""`mathindex serve` under stress on 127.0.0.1, bounded in count and time; three checks:

    python -m bench.serve_stress soak ROOT --minutes 20 --swaps 3
    python -m bench.serve_stress slow ROOT --slow 200 --normal 10
    python -m bench.serve_stress storm ROOT --rounds 20 --clients 50

- soak: mixed suite queries from 20 clients for N minutes, with hot swaps spread over the run
  (ROOT must hold at least two releases; publishing rewrites ROOT/published.json, so use a root of
  your own). Prints p95, errors and the server's RSS per minute, and the RSS drift after warm-up
  (the first minute) against the target of 10 %.
- slow: the p95 of `--normal` clients alone, then again while `--slow` clients each hold a
  connection open sending one byte of a request a second. Target: at most 20 % higher.
- storm: rounds of clients that disconnect mid-request (half in the request line, half after
  sending a whole request and before reading the answer). Compares the server's threads and open
  file descriptors before and after; the server must still answer.

Each prints the CPU model; exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

from bench.common.machine import cpu_model
from bench.common.serving import (Client, percentile, rss_mb, run_queries, start_server, suite_queries,
                                  workload)
from mathindex.store.layout import RootLayout
from mathindex.store.releases import publish, published_id

HOST = "127.0.0.1"


def threads_and_fds(pid: int) -> tuple[int, int]:
    return len(os.listdir(f"/proc/{pid}/task")), len(os.listdir(f"/proc/{pid}/fd"))


def soak(args, proc, pool) -> tuple[dict, bool]:
    """Closed-loop load for `minutes`, one window a minute; swaps published at evenly spaced minutes."""
    releases = sorted(p.name for p in RootLayout(args.root).releases.iterdir() if (p / "manifest.json").is_file())
    if args.swaps and len(releases) < 2:
        raise SystemExit(f"soak: {args.root} holds {len(releases)} release(s); hot swaps need two")
    swap_at = {round((i + 1) * args.minutes / (args.swaps + 1)) for i in range(args.swaps)}
    rng = random.Random(args.seed)
    minutes: list[dict] = []
    for minute in range(args.minutes):
        if minute in swap_at:
            current = published_id(args.root)
            publish(args.root, next(r for r in releases if r != current))
        items = workload(pool, 10**6, rng.randrange(1 << 30))
        window = run_queries(HOST, args.port, items, args.clients, 10, time.monotonic() + 60, 60)
        rss = rss_mb(proc.pid)[0]
        row = {"minute": minute + 1, "answered": window["answered"], "p95_ms": window["p95_ms"],
               "errors": window["errors"], "rss_mb": round(rss), "releases": window["releases"],
               "swap": minute in swap_at}
        minutes.append(row)
        print(f"minute {row['minute']:>2}: {row['answered']:>5} answers  p95 {row['p95_ms']:>7.1f} ms  "
              f"errors {row['errors']}  RSS {row['rss_mb']} MB{'  (swap published)' if row['swap'] else ''}",
              flush=True)
        for sample in window["error_samples"]:
            print(f"    error: {sample}")
    warm = minutes[0]["rss_mb"]
    drift = max(abs(m["rss_mb"] - warm) / warm for m in minutes[1:]) if len(minutes) > 1 else 0.0
    errors = sum(m["errors"] for m in minutes)
    ok = errors == 0 and drift <= 0.10
    print(f"soak: {errors} errors (target 0); RSS after warm-up {warm} MB, largest drift {100 * drift:.1f} % "
          f"(target <= 10 %): {'met' if ok else 'MISSED'}")
    return {"minutes": minutes, "errors": errors, "rss_warm_mb": warm, "rss_drift": round(drift, 4)}, ok


def _slow_client(port: int, stop: threading.Event, opened: list) -> None:
    """Holds a connection, sending a request one byte a second (never finishing it)."""
    request = b"GET /search?q=" + b"a" * 4000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    try:
        s = socket.create_connection((HOST, port), timeout=5)
    except OSError:
        return
    opened.append(1)
    i = 0
    try:
        while not stop.is_set() and i < len(request) - 4:
            s.sendall(request[i:i + 1])
            i += 1
            stop.wait(1.0)
    except OSError:
        pass
    finally:
        s.close()



def _with_slow_connections(args, items) -> tuple[dict, int]:
    """One phase of `normal` clients while `slow` connections trickle a byte a second."""
    stop, opened = threading.Event(), []
    trickle = [threading.Thread(target=_slow_client, args=(args.port, stop, opened), daemon=True)
               for _ in range(args.slow)]
    for t in trickle:
        t.start()
    time.sleep(3)  # every slow connection open and sending
    during = run_queries(HOST, args.port, items, args.normal, 10, time.monotonic() + args.max_seconds, 60)
    held = len(opened)
    stop.set()
    for t in trickle:
        t.join(5)
    return during, held


def slow(args, proc, pool) -> tuple[dict, bool]:
    """p95 of `normal` clients alone and beside `slow` trickling connections, in alternating pairs
    after a warm-up phase (a loaded machine drifts; pairs see the same drift); medians compared."""
    run_queries(HOST, args.port, workload(pool, args.queries // 2, args.seed + 99), args.normal, 10,
                time.monotonic() + args.max_seconds, 60)  # warm-up, not counted
    pairs = []
    for i in range(args.pairs):
        items = workload(pool, args.queries, args.seed + i)
        alone = run_queries(HOST, args.port, items, args.normal, 10, time.monotonic() + args.max_seconds, 60)
        during, held = _with_slow_connections(args, items)
        pairs.append({"alone": alone, "during": during, "slow_connections": held})
        print(f"pair {i + 1}: {args.normal} clients alone p95 {alone['p95_ms']} ms (p50 {alone['p50_ms']}, "
              f"errors {alone['errors']}); beside {held} slow connections p95 {during['p95_ms']} ms "
              f"(p50 {during['p50_ms']}, errors {during['errors']})", flush=True)
    alone_p95 = statistics.median(p["alone"]["p95_ms"] for p in pairs)
    during_p95 = statistics.median(p["during"]["p95_ms"] for p in pairs)
    errors = sum(p["alone"]["errors"] + p["during"]["errors"] for p in pairs)
    ratio = during_p95 / alone_p95
    ok = ratio <= 1.20 and errors == 0
    print(f"slow: median p95 {alone_p95} ms alone, {during_p95} ms beside the slow connections: ratio {ratio:.2f} "
          f"(target <= 1.20), {errors} errors: {'met' if ok else 'MISSED'}")
    return {"pairs": pairs, "p95_alone_ms": alone_p95, "p95_during_ms": during_p95, "p95_ratio": round(ratio, 3)}, ok


def _disconnect(port: int, path: str, whole: bool) -> None:
    try:
        s = socket.create_connection((HOST, port), timeout=5)
        request = f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        s.sendall(request if whole else request[: len(request) // 2])
        s.close()
    except OSError:
        pass


def storm(args, proc, pool) -> tuple[dict, bool]:
    """Rounds of clients that hang up mid-request; threads and fds before and after (settled)."""
    Client(HOST, args.port, 60).get("/search?q=warm%20up&k=10")
    time.sleep(2)
    before = threads_and_fds(proc.pid)
    rng = random.Random(args.seed)
    for _ in range(args.rounds):
        batch = [threading.Thread(target=_disconnect, args=(args.port, f"/search?q={quote(rng.choice(pool)[1], safe='')}&k=10",
                                                            i % 2 == 0)) for i in range(args.clients)]
        for t in batch:
            t.start()
        for t in batch:
            t.join(10)
    time.sleep(args.settle)  # queries the hung-up clients started finish; their threads return
    after = threads_and_fds(proc.pid)
    status, _ = Client(HOST, args.port, 60).get("/search?q=prime&k=10")
    ok = after[0] <= before[0] and after[1] <= before[1] and status == 200
    print(f"storm: {args.rounds * args.clients} clients hung up mid-request; threads {before[0]} -> {after[0]}, "
          f"open fds {before[1]} -> {after[1]}; a query afterwards: HTTP {status}: {'met' if ok else 'MISSED'}")
    return {"threads": [before[0], after[0]], "fds": [before[1], after[1]], "status_after": status}, ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("soak", "slow", "storm"))
    ap.add_argument("root", type=Path, help="release root to serve (soak publishes in it: use your own)")
    ap.add_argument("--suite", type=Path, default=Path("../shared/bench/mathlibqr-dev.json"))
    ap.add_argument("--port", type=int, default=8766)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--minutes", type=int, default=20, help="soak: minutes of load")
    ap.add_argument("--swaps", type=int, default=3, help="soak: hot swaps spread over the run")
    ap.add_argument("--clients", type=int, default=20, help="soak: concurrent clients; storm: clients a round")
    ap.add_argument("--slow", type=int, default=200, help="slow: connections trickling a byte a second")
    ap.add_argument("--normal", type=int, default=10, help="slow: normal clients")
    ap.add_argument("--queries", type=int, default=400, help="slow: queries of each phase")
    ap.add_argument("--pairs", type=int, default=3, help="slow: alternating (alone, beside slow connections) pairs")
    ap.add_argument("--max-seconds", type=float, default=120, help="slow: bound on each phase")
    ap.add_argument("--rounds", type=int, default=20, help="storm: rounds")
    ap.add_argument("--settle", type=float, default=10, help="storm: seconds to wait before counting again")
    ap.add_argument("--json", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    pool = suite_queries(args.suite)
    print(f"CPU: {cpu_model()}", flush=True)
    t0 = time.monotonic()
    proc = start_server(args.root, args.port, 0, None, wait_s=600)
    print(f"server up in {time.monotonic() - t0:.1f} s (pid {proc.pid}, code {proc.args_code})", flush=True)
    try:
        report, ok = {"soak": soak, "slow": slow, "storm": storm}[args.mode](args, proc, pool)
    finally:
        proc.terminate()
        proc.wait(30)
    report["cpu"] = cpu_model()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
