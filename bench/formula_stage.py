"""The release's formulas stage (collect_formulas, parse_formulas, build_formula_index) on a
release's declarations, cold (empty cache), warm (the cold run's cache) and with one file's
declarations changed (the cold run's cache), paired against a baseline checkout's code.

    .venv/bin/python -m bench.formula_stage RELEASE_DIR --baseline-code DIR [--runs N]

RELEASE_DIR holds declarations.parquet (read only); everything is written under --work
(default build/formula_stage). --baseline-code is a checkout of the code to pair against, e.g.
`git archive main mathindex | tar -x -C build/bench_main`. Each run is a fresh process; the
figures are its wall seconds and CPU seconds (its own plus the SymPy worker's). The script checks
that every run's tables and index files equal the baseline's on the same input, and exits 1 if not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
import pyarrow as pa, pyarrow.parquet as pq
decls_path, out, cache = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
t0, c0 = time.perf_counter(), time.process_time()
from mathindex.formula.api import lean_formulas, parse_formulas
from mathindex.formula.formula_index import FormulaIndex
import inspect
cached = "cache_dir" in inspect.signature(parse_formulas).parameters
decls = pq.read_table(decls_path)
steps = {}
def mark(name, t, c):
    steps[name] = [round(time.perf_counter() - t, 2), round(time.process_time() - c, 2)]
    return time.perf_counter(), time.process_time()
t, c = mark("load", t0, c0)
formulas = lean_formulas(decls)
t, c = mark("collect", t, c)
kw = {"cache_dir": Path(cache)} if cached else {}
trees, errors = parse_formulas(formulas, 2.0, **kw)
t, c = mark("parse", t, c)
FormulaIndex.build(trees, formulas, out / "formula", **kw)
t, c = mark("index", t, c)
for name, tab in (("formulas", formulas), ("formula_trees", trees), ("errors", errors)):
    pq.write_table(tab, out / f"{name}.parquet")
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"steps": steps, "wall": round(time.perf_counter() - t0, 2),
                  "cpu": round(time.process_time() - c0 + kids.ru_utime + kids.ru_stime, 2)}))
"""


def run_stage(code: Path, decls: Path, out: Path, cache: Path) -> dict:
    """One stage run in a fresh process under `code`; its figures."""
    shutil.rmtree(out, ignore_errors=True)
    (out / "formula").mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(code))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(decls), str(out), str(cache)], env=env,
                          capture_output=True, text=True, cwd=code)
    if proc.returncode:
        raise SystemExit(f"stage run failed under {code}: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def changed_declarations(decls: Path, dest: Path) -> str:
    """A copy of `decls` with the statement of every declaration of one file changed (the file with
    the most declarations, so the figure is an upper bound for one file); returns the file."""
    import polars as pl

    d = pl.read_parquet(decls)
    file = d.group_by("file").len().sort(["len", "file"], descending=[True, False])["file"][0]
    d = d.with_columns(type=pl.when(pl.col("file") == file).then(pl.col("type") + " ∧ True").otherwise(pl.col("type")))
    d.write_parquet(dest)
    return file


def differences(out: Path, ref: Path) -> list[str]:
    """Files of `out` that differ from `ref`'s: index files byte for byte, tables by content (the
    Parquet bytes of the tables depend on their chunks, which nothing reads)."""
    import pyarrow.parquet as pq

    names = sorted(p.name for p in (ref / "formula").iterdir())
    bad = [f"formula/{n}" for n in names if not (out / "formula" / n).exists()
           or (out / "formula" / n).read_bytes() != (ref / "formula" / n).read_bytes()]
    if names != sorted(p.name for p in (out / "formula").iterdir()):
        bad.append("formula/ (file names)")
    return bad + [p.name for p in sorted(ref.glob("*.parquet")) if not pq.read_table(out / p.name).equals(pq.read_table(p))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path, help="a release directory with declarations.parquet")
    ap.add_argument("--baseline-code", type=Path, required=True, help="checkout to pair against (holds mathindex/)")
    ap.add_argument("--code", type=Path, default=Path.cwd(), help="checkout measured (default: the current directory)")
    ap.add_argument("--work", type=Path, default=Path("build/formula_stage"), help="scratch directory")
    ap.add_argument("--runs", type=int, default=3, help="paired runs of each case")
    a = ap.parse_args()
    w = a.work.resolve()
    w.mkdir(parents=True, exist_ok=True)
    decls = (a.release / "declarations.parquet").resolve()
    changed = w / "declarations-changed.parquet"
    print("changed file:", changed_declarations(decls, changed), flush=True)
    code, base = a.code.resolve(), a.baseline_code.resolve()
    figures: dict[str, list[dict]] = {}
    mismatches: list[str] = []
    for i in range(a.runs):
        figures.setdefault("baseline", []).append(ref := run_stage(base, decls, w / "base", w / "unused"))
        shutil.rmtree(w / "cache", ignore_errors=True)
        for name in ("cold", "warm"):
            figures.setdefault(name, []).append(got := run_stage(code, decls, w / name, w / "cache"))
            mismatches += [f"run {i} {name}: {d}" for d in differences(w / name, w / "base")]
            print(f"run {i} {name}: {got} | baseline {ref['wall']} s wall, {ref['cpu']} s CPU", flush=True)
        shutil.rmtree(w / "cache-one", ignore_errors=True)
        shutil.copytree(w / "cache", w / "cache-one")  # each changed run starts from the cold run's cache
        figures.setdefault("baseline-changed", []).append(ref := run_stage(base, changed, w / "base-changed", w / "unused"))
        figures.setdefault("changed", []).append(got := run_stage(code, changed, w / "changed", w / "cache-one"))
        mismatches += [f"run {i} changed: {d}" for d in differences(w / "changed", w / "base-changed")]
        print(f"run {i} changed: {got} | baseline {ref['wall']} s wall, {ref['cpu']} s CPU", flush=True)
    print(f"\nmedians over {a.runs} runs (wall s / CPU s; ratio = case / baseline on the same input)")
    for name, basis in (("cold", "baseline"), ("warm", "baseline"), ("changed", "baseline-changed")):
        wall = statistics.median(r["wall"] for r in figures[name])
        cpu = statistics.median(r["cpu"] for r in figures[name])
        bwall = statistics.median(r["wall"] for r in figures[basis])
        bcpu = statistics.median(r["cpu"] for r in figures[basis])
        ratios = [r["cpu"] / b["cpu"] for r, b in zip(figures[name], figures[basis])]
        steps = {k: statistics.median(r["steps"][k][1] for r in figures[name]) for k in figures[name][0]["steps"]}
        print(f"{name:8s} wall {wall:7.2f} (baseline {bwall:7.2f})  CPU {cpu:7.2f} (baseline {bcpu:7.2f})  "
              f"CPU ratio {statistics.median(ratios):.3f}  CPU by step {steps}")
    if mismatches:
        print("OUTPUT DIFFERS from the baseline's:", ", ".join(mismatches))
        return 1
    print("outputs identical to the baseline's in every run (index files byte for byte, tables by content)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
