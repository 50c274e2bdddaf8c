"""Server CPU a request of the HTTP and serving layers alone: one query answered from the answer
cache, over and over, by closed-loop keep-alive clients (the engine runs once).

    .venv/bin/python -m bench.experiments.serve_http ROOT [--requests 4000] [--clients 20] [--threads N]

Starts `mathindex serve ROOT` (answer cache on) as bench/serve_load.py does, asks `--query` once to
fill the cache, then sends it `--requests` times from `--clients` clients, and prints the server's
CPU (/proc: user + system, all its threads) per request, the throughput and the latencies. Which
HTTP parser and event loop the server runs on (`serve.app.http_stack`: httptools / h11, uvloop /
asyncio) is printed: run it with and without them installed to pair the two."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench.common.serving import Client, cpu_seconds, loadavg, run_queries, start_server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--port", type=int, default=8766)
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--threads", type=int, help="server query threads")
    ap.add_argument("--query", default="continuous function on a compact space is bounded")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)

    proc = start_server(args.root, args.port, 16, args.threads, wait_s=600)
    try:
        Client("127.0.0.1", args.port, 60).get("/search?q=warm%20up&k=10")
        items = [("words", args.query)] * args.requests
        run_queries("127.0.0.1", args.port, items[:50], 1, 10, time.monotonic() + 120, 60)  # cached from here on
        load = loadavg()
        cpu0 = cpu_seconds(proc.pid)
        got = run_queries("127.0.0.1", args.port, items, args.clients, 10, time.monotonic() + 600, 60)
        cpu_ms = (cpu_seconds(proc.pid) - cpu0) * 1000 / max(1, got["answered"])
    finally:
        proc.terminate()
        proc.wait(30)
    from mathindex.serve.app import http_stack  # what the server (same interpreter and path) runs on

    report = {"stack": " + ".join(http_stack().values()), "load_before": load, "server_cpu_ms_per_request": round(cpu_ms, 3), **got}
    print(f"{report['stack']}: {got['answered']} cached answers from {args.clients} clients, server CPU "
          f"{report['server_cpu_ms_per_request']} ms a request, {got['throughput_qps']} q/s, p50 {got['p50_ms']} ms, "
          f"p95 {got['p95_ms']} ms, errors {got['errors']} (load {load})")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if got["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
