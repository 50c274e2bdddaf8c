"""Benchmark: the Lean libraries of a sources file (Mathlib, Batteries, Lean core), each extracted
cold (a fresh cache directory of its own), against the baseline library alone (Mathlib); and the
local executors of the extract stage compared (`--modes`).

Usage: python -m bench.libraries [--sources bench/sources/mathlib.yaml] --cache-root DIR [--baseline mathlib]
           [--modes task,threads] [--rounds 1]

Modes: `task` is one task per source scanning its shards in the stage's process pool
(`extract_lean_tree`, the local default: tasks/extract.py LOCAL_POOL); `threads` is the shards on
a thread pool of one a core as Prefect's ThreadPoolTaskRunner runs them (`extract_shard`, then the
reduce: what `extract_lean_sources` does off the pool path). Rounds rotate the modes so the
machine's noise falls on each alike. Prints per library and mode: files, declaration rows, named
source declarations, distinct names, errors, median cold wall and CPU seconds (this process and its
workers); then, for the first mode, the totals, the ratio of all the libraries to the baseline
alone, and the names that more than one library declares (one node each, `names.lean_node_id`);
then each mode's wall and CPU against the first's. A library whose corpus is not laid out is named
and left out; the modes' tables must be equal (checked).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow.compute as pc

from bench.common.machine import cpu_model, cpu_seconds
from mathindex.lean import extract_lean_tree
from mathindex.lean.extract import LeanExtraction, finish_extraction, plan_extraction
from mathindex.lean.shards import extract_shard
from mathindex.search.nodes import names_in_several_corpora
from mathindex.sources import PACKAGE_ROOT, read_sources_file
from mathindex.tasks.extract import merge_extractions

DEFAULT_SOURCES = PACKAGE_ROOT / "bench" / "sources" / "mathlib.yaml"


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


def extract_on_threads(root: Path, name: str, cache: Path) -> LeanExtraction:
    """The source's shards on a thread pool of one a core (as the flow's thread-pool runner runs
    `extract_lean_shard` tasks), then the reduce."""
    cores = os.cpu_count() or 1
    plan = plan_extraction(root, name, cache, spread=cores)
    with ThreadPoolExecutor(cores) as pool:
        list(pool.map(lambda s: extract_shard(s, cache), plan.shards))
    return finish_extraction(plan, cache)


MODES = {"task": lambda root, name, cache: extract_lean_tree(root, name, cache), "threads": extract_on_threads}


def measure(name: str, root: Path, cache: Path, mode: str = "task") -> dict:
    """One cold extraction of `root` into the empty cache directory `cache`: its figures and tables."""
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    t0, c0 = time.perf_counter(), cpu_seconds()
    run = MODES[mode](root, name, cache)
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    d = run.declarations
    return {"name": name, "mode": mode, "run": run, "files": sum(1 for _ in root.rglob("*.lean")), "rows": d.num_rows,
            "source": pc.sum(pc.equal(d["origin"], "source")).as_py() or 0,
            "names": len(set(d["full_name"].to_pylist())), "errors": run.errors.num_rows, "wall": wall, "cpu": cpu}


def rounds_of(roots: dict[str, Path], cache_root: Path, modes: list[str], rounds: int) -> dict[str, list[dict]]:
    """Per mode, one result per library: its figures with the median wall and CPU over `rounds`
    (the modes rotated each round); the modes' tables checked equal."""
    runs: dict[tuple[str, str], list[dict]] = {}
    for r in range(rounds):
        for mode in modes[r % len(modes):] + modes[: r % len(modes)]:
            for name, root in roots.items():
                runs.setdefault((mode, name), []).append(measure(name, root, cache_root / f"{name}-{mode}", mode))
    out: dict[str, list[dict]] = {}
    for mode in modes:
        out[mode] = []
        for name in roots:
            got = runs[(mode, name)]
            first = runs[(modes[0], name)][0]["run"]
            for g in got:
                if not all(getattr(g["run"], t).equals(getattr(first, t)) for t in ("declarations", "dependencies", "errors")):
                    raise SystemExit(f"{name}: mode {mode} made other tables than mode {modes[0]}")
            out[mode].append({**got[0], "wall": statistics.median(g["wall"] for g in got),
                              "cpu": statistics.median(g["cpu"] for g in got), "rounds": len(got)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    ap.add_argument("--cache-root", type=Path, required=True, help="a scratch folder: one fresh cache per library")
    ap.add_argument("--baseline", default="mathlib", help="the library the others are measured against")
    ap.add_argument("--modes", default="task", help=f"comma-separated, of {', '.join(MODES)}; the first is the baseline")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in MODES for m in modes) or args.rounds < 1:
        raise SystemExit(f"--modes takes {', '.join(MODES)}; --rounds at least 1")
    roots, missing = lean_roots(args.sources)
    print(f"CPU: {cpu_model()}; load average (1 min) at the start: {os.getloadavg()[0]:.2f}")
    for name in missing:
        print(f"not laid out (left out): {name}")
    by_mode = rounds_of(roots, args.cache_root, modes, args.rounds)
    print(f"{'library':<12}{'mode':<9}{'files':>8}{'rows':>10}{'source':>10}{'names':>10}{'errors':>8}"
          f"{'cold s':>9}{'CPU s':>9}{'rounds':>7}")
    for mode, results in by_mode.items():
        for r in results:
            print(f"{r['name']:<12}{mode:<9}{r['files']:>8,}{r['rows']:>10,}{r['source']:>10,}{r['names']:>10,}"
                  f"{r['errors']:>8,}{r['wall']:>9.2f}{r['cpu']:>9.2f}{r['rounds']:>7}")
    results = by_mode[modes[0]]
    wall, cpu = sum(r["wall"] for r in results), sum(r["cpu"] for r in results)
    rows = sum(r["rows"] for r in results)
    print(f"{'all':<12}{modes[0]:<9}{sum(r['files'] for r in results):>8,}{rows:>10,}"
          f"{sum(r['source'] for r in results):>10,}{'':>10}{sum(r['errors'] for r in results):>8,}{wall:>9.2f}{cpu:>9.2f}")
    for mode in modes[1:]:
        w, c = sum(r["wall"] for r in by_mode[mode]), sum(r["cpu"] for r in by_mode[mode])
        print(f"mode {mode} / {modes[0]}, all libraries: wall {w / wall:.3f}, CPU {c / cpu:.3f}")
    base = next((r for r in results if r["name"] == args.baseline), None)
    if base is not None and len(results) > 1:
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
