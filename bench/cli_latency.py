"""One `mathindex search` (and one `mathindex premises`) process, wall and CPU, start to exit: the
CLI on the server's query path against the old path beside it (SearchEngine opened as the CLI
opened it before: the full embedder, torch and sentence-transformers), as medians of N alternating
runs with their ratio. Targets (issue 34): a search at most 1.5 s wall on the sample release, 3 s on
whole Mathlib, on the 2-core machines. The CPU figure (user + system of the process and its children)
is the wall a quiet machine would see; the wall on a loaded one is larger.

    python -m bench.cli_latency RELEASE [--runs 5] [--query Q] [--goal G] [--baseline-checkout DIR]

The baseline is this checkout's SearchEngine (`--old-path`, run by this script in a child process),
or with --baseline-checkout DIR that checkout's own `python -m mathindex search` (its code first on
PYTHONPATH).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERY = "sum of totient over divisors"
OLD_PATH = "--old-path"  # argv[1] of the baseline's child process
GOAL, CONTEXT = "a * b ≤ a * c", "{a b c : ℕ} (h : b ≤ c)"


def cpu_model() -> str:
    """The CPU's model name and whether it has AVX-512 (/proc/cpuinfo), and the core count."""
    name, flags = platform.processor() or "?", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                name = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
                break
    except OSError:
        pass
    return f"{name}; avx512f: {'yes' if 'avx512f' in flags else 'no'}; {os.cpu_count()} cores"


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s of the process and its children) of one run of `argv`, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    run = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise SystemExit(f"cli_latency: {' '.join(argv[:5])} … failed ({run.returncode}): {run.stderr.strip()[-800:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands(args: argparse.Namespace) -> dict[str, tuple[list[str], list[str]]]:
    """verb -> (this checkout's CLI, the baseline's argv)."""
    release = str(args.release)
    new = {"search": ["search", release, args.query, "--k", "10"],
           "premises": ["premises", release, "--goal", args.goal, "--context", args.context, "--k", "32"]}
    out = {}
    for verb, argv in new.items():
        if args.baseline_checkout is not None:
            old = [sys.executable, "-P", "-m", "mathindex", *argv]
        else:
            old = [sys.executable, "-m", "bench.cli_latency", OLD_PATH, verb, release,
                   args.query if verb == "search" else args.goal, args.context]
        out[verb] = ([sys.executable, "-m", "mathindex", *argv], old)
    return out


def old_path(verb: str, release: Path, text: str, context: str) -> None:
    """What `mathindex search` / `premises` ran before they used the server's path: SearchEngine
    with the full embedder (queries_only False), its describe, the premise ranker over it."""
    from mathindex.search.engine import SearchEngine

    engine = SearchEngine(release)
    if verb == "search":
        result = engine.search(text, 10)
        about = engine.describe([h.name for h in result.hits])
        print(json.dumps([[h.name, about.get(h.name, {}).get("file")] for h in result.hits]))
    else:
        from mathindex.premises.api import ranker_of

        result = ranker_of(engine).rank(text, context, 32)
        print(json.dumps([p.name for p in result.premises]))


def main() -> None:
    if sys.argv[1:2] == [OLD_PATH]:  # the baseline's child process: VERB RELEASE TEXT CONTEXT
        verb, release, text, context = sys.argv[2:6]
        old_path(verb, Path(release), text, context)
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("release", type=Path, help="a release directory (or root)")
    p.add_argument("--runs", type=int, default=5, help="runs of each command, alternating (default 5)")
    p.add_argument("--query", default=QUERY)
    p.add_argument("--goal", default=GOAL)
    p.add_argument("--context", default=CONTEXT)
    p.add_argument("--verbs", default="search,premises", help="which commands to time (default: search,premises)")
    p.add_argument("--baseline-checkout", type=Path, help="another checkout whose `mathindex` is the baseline")
    args = p.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    base_env = env if args.baseline_checkout is None else {**os.environ, "PYTHONPATH": str(args.baseline_checkout.resolve())}
    print(f"cpu: {cpu_model()}; load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"release: {args.release}; {args.runs} runs each, alternating; baseline: "
          f"{args.baseline_checkout or 'SearchEngine (the CLI before it used the served path)'}")
    for verb, (new, old) in commands(args).items():
        if verb not in args.verbs.split(","):
            continue
        timed(new, env)  # one run first for each: the page cache and the root's exports, as after a first search
        timed(old, base_env)
        runs: dict[str, list[tuple[float, float]]] = {"new": [], "old": []}
        for _ in range(args.runs):
            runs["new"].append(timed(new, env))
            runs["old"].append(timed(old, base_env))
        med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}
        print(f"{verb}, served path: wall {med['new'][0]:.2f} s, cpu {med['new'][1]:.2f} s (medians)")
        print(f"{verb}, SearchEngine (baseline): wall {med['old'][0]:.2f} s, cpu {med['old'][1]:.2f} s (medians)")
        print(f"{verb}, ratio baseline / served: wall {med['old'][0] / med['new'][0]:.1f}x, "
              f"cpu {med['old'][1] / med['new'][1]:.1f}x")


if __name__ == "__main__":
    main()
