"""One `mathindex search` (and one `mathindex premises`) process, wall and CPU, start to exit: the
CLI on the server's query path against the old path beside it (SearchEngine opened as the CLI
opened it before: the full embedder, torch and sentence-transformers), as medians of N alternating
runs with their ratio. Targets (issue 34): a search at most 1.5 s wall on the sample release, 3 s on
whole Mathlib, on the 2-core machines. The CPU figure (user + system of the process and its children)
is the wall a quiet machine would see; the wall on a loaded one is larger. Each checkout's modules
are compiled once, as an installed package's are (`compiled_once`).

    python -m bench.cli_latency RELEASE [--runs 5] [--query Q] [--goal G] [--baseline-checkout DIR]
    python -m bench.cli_latency RELEASE --kinds all --baseline-checkout DIR [--runs 3]

The baseline is this checkout's SearchEngine (`--old-path`, run by this script in a child process),
or with --baseline-checkout DIR that checkout's own `python -m mathindex search` (its code first on
PYTHONPATH). `--kinds` (with --baseline-checkout) times one query of each named kind of KINDS
(prose, a Lean name, a Lean statement, LaTeX, a formula, a Stacks tag, an unknown tag, a Loogle
query through the fused search, `search --formal`, `premises`), each against the baseline, and
ends with a table of them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERY = "sum of totient over divisors"
OLD_PATH = "--old-path"  # argv[1] of the baseline's child process
GOAL, CONTEXT = "a * b ≤ a * c", "{a b c : ℕ} (h : b ≤ c)"
# kind -> the CLI arguments after the release (`--kinds`): one query of each kind a user types
KINDS: dict[str, list[str]] = {
    "prose": ["search", QUERY],
    "name": ["search", "Nat.Prime.two_le"],
    "statement": ["search", "∀ n : ℕ, ∑ d ∈ n.divisors, φ d = n"],
    "latex": ["search", r"\sum_{d|n} \varphi(d) = n"],
    "formula": ["search", "a^2 + b^2 = c^2"],
    "stacks-tag": ["search", "0BQX"],
    "unknown-tag": ["search", "0BCD"],
    "loogle": ["search", "Nat.totient, Nat.Prime"],
    "formal": ["search", "--formal", "Nat.totient, Nat.Prime"],
    "premises": ["premises", "--goal", GOAL, "--context", CONTEXT],
}


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


def compiled_once(env: dict[str, str], checkout: Path) -> dict[str, str]:
    """`env` with each module's bytecode written once per checkout (PYTHONPYCACHEPREFIX under the temp
    directory, PYTHONDONTWRITEBYTECODE unset), so that every timed run loads compiled modules, as an
    installed package does, rather than compiling all of mathindex again (0.2-0.3 s a run)."""
    key = hashlib.sha256(str(checkout.resolve()).encode()).hexdigest()[:12]
    out = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "cli_latency-pycache" / key)
    return out


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


def kind_commands(args: argparse.Namespace) -> dict[str, tuple[list[str], list[str]]]:
    """kind -> (this checkout's CLI, the baseline checkout's) for each kind of `--kinds`."""
    kinds = list(KINDS) if args.kinds == "all" else args.kinds.split(",")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise SystemExit(f"cli_latency: unknown kind {', '.join(unknown)}; known: {', '.join(KINDS)}")
    out = {}
    for kind in kinds:
        verb, *rest = KINDS[kind]
        argv = [verb, *rest[:-1], str(args.release), rest[-1]] if verb == "search" else [verb, str(args.release), *rest]
        out[kind] = ([sys.executable, "-m", "mathindex", *argv], [sys.executable, "-P", "-m", "mathindex", *argv])
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
    p.add_argument("--kinds", help=f"with --baseline-checkout: 'all' or a comma list of {', '.join(KINDS)}")
    args = p.parse_args()
    if args.kinds and args.baseline_checkout is None:
        p.error("--kinds needs --baseline-checkout")
    env = compiled_once({**os.environ, "PYTHONPATH": str(REPO)}, REPO)
    base_env = env if args.baseline_checkout is None else compiled_once(
        {**os.environ, "PYTHONPATH": str(args.baseline_checkout.resolve())}, args.baseline_checkout)
    print(f"cpu: {cpu_model()}; load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"release: {args.release}; {args.runs} runs each, alternating; baseline: "
          f"{args.baseline_checkout or 'SearchEngine (the CLI before it used the served path)'}")
    if args.kinds:
        table = {kind: medians(new, old, env, base_env, args.runs) for kind, (new, old) in kind_commands(args).items()}
        print(f"\n{'kind':<16} {'baseline wall':>13} {'cpu':>6} {'this wall':>10} {'cpu':>6}   (medians of {args.runs}, s)")
        for kind, med in table.items():
            print(f"{kind:<16} {med['old'][0]:>13.2f} {med['old'][1]:>6.2f} {med['new'][0]:>10.2f} {med['new'][1]:>6.2f}")
        return
    for verb, (new, old) in commands(args).items():
        if verb not in args.verbs.split(","):
            continue
        med = medians(new, old, env, base_env, args.runs)
        print(f"{verb}, served path: wall {med['new'][0]:.2f} s, cpu {med['new'][1]:.2f} s (medians)")
        print(f"{verb}, SearchEngine (baseline): wall {med['old'][0]:.2f} s, cpu {med['old'][1]:.2f} s (medians)")
        print(f"{verb}, ratio baseline / served: wall {med['old'][0] / med['new'][0]:.1f}x, "
              f"cpu {med['old'][1] / med['new'][1]:.1f}x")


def medians(new: list[str], old: list[str], env: dict[str, str], base_env: dict[str, str],
            runs: int) -> dict[str, tuple[float, float]]:
    """{"new"|"old": (median wall, median CPU)} of `runs` alternating runs of each, after one of each
    first (the page cache and the root's exports, as after a first search)."""
    timed(new, env)
    timed(old, base_env)
    got: dict[str, list[tuple[float, float]]] = {"new": [], "old": []}
    for _ in range(runs):
        got["new"].append(timed(new, env))
        got["old"].append(timed(old, base_env))
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in got.items()}


if __name__ == "__main__":
    main()
