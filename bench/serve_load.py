"""Load test of `mathindex serve` on 127.0.0.1: latency under concurrent clients, errors, and the
serving process's memory. Bounded in count and time; it stops by itself.

    .venv/bin/python bench/serve_load.py build/mathlib --suite ../shared/bench/mathlibqr-dev.json

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
import http.client
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

STYLES = ("q1a_lean", "q1b_latex", "q1c_natural", "q2_slogan", "q3_nickname", "full_name")


def suite_queries(path: Path) -> list[tuple[str, str]]:
    """(style, text) for every non-empty query style of every target, and its full name."""
    targets = json.loads(path.read_text(encoding="utf-8"))
    return [(style, t[style]) for t in targets for style in STYLES if t.get(style)]


def workload(queries: list[tuple[str, str]], n: int, seed: int) -> list[tuple[str, str]]:
    """n queries: the shuffled pool repeated as often as needed (each pass shuffled anew)."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    while len(out) < n:
        batch = list(queries)
        rng.shuffle(batch)
        out.extend(batch)
    return out[:n]


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))]


class Client:
    """One keep-alive HTTP connection."""

    def __init__(self, host: str, port: int, timeout_s: float):
        self.host, self.port, self.timeout_s = host, port, timeout_s
        self.conn = http.client.HTTPConnection(host, port, timeout=timeout_s)

    def get(self, path: str) -> tuple[int, bytes]:
        for attempt in (0, 1):
            try:
                self.conn.request("GET", path)
                r = self.conn.getresponse()
                return r.status, r.read()
            except (ConnectionError, http.client.HTTPException):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
                if attempt:
                    raise
        raise AssertionError("unreachable")


def run_queries(host: str, port: int, items: list[tuple[str, str]], clients: int, k: int,
                deadline: float, timeout_s: float, at: tuple[int, object] | None = None) -> dict:
    """Sends every item (or until the deadline) from `clients` threads; latencies in ms. `at`:
    (n, fn) calls fn() once, from the client that sends the n-th item."""
    lock = threading.Lock()
    cursor = [0]
    latencies: list[float] = []
    errors: list[str] = []
    releases: dict[str, int] = {}

    def worker():
        c = Client(host, port, timeout_s)
        while time.monotonic() < deadline:
            with lock:
                i = cursor[0]
                cursor[0] += 1
            if i >= len(items):
                return
            if at is not None and i == at[0]:
                at[1]()
            path = f"/search?q={quote(items[i][1], safe='')}&k={k}"
            t0 = time.perf_counter()
            try:
                status, body = c.get(path)
            except Exception as exc:  # noqa: BLE001 - counted as an error
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}")
                continue
            ms = (time.perf_counter() - t0) * 1000
            with lock:
                latencies.append(ms)
                if status != 200:
                    errors.append(f"HTTP {status}: {body[:200]!r}")
                else:
                    rid = json.loads(body)["release_id"]
                    releases[rid] = releases.get(rid, 0) + 1

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    return {
        "clients": clients, "sent": min(cursor[0], len(items)), "answered": len(latencies),
        "errors": len(errors), "error_samples": errors[:5], "seconds": round(wall, 2),
        "throughput_qps": round(len(latencies) / wall, 1) if wall else None,
        "p50_ms": round(percentile(latencies, 50), 1), "p95_ms": round(percentile(latencies, 95), 1),
        "p99_ms": round(percentile(latencies, 99), 1), "max_ms": round(max(latencies, default=float("nan")), 1),
        "mean_ms": round(statistics.fmean(latencies), 1) if latencies else None, "releases": releases,
    }


def query_packs(host: str, port: int) -> dict | None:
    """The server's query-encoder counters (/health `query_packs`), None when it has none."""
    status, body = Client(host, port, 30).get("/health")
    return json.loads(body).get("query_packs") if status == 200 else None


def rss_mb(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a process in MB, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_ticks() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine so far (/proc/stat: idle and iowait are not busy)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(fields) - fields[3] - fields[4], sum(fields)


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# `mathindex serve` with the informal channel off (weights.INFORMAL_DEPTH = 0): --no-informal
NO_INFORMAL = ("import sys, mathindex.search.weights as w; w.INFORMAL_DEPTH = 0; "
               "from mathindex.cli import main; sys.exit(main(sys.argv[1:]))")


def start_server(root: Path, port: int, cache: int, threads: int | None, wait_s: float,
                 informal: bool = True) -> subprocess.Popen:
    cmd = [sys.executable, *(("-m", "mathindex") if informal else ("-c", NO_INFORMAL)),
           "serve", str(Path(root).resolve()), "--port", str(port), "--cache", str(cache)]
    if threads:
        cmd += ["--threads", str(threads)]
    # run from the checkout whose `mathindex` this script finds (PYTHONPATH first): `-m` and `-c`
    # put the working directory first on the server's path, so that a baseline checkout on
    # PYTHONPATH would otherwise be served with the code of the directory the script runs in
    spec = importlib.util.find_spec("mathindex")
    code = Path(spec.origin).parent.parent if spec is not None and spec.origin else None
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=sys.stderr, cwd=code)
    proc.args_code = code  # what the report says was served
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            status, _ = Client("127.0.0.1", port, 5).get("/health")
            if status == 200:
                return proc
        except OSError:
            pass
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"server not up after {wait_s:.0f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path, nargs="?", help="release root to serve (omit with --url)")
    ap.add_argument("--suite", type=Path, default=Path("../shared/bench/mathlibqr-dev.json"))
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
