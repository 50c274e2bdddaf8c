"""The load test's pieces (bench/serve_load.py), shared by the serving benchmarks: the query mix
of a MathlibQR-format suite, a keep-alive HTTP client and closed-loop load, /proc readings, and a
`mathindex serve` started on a root."""

from __future__ import annotations

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
from urllib.parse import quote

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
