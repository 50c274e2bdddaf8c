"""The release flow's premise stage (`tasks.premises.premise_index`) on a built release, timed in
pairs against another checkout of the code (main's), each run a fresh process:

    .venv/bin/python -m bench.premises_stage RELEASE_DIR --baseline CODE_DIR [--code DIR] [--tables DIR]
        [--runs N] [--hits N] [--work DIR]

Each process imports the stage and its libraries and reads the tables first (the flow has them
loaded when the stage starts), then times the stage call alone, as the manifest's stage seconds do.
The release is read, never written: its files are linked into `WORK/<code>/releases/r/` (a root of
its own: `models` linked to the release root's, the ONNX export copied once) and the stage writes
`premises/` there. Runs alternate A B A B: A is this checkout with the root's cache (the first A
run builds and fills it, the later ones find their inputs unchanged), B is the baseline without
one; `--hits N` more A runs follow the pairs (a cold stage takes minutes on whole Mathlib, a
hit a second or two). `--code` times another checkout as A (a snapshot: `git archive HEAD`, so
that editing this one during the run changes nothing). Prints every run, the medians, the ratio of medians, and whether A's and B's `premises/`
files are byte-identical (the figures: metrics.json).

`--tables DIR`: `declarations.arrow` and `dependencies.arrow` in the order the flow had them (a
root's `cache/lean/lean-final-*/`); the default reads the release's Parquet tables, whose row order
the store chose, which can differ from the formal index's order among declarations on one line."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from bench.common.premises import stage_release

CHILD = r"""
import json, sys, time
from pathlib import Path
import pyarrow as pa, pyarrow.parquet as pq
import inspect
from mathindex.tasks.premises import premise_index
import sentence_transformers  # noqa: F401  (loaded by the embed stage before this one in the flow)
rel, tables, model, cache = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def read(name):
    if tables:
        with pa.memory_map(f"{tables}/{name}.arrow") as f:
            return pa.ipc.open_file(f).read_all()
    return pq.read_table(rel / f"{name}.parquet")
decl, deps = read("declarations"), read("dependencies")
fn = premise_index.fn
kw = {"cache_dir": Path(cache)} if cache and "cache_dir" in inspect.signature(fn).parameters else {}
lent = ()  # a checkout whose stage is lent the embed stage's channel: opened here as the flow's would be
if "vector" in inspect.signature(fn).parameters:
    from mathindex.embed.channel import VectorChannel
    from mathindex.channel import ChannelContext
    names = pq.read_table(rel / "nodes.parquet", columns=["name"]).column("name").to_pylist()
    lent = (VectorChannel.open(ChannelContext(rel, names, dict(zip(names, names)), rel.parent.parent, model or None)),)
t0 = time.perf_counter()
info = fn(rel, decl, deps, *lent, model, **kw)
seconds = time.perf_counter() - t0
figures = info.figures if hasattr(info, "figures") else info["figures"]  # an IndexBuild, or an older code's dict
print(json.dumps({"seconds": seconds, "figures": dict(figures)}))
"""


def run_stage(code: Path, rel: Path, tables: Path | None, model: str, cache: Path | None) -> dict:
    shutil.rmtree(rel / "premises", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(code), "MATHINDEX_ONNX_DIR": str(rel.parent.parent / "onnx")}
    out = subprocess.run([sys.executable, "-c", CHILD, str(rel), str(tables or ""), model, str(cache or "")],
                         cwd=code, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"stage failed under {code}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def digests(rel: Path) -> dict[str, str]:
    base = rel / "premises"
    return {p.relative_to(base).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(base.rglob("*")) if p.is_file()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--baseline", type=Path, required=True, help="a checkout of the code to compare with (main's)")
    ap.add_argument("--tables", type=Path, help="declarations.arrow and dependencies.arrow in the flow's order")
    ap.add_argument("--code", type=Path, help="the checkout timed as A (default: this one)")
    ap.add_argument("--runs", type=int, default=2, help="A B pairs (the first A run fills the cache)")
    ap.add_argument("--hits", type=int, default=0, help="A runs after the pairs")
    ap.add_argument("--work", type=Path, default=Path("build/bench-premises-stage"))
    args = ap.parse_args()
    args.work, args.tables = args.work.resolve(), args.tables.resolve() if args.tables else None  # the runs' cwd is the code
    model = json.loads((args.release / "manifest.json").read_text())["vector_index"].get("model") or ""
    here = (args.code or Path(__file__).resolve().parents[1]).resolve()
    a_rel, b_rel = stage_release(args.release, args.work / "a"), stage_release(args.release, args.work / "b")
    cache = args.work / "a" / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    a, b = [], []
    for i in range(args.runs):
        a.append(run_stage(here, a_rel, args.tables, model, cache))
        b.append(run_stage(args.baseline.resolve(), b_rel, args.tables, model, None))
        print(f"run {i + 1}: this checkout {a[-1]['seconds']:7.1f} s{' (cache filled)' if i == 0 else ''}   "
              f"baseline {b[-1]['seconds']:7.1f} s", flush=True)
        if i == 0:
            same = digests(a_rel) == digests(b_rel)
            print(f"premises/ files byte-identical to the baseline's: {same}; figures equal: {a[0]['figures'] == b[0]['figures']}")
    for i in range(args.hits):
        a.append(run_stage(here, a_rel, args.tables, model, cache))
        print(f"hit {i + 1}: this checkout {a[-1]['seconds']:7.2f} s", flush=True)
    same_after = digests(a_rel) == digests(b_rel)
    hits = [r["seconds"] for r in a[1:]]
    base = statistics.median(r["seconds"] for r in b)
    print(f"baseline (no cache): median {base:.1f} s over {len(b)}")
    print(f"this checkout, cache filled: {a[0]['seconds']:.1f} s (ratio {a[0]['seconds'] / base:.2f})")
    if hits:
        print(f"this checkout, inputs unchanged: median {statistics.median(hits):.2f} s over {len(hits)} "
              f"(ratio {statistics.median(hits) / base:.4f}); figures as the baseline's: {all(r['figures'] == b[0]['figures'] for r in a)}")
    print(f"premises/ files byte-identical to the baseline's after the last run: {same_after}")
    print(json.dumps({"baseline": b[0]["figures"], "this": a[-1]["figures"]}, sort_keys=True))


if __name__ == "__main__":
    main()
