"""The release flow's embed stage on a warm cache, in fresh processes paired against a baseline
checkout's code: its peak RSS (VmHWM, reset at each step as the flow resets it at each stage),
wall and CPU seconds, and whether its vector/ files are byte for byte the baseline's.

    .venv/bin/python -m bench.embed_memory RELEASE_DIR --cache ROOT/cache --baseline-code DIR [--runs N]
        [--model ROOT/models/NAME@REV --precision bf16] [--index-changed] [--no-renderings]

RELEASE_DIR gives embedding_texts.parquet (read only); --cache is a root's cache that already
holds every vector of those texts and of their renderings for the bundled model, or for --model
at --precision (a release of them built it: no text is embedded, the stage reads its vectors back
and builds the index), and is not written to unless a text is missing. --baseline-code is a checkout of the code to pair
against, e.g. `git archive main | tar -x -C build/bench_main`. Steps: `model` (load the
embedder), `plan` (which texts the cache lacks), `index` (vectors read, HNSW SQ8 built, recall
measured, renderings checked): the flow's load_release_embedder, embed_in_shards, embed_and_index.
--index-changed: the code under test builds the graph otherwise (say so), so its files are compared
by recall@10, not bytes. --no-renderings: the index step alone, for a cache that holds the texts'
vectors but not their renderings' (the planned and embedded renderings are skipped in both runs).
"""

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

from bench.common.machine import cpu_model

CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path
def peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
def reset_peak():
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
texts_path, out, cache, model_dir, precision = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], sys.argv[5]
t0, c0 = time.perf_counter(), time.process_time()
import pyarrow.parquet as pq
from mathindex.embed.models import ModelPin
from mathindex.embed.shards import load_embedder
from mathindex.tasks.embed import embed_and_index, embedder_spec, plan_embed_shards
texts = pq.read_table(texts_path)
if os.environ.get("BENCH_NO_RENDERINGS"):
    import mathindex.tasks.embed as stage
    stage.warm_renderings = lambda *args, **kw: {"embedded": 0, "cached": 0}
steps = {}
def mark(name, t, c):
    steps[name] = {"wall": round(time.perf_counter() - t, 2), "cpu": round(time.process_time() - c, 2), "peak_mb": peak_mb()}
    reset_peak()
    return time.perf_counter(), time.process_time()
t, c = mark("texts", t0, c0)
model = ModelPin(None, None) if not model_dir else ModelPin(Path(model_dir), "models/" + Path(model_dir).name)
spec = embedder_spec(model, cache, precision, local=True)
embedder = load_embedder(spec)
t, c = mark("model", t, c)
plan = plan_embed_shards.fn(texts, embedder, cache, None, 20_000, os.cpu_count() or 1)
if plan.shards and plan.index_missing + (0 if os.environ.get("BENCH_NO_RENDERINGS") else plan.renderings_missing):
    sys.exit(f"the cache lacks {sum(len(s.texts) for s in plan.shards)} texts: not warm")
t, c = mark("plan", t, c)
embedder.threads = 0
vector = embed_and_index.fn(texts, model, out, cache, None, precision=precision, embedder=embedder, sharded=(plan, []))
t, c = mark("index", t, c)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"steps": steps, "wall": round(time.perf_counter() - t0, 2),
                  "cpu": round(time.process_time() - c0 + kids.ru_utime + kids.ru_stime, 2),
                  "peak_mb": max(s["peak_mb"] for s in steps.values()), "rows": vector.index["count"],
                  "recall_at_10": vector.index["recall_at_10"]}))
"""


def run_stage(code: Path, texts: Path, out: Path, cache: Path, model: str, precision: str, renderings: bool) -> dict:
    """One embed stage in a fresh process under `code`; its figures and its vector files' sha256."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(code), **({} if renderings else {"BENCH_NO_RENDERINGS": "1"}))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(texts), str(out), str(cache), model, precision], env=env,
                          capture_output=True, text=True, cwd=code)
    if proc.returncode:
        raise SystemExit(f"embed stage failed under {code}: {proc.stderr.strip().splitlines()[-3:]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    vector = out / "vector"
    got["files"] = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(vector.iterdir())}
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path, help="a release directory with embedding_texts.parquet")
    ap.add_argument("--cache", type=Path, required=True, help="a root's cache holding every vector of those texts")
    ap.add_argument("--baseline-code", type=Path, required=True, help="checkout to pair against (holds mathindex/)")
    ap.add_argument("--code", type=Path, default=Path.cwd(), help="checkout measured (default: the current directory)")
    ap.add_argument("--work", type=Path, default=Path("build/embed_memory"), help="scratch directory")
    ap.add_argument("--runs", type=int, default=1, help="paired runs (baseline, then this code)")
    ap.add_argument("--model", type=Path, help="a root's model entry (default: the bundled model)")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "int8"])
    ap.add_argument("--index-changed", action="store_true", help="compare the vector files by recall, not bytes")
    ap.add_argument("--no-renderings", action="store_true", help="skip the renderings: the index step alone")
    a = ap.parse_args()
    work = a.work.resolve()
    texts, cache = (a.release / "embedding_texts.parquet").resolve(), a.cache.resolve()
    print("CPU:", cpu_model(), flush=True)
    runs: dict[str, list[dict]] = {"baseline": [], "code": []}
    for i in range(a.runs):
        for name, code in (("baseline", a.baseline_code.resolve()), ("code", a.code.resolve())):
            model = str(a.model.resolve()) if a.model else ""
            runs[name].append(got := run_stage(code, texts, work / name, cache, model, a.precision,
                                                 not a.no_renderings))
            print(f"run {i} {name}: {got['rows']} rows, recall@10 {got['recall_at_10']}, wall {got['wall']} s, "
                  f"CPU {got['cpu']} s, peak {got['peak_mb']} MB, "
                  f"steps {got['steps']}", flush=True)
    print(f"\nmedians over {a.runs} runs (ratio = this code / baseline)")
    for figure in ("peak_mb", "wall", "cpu"):
        base, mine = (statistics.median(r[figure] for r in runs[n]) for n in ("baseline", "code"))
        print(f"{figure:8s} baseline {base:9.1f}  this code {mine:9.1f}  ratio {mine / base:.3f}")
    for step in runs["code"][0]["steps"]:
        base, mine = (statistics.median(r["steps"][step]["peak_mb"] for r in runs[n]) for n in ("baseline", "code"))
        print(f"peak MB in step {step:6s} baseline {base:6.0f}  this code {mine:6.0f}")
    differ = sorted({f for b, c in zip(runs["baseline"], runs["code"]) for f in b["files"] if b["files"][f] != c["files"].get(f)})
    if differ and a.index_changed:
        print("vector files differ from the baseline's (--index-changed):", ", ".join(differ))
        return 0
    if differ:
        print("vector files DIFFER from the baseline's:", ", ".join(differ))
        return 1
    print("vector files byte-identical to the baseline's in every run:", ", ".join(runs["code"][0]["files"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
