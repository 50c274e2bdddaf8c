"""Benchmark: Lean extraction of a whole library (default: Mathlib at /work/corpora/mathlib4).

Usage: .venv/bin/python -m bench.lean_extract [MATHLIB_DIR] [--bench FILE] [--workers N]

Prints files, declarations, errors, wall time of a cold run (empty cache) next to a bare regex
scan for declaration keywords over the same files (run in the same script), the cached rerun time,
peak RSS, the independent declaration count and MathlibQR target coverage.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from bench.common.machine import cpu_seconds
from mathindex.lean import extract_lean_tree
from mathindex.lean.lexer import blank

KEYWORD_LINE = re.compile(
    rb"^(?:@\[[^\n]*\]\s*)?(?:(?:private|protected|noncomputable|nonrec|partial|unsafe|scoped|local|public|meta)\s+)*"
    rb"(theorem|lemma|def|abbrev|instance|structure|class|inductive|axiom|opaque|irreducible_def|alias)\b",
    re.M,
)
COUNT_LINE = re.compile(
    r"^(?:@\[[^\n]*\]\s*)?(?:(?:private|protected|noncomputable|nonrec|partial|unsafe|scoped|local|public|meta)\s+)*"
    r"(theorem|lemma|def|abbrev|instance|structure|class|inductive|axiom|opaque|irreducible_def)\b",
    re.M,
)


def bare_scan(files: list[Path]) -> int:
    """The baseline: read every file and count declaration keywords at line start (bytes regex)."""
    return sum(len(KEYWORD_LINE.findall(p.read_bytes())) for p in files)


def independent_count(files: list[Path]) -> int:
    """Declaration keywords at line start in comment-free text (one per source declaration;
    examples excluded). This is what `origin == 'source'` rows should match."""
    n = 0
    for p in files:
        text = blank(p.read_bytes().decode("utf-8", errors="replace")).text
        n += len(COUNT_LINE.findall(text))
    return n


def rerun_one_changed(root: Path, files: list[Path], cache: Path) -> float:
    """Seconds for a rerun over a mirror of `root` (symlinks) in which one file was edited."""
    with tempfile.TemporaryDirectory() as tmp:
        mirror = Path(tmp) / "tree"
        for p in files:
            q = mirror / p.relative_to(root)
            q.parent.mkdir(parents=True, exist_ok=True)
            q.symlink_to(p)
        edited = mirror / files[len(files) // 2].relative_to(root)
        text = edited.read_text(encoding="utf-8", errors="replace")
        edited.unlink()
        edited.write_text(text + "\ntheorem bench_added_decl : True := trivial\n", encoding="utf-8")
        extract_lean_tree(mirror, "mathlib", cache)  # same contents, new root: reuses per-file rows
        edited.write_text(text + "\ntheorem bench_added_decl2 : True := trivial\n", encoding="utf-8")
        t0 = time.perf_counter()
        out = extract_lean_tree(mirror, "mathlib", cache)
        took = time.perf_counter() - t0
        assert "bench_added_decl2" in set(out.declarations["full_name"].to_pylist())
        return took


def peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", default="/work/corpora/mathlib4")
    ap.add_argument("--bench", default="bench/suites/mathlibqr-dev.json")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    root = Path(args.root)
    files = sorted(root.rglob("*.lean"))
    print(f"root {root}: {len(files)} .lean files")

    scans, colds, warms, scan_cpu, cold_cpu, one_changed = [], [], [], [], [], []
    result = None
    for _ in range(args.repeats):
        t0, c0 = time.perf_counter(), cpu_seconds()
        bare_scan(files)
        scans.append(time.perf_counter() - t0)
        scan_cpu.append(cpu_seconds() - c0)
        with tempfile.TemporaryDirectory() as cache:
            t0, c0 = time.perf_counter(), cpu_seconds()
            result = extract_lean_tree(root, "mathlib", Path(cache))
            colds.append(time.perf_counter() - t0)
            cold_cpu.append(cpu_seconds() - c0)
            t0 = time.perf_counter()
            again = extract_lean_tree(root, "mathlib", Path(cache))
            warms.append(time.perf_counter() - t0)
            same = again.declarations.equals(result.declarations)
            del again
            one_changed.append(rerun_one_changed(root, files, Path(cache)))
    decls = result.declarations
    origin = pc.value_counts(decls["origin"]).to_pylist()
    source_rows = pc.sum(pc.is_in(decls["origin"], pa.array(["source", "instance_name"]))).as_py()
    indep = independent_count(files)
    names = set(decls["full_name"].to_pylist())

    scan, cold, warm = statistics.median(scans), statistics.median(colds), statistics.median(warms)
    print(f"{'figure':<38}{'value':>14}")
    print(f"{'files':<38}{len(files):>14}")
    print(f"{'declarations (all rows)':<38}{decls.num_rows:>14}")
    for o in sorted(origin, key=lambda x: -x["counts"]):
        print(f"{'  origin=' + o['values']:<38}{o['counts']:>14}")
    print(f"{'dependency edges':<38}{result.dependencies.num_rows:>14}")
    print(f"{'errors':<38}{result.errors.num_rows:>14}")
    print(f"{'files with errors':<38}{len(set(result.errors['file'].to_pylist())):>14}")
    print(f"{'independent count (keyword lines)':<38}{indep:>14}")
    print(f"{'source+instance rows / independent':<38}{source_rows / max(indep, 1):>14.4f}")
    print(f"{'bare regex scan s (median)':<38}{scan:>14.2f}")
    print(f"{'cold extraction s (median)':<38}{cold:>14.2f}")
    print(f"{'ratio cold / bare scan':<38}{cold / scan:>14.2f}")
    sc, cc = statistics.median(scan_cpu), statistics.median(cold_cpu)
    print(f"{'bare regex scan CPU s (median)':<38}{sc:>14.2f}")
    print(f"{'cold extraction CPU s, all processes':<38}{cc:>14.2f}")
    print(f"{'ratio CPU cold / CPU bare scan':<38}{cc / sc:>14.2f}")
    print(f"{'load average (1 min) at the end':<38}{os.getloadavg()[0]:>14.2f}")
    print(f"{'cached rerun s (median)':<38}{warm:>14.2f}")
    print(f"{'ratio cached / bare scan':<38}{warm / scan:>14.2f}")
    print(f"{'cached rerun identical':<38}{str(same):>14}")
    print(f"{'rerun, one file edited s (median)':<38}{statistics.median(one_changed):>14.2f}")
    print(f"{'peak RSS MB (max of self, children)':<38}{peak_rss_mb():>14.0f}")
    if Path(args.bench).exists():
        targets = [t["full_name"] for t in json.loads(Path(args.bench).read_text())]
        missing = [t for t in targets if t not in names]
        print(f"{'MathlibQR targets found':<38}{len(targets) - len(missing):>10}/{len(targets)}")
        for m in missing:
            print(f"  missing: {m}")
    else:
        print(f"MathlibQR file {args.bench} absent: coverage not measured")
    if result.errors.num_rows:
        print("first errors:")
        for e in result.errors.slice(0, 15).to_pylist():
            print(f"  {e['file']}:{e['line']}: {e['reason']}")


if __name__ == "__main__":
    main()
