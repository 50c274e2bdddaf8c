"""A release built locally and on a two-worker Dask cluster on 127.0.0.1, side by side: wall and
CPU seconds, the peak RSS of the flow process and of each worker, the manifest's stage seconds and
per-stage peak RSS, and whether the two releases are byte-identical but for the files that record
the run (bench.release_diff).

Each mode gets a new root under WORK whose cache and models are hard links to SEED's, less the
cache entries named by --cold (their stages run again, sharded, on the runner under test). On one
machine both modes share its cores: the figure is what the cluster's plumbing costs and that it
gives the same bytes, not a speed-up.

    python -m bench.cluster_release --sources bench/sources/mathlib-alone.yaml --seed-root ROOT \\
        --work build/cluster-bench [--cold lean,formulas,formal] [--seed-releases] [--precision bf16] [--modes local,cluster]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench.common.cluster import cpu_s, dask_cluster, peak_rss_mb
from bench.common.machine import cpu_model
from bench.release_diff import RECORDS_THE_RUN, compare
from bench.scale import stage_figures
from mathindex.store.layout import ReleaseLayout, RootLayout
from mathindex.store.releases import published_release

MODES = ("local", "cluster")
POLL_S = 2.0


def seed_root(seed: Path, root: Path, cold: set[str], releases: bool = False) -> None:
    """`root`'s cache and models as hard links to `seed`'s, but the cache entries in `cold`; with
    `releases`, its releases and published pointer too (the embed stage may then reuse the published
    index, as a nightly does)."""
    src, dst = RootLayout(seed), RootLayout(root)
    dst.cache.mkdir(parents=True)
    for entry in sorted(src.cache.iterdir()):
        if entry.name not in cold:
            subprocess.run(["cp", "-al", str(entry), str(dst.cache / entry.name)], check=True)
    more = [src.models] + ([p for p in sorted(src.root.iterdir()) if p.name not in (src.CACHE, src.MODELS)] if releases else [])
    for entry in more:
        if entry.exists():
            subprocess.run(["cp", "-al", str(entry), str(root / entry.name)], check=True)


class Watch:
    """Polls processes' peak RSS and CPU while they live (the last reading before they end)."""

    def __init__(self, pids: dict[str, int]):
        self.pids, self.peak, self.cpu = pids, {k: 0.0 for k in pids}, {k: 0.0 for k in pids}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(POLL_S):
            self.read()

    def read(self) -> None:
        for name, pid in self.pids.items():
            rss, cpu = peak_rss_mb(pid), cpu_s(pid)
            if rss is not None:
                self.peak[name], self.cpu[name] = max(self.peak[name], rss), cpu or 0.0

    def stop(self) -> dict:
        self.read()
        self._done.set()
        self._thread.join()
        return {name: {"peak_rss_mb": round(self.peak[name]), "cpu_s": round(self.cpu[name], 1)} for name in self.pids}


def run_release(cmd: list[str], log: Path, workers: dict[str, int]) -> dict:
    """Runs the release command; its wall, CPU (with its children) and peak RSS (wait4), the workers'."""
    t0 = time.perf_counter()
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        watch = Watch(workers)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    figures = {"wall_s": round(wall, 1), "exit": os.waitstatus_to_exitcode(status),
               "flow": {"peak_rss_mb": round(usage.ru_maxrss / 1024), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1)}}
    figures["workers"] = watch.stop()
    return figures


def release_command(args: argparse.Namespace, root: Path, address: str | None) -> list[str]:
    cmd = [sys.executable, "-m", "mathindex", "release", "--sources", str(args.sources), "--out", str(root)]
    if args.precision:
        cmd += ["--precision", args.precision]
    if address:
        cmd += ["--runner", "dask", "--dask-address", address]
    return cmd


def one_mode(mode: str, args: argparse.Namespace) -> dict:
    """Seeds the mode's root, builds the release, reads its manifest's stage figures."""
    root = args.work / mode / "root"
    seed_root(args.seed_root, root, set(args.cold), args.seed_releases)
    if mode == "local":
        figures = run_release(release_command(args, root, None), args.work / mode / "release.log", {})
    else:
        with dask_cluster(args.work / mode / "dask-logs", workers=2) as cluster:
            pids = {f"w{i}": p.pid for i, p in enumerate(cluster.workers)}
            figures = run_release(release_command(args, root, cluster.address), args.work / mode / "release.log", pids)
    release = published_release(root)
    if release and args.seed_releases and release.name in {p.name for p in RootLayout(args.seed_root).releases.iterdir()}:
        release = None  # nothing new was published
    manifest = json.loads(ReleaseLayout(release).manifest.read_text()) if release else {"stages": {}}
    return {**figures, "release": str(release) if release else None,
            "stage_seconds": stage_figures(manifest, "seconds"), "stage_peak_rss_mb": stage_figures(manifest, "peak_rss_mb")}


def table(results: dict[str, dict]) -> str:
    """Stage seconds and peak RSS of each mode, one row a stage (markdown)."""
    modes = list(results)
    stages = list(dict.fromkeys(s for r in results.values() for s in r["stage_seconds"]))
    head = "| stage | " + " | ".join(f"{m} s | {m} flow MB" for m in modes) + " |"
    rows = [head, "|---|" + "---|---|" * len(modes)]
    for s in stages:
        rows.append(f"| {s} | " + " | ".join(f"{results[m]['stage_seconds'].get(s, '')} | "
                                               f"{results[m]['stage_peak_rss_mb'].get(s, '')}" for m in modes) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", type=Path, required=True)
    ap.add_argument("--seed-root", type=Path, required=True, help="a root whose cache and models seed each mode's")
    ap.add_argument("--work", type=Path, required=True, help="a new directory: each mode's root and logs")
    ap.add_argument("--cold", default="", help="cache entries left out of the seed, comma-separated (e.g. lean,formulas,formal)")
    ap.add_argument("--seed-releases", action="store_true",
                    help="also link SEED's releases and published pointer (a nightly on that root, not a first release)")
    ap.add_argument("--precision", choices=["fp32", "bf16", "int8"])
    ap.add_argument("--modes", default=",".join(MODES))
    args = ap.parse_args(argv)
    args.cold = [c for c in args.cold.split(",") if c]
    modes = [m for m in args.modes.split(",") if m]
    if args.work.exists():
        ap.error(f"--work {args.work} exists: give a new directory")
    print(f"CPU: {cpu_model()}; cold cache entries: {args.cold or 'none'}")
    results = {}
    for mode in modes:
        results[mode] = one_mode(mode, args)
        r = results[mode]
        print(f"{mode}: exit {r['exit']}, wall {r['wall_s']} s, flow CPU {r['flow']['cpu_s']} s, "
              f"flow peak RSS {r['flow']['peak_rss_mb']} MB, workers {r['workers'] or '-'}", flush=True)
    print(table(results))
    status = 0 if all(r["exit"] == 0 and r["release"] for r in results.values()) else 1
    if status == 0 and len(modes) == 2:
        same, diff, only_a, only_b = compare(Path(results[modes[0]]["release"]), Path(results[modes[1]]["release"]))
        data = [d for d in diff if not d.endswith(RECORDS_THE_RUN)]
        results["bytes"] = {"same": len(same), "differ": data, "records_the_run": sorted(set(diff) - set(data)),
                            "only_local": only_a, "only_cluster": only_b}
        print(f"bytes: {len(same)} files identical; data files that differ: {data or 'none'}; "
              f"only in one: {only_a + only_b or 'none'}")
        status = 0 if not (data or only_a or only_b) else 1
    (args.work / "cluster_release.json").write_text(json.dumps({"cpu": cpu_model(), **results}, indent=1) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
