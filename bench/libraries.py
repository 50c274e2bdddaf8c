"""Benchmark: the Lean libraries of a sources file (Mathlib, Batteries, Lean core), each extracted
cold (a fresh cache directory of its own), against the baseline library alone (Mathlib).

Usage: python -m bench.libraries [--sources bench/sources/mathlib.yaml] --cache-root DIR [--baseline mathlib]

Prints per library: files, declaration rows, named source declarations, distinct names, errors,
cold wall and CPU seconds (this process and its workers); then the totals, the ratio of all the
libraries to the baseline alone, and the names that more than one library declares (one node
each, `names.lean_node_id`). A library whose corpus is not laid out is named and left out.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import time
from pathlib import Path

import pyarrow.compute as pc

from bench.common.machine import cpu_model
from mathindex.lean import extract_lean_tree
from mathindex.search.nodes import names_in_several_corpora
from mathindex.sources import PACKAGE_ROOT, read_sources_file
from mathindex.tasks.extract import merge_extractions

DEFAULT_SOURCES = PACKAGE_ROOT / "bench" / "sources" / "mathlib.yaml"


def cpu_seconds() -> float:
    """User+system CPU of this process and its reaped children (the extraction workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def lean_roots(sources: Path) -> tuple[dict[str, Path], list[str]]:
    """(name -> corpus root) of the file's Lean sources that are laid out, and the names of those
    that are not."""
    found, missing = {}, []
    for spec in read_sources_file(sources).sources:
        root = (sources.parent / spec.path).resolve()
        if spec.kind != "lean":
            continue
        if any(root.rglob("*.lean")):
            found[spec.name] = root
        else:
            missing.append(spec.name)
    return found, missing


def measure(name: str, root: Path, cache: Path) -> dict:
    """One cold extraction of `root` into the empty cache directory `cache`: its figures and tables."""
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    t0, c0 = time.perf_counter(), cpu_seconds()
    run = extract_lean_tree(root, name, cache)
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    d = run.declarations
    return {"name": name, "run": run, "files": sum(1 for _ in root.rglob("*.lean")), "rows": d.num_rows,
            "source": pc.sum(pc.equal(d["origin"], "source")).as_py() or 0,
            "names": len(set(d["full_name"].to_pylist())), "errors": run.errors.num_rows, "wall": wall, "cpu": cpu}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    ap.add_argument("--cache-root", type=Path, required=True, help="a scratch folder: one fresh cache per library")
    ap.add_argument("--baseline", default="mathlib", help="the library the others are measured against")
    args = ap.parse_args()
    roots, missing = lean_roots(args.sources)
    print(f"CPU: {cpu_model()}; load average (1 min) at the start: {os.getloadavg()[0]:.2f}")
    for name in missing:
        print(f"not laid out (left out): {name}")
    results = [measure(name, root, args.cache_root / name) for name, root in roots.items()]
    print(f"{'library':<12}{'files':>8}{'rows':>10}{'source':>10}{'names':>10}{'errors':>8}{'cold s':>9}{'CPU s':>9}")
    for r in results:
        print(f"{r['name']:<12}{r['files']:>8,}{r['rows']:>10,}{r['source']:>10,}{r['names']:>10,}{r['errors']:>8,}"
              f"{r['wall']:>9.1f}{r['cpu']:>9.1f}")
    wall, cpu = sum(r["wall"] for r in results), sum(r["cpu"] for r in results)
    rows = sum(r["rows"] for r in results)
    print(f"{'all':<12}{sum(r['files'] for r in results):>8,}{rows:>10,}{sum(r['source'] for r in results):>10,}"
          f"{'':>10}{sum(r['errors'] for r in results):>8,}{wall:>9.1f}{cpu:>9.1f}")
    base = next((r for r in results if r["name"] == args.baseline), None)
    if base is not None:
        print(f"declaration rows, all / {args.baseline} alone: {rows / base['rows']:.3f}")
        print(f"cold extraction wall, all / {args.baseline} alone: {wall / base['wall']:.3f}")
        print(f"cold extraction CPU, all / {args.baseline} alone: {cpu / base['cpu']:.3f}")
    merged = merge_extractions([r["run"] for r in results], [])
    shared = names_in_several_corpora(merged.declarations)
    names = {reason.split(" is declared in corpus ")[0] for reason in shared["reason"].to_pylist()}
    print(f"names declared by more than one library: {len(names)} "
          f"({shared.num_rows} errors rows)")
    for e in shared.slice(0, 10).to_pylist():
        print(f"  {e['corpus']} {e['file']}:{e['line']}: {e['reason']}")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
