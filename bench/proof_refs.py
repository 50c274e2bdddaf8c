"""Benchmark: proof references of a whole Lean library (default: Mathlib at /work/corpora/mathlib4).

Usage: .venv/bin/python -m bench.proof_refs [ROOT] [--sample 50] [--seed 2026] [--cache DIR]
                                            [--time-against OLD_CHECKOUT --repeats 3]

Prints the dependency rows by role, how many proof rows resolve to a corpus declaration, and a
seeded sample of proof rows to check by hand: each with its declaration's file:line and the body
lines that name the target (its last name component, or the written head of a dotted name).

`--time-against DIR` measures cold extraction (empty cache, fresh process each) of this checkout
and of the `mathindex` package under DIR (e.g. `git archive <commit> mathindex | tar -x -C DIR`),
alternating the two so that both see the same machine load; it prints each run and the medians.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc

from mathindex.lean import extract_lean_tree

HERE = Path(__file__).resolve().parents[1]
# run with `python -P` and PYTHONPATH=PKG: the `mathindex` package under PKG, nothing from the working directory
_TIMED = """
import tempfile, time
from pathlib import Path
from mathindex.lean import extract_lean_tree
with tempfile.TemporaryDirectory() as cache:
    t0 = time.perf_counter()
    ex = extract_lean_tree(Path({root!r}), "mathlib", Path(cache))
    print(time.perf_counter() - t0, ex.dependencies.num_rows)
"""


def cold_seconds(pkg: Path, root: Path) -> tuple[float, float, int]:
    """Wall seconds of one cold extraction with the `mathindex` package under `pkg`, CPU seconds
    of its process and workers (user + system), and its dependency rows."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-P", "-c", _TIMED.format(root=str(root))], check=True, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(pkg)}).stdout.split()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return float(out[0]), cpu, int(out[1])


def time_against(old: Path, root: Path, repeats: int) -> None:
    """Cold extraction, this checkout against `old`, alternating (old first on even rounds)."""
    wall: dict[str, list[float]] = {"old": [], "new": []}
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    for r in range(repeats):
        order = [("old", old), ("new", HERE)] if r % 2 == 0 else [("new", HERE), ("old", old)]
        for label, pkg in order:
            secs, cpu_s, rows = cold_seconds(pkg, root)
            wall[label].append(secs)
            cpu[label].append(cpu_s)
            print(f"round {r + 1} {label}: {secs:.2f} s wall, {cpu_s:.2f} s CPU ({rows} dependency rows), "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
    for what, d in (("wall", wall), ("CPU", cpu)):
        before, after = statistics.median(d["old"]), statistics.median(d["new"])
        print(f"cold extraction {what} median: before {before:.2f} s, after {after:.2f} s, ratio {after / before:.3f}")


def body_lines(root: Path, row: dict, decl: dict, lines_cache: dict[str, list[str]]) -> list[str]:
    """The lines of the declaration that name the row's target (at most 3), as `line: text`."""
    if decl["file"] not in lines_cache:
        lines_cache[decl["file"]] = (root / decl["file"]).read_text(errors="replace").splitlines()
    lines = lines_cache[decl["file"]]
    word = row["target"].rpartition(".")[2] if row["resolved"] else row["target"].split(".")[0]
    out = []
    for n in range(decl["line_start"], decl["line_end"] + 1):
        if word in lines[n - 1]:
            out.append(f"{n}: {lines[n - 1].strip()[:150]}")
            if len(out) == 3:
                break
    return out


def main() -> None:
    """Extract ROOT (or time it against an older checkout), print the figures, dump the sample."""
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", default="/work/corpora/mathlib4")
    ap.add_argument("--sample", type=int, default=50)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--cache", type=Path, default=None, help="extraction cache (reused between runs)")
    ap.add_argument("--time-against", type=Path, default=None, metavar="OLD_CHECKOUT")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    root = Path(args.root)
    if args.time_against:
        time_against(args.time_against, root, args.repeats)
        return
    ex = extract_lean_tree(root, "mathlib", args.cache)
    deps = ex.dependencies
    print(f"{'figure':<48}{'value':>12}")
    print(f"{'declarations (all rows)':<48}{ex.declarations.num_rows:>12}")
    print(f"{'dependency rows':<48}{deps.num_rows:>12}")
    for role in ("statement", "proof"):
        part = deps.filter(pc.equal(deps["role"], role))
        n = part.num_rows
        res = pc.sum(part["resolved"]).as_py() or 0
        users = len(set(part["full_name"].to_pylist()))
        print(f"{'  role=' + role:<48}{n:>12}")
        print(f"{'    resolved to a corpus declaration':<48}{res:>12} ({100 * res / max(n, 1):.1f} %)")
        print(f"{'    declarations with such rows':<48}{users:>12}")
    keys = deps.select(["corpus", "full_name", "target"]).to_pylist()
    print(f"{'(corpus, full_name, target) unique':<48}{str(len({tuple(k.values()) for k in keys}) == len(keys)):>12}")

    proof = deps.filter(pc.equal(deps["role"], "proof")).to_pylist()
    decls: dict[str, dict] = {}
    for d in ex.declarations.select(["full_name", "file", "line_start", "line_end", "origin"]).to_pylist():
        decls.setdefault(d["full_name"], d)
    sample = random.Random(args.seed).sample(proof, min(args.sample, len(proof)))
    print(f"\nseeded sample of {len(sample)} proof rows (seed {args.seed}):")
    cache: dict[str, list[str]] = {}
    for i, row in enumerate(sample, 1):
        d = decls[row["full_name"]]
        print(f"[{i}] {row['full_name']} -> {row['target']} (resolved={row['resolved']}) "
              f"{d['file']}:{d['line_start']}-{d['line_end']}")
        for line in body_lines(root, row, d, cache):
            print(f"      {line}")


if __name__ == "__main__":
    main()
