"""What a nightly costs: a cold release, a rebuild with nothing changed, and one with one file
changed, run one after another on the same root, each as the operator runs it (`mathindex release`).

    .venv/bin/python -m bench.rebuild --sources bench/sources/mathlib.yaml --work build/rebuild \
        --model build/mathlib/models/mathindex-minilm@47314d2e3e43a6a3 --embeddings build/mathlib/cache

The corpus is laid out under WORK/corpus as hard links (the first source of the sources file), so the
changed file is a new copy and the real corpus is never touched. The cold release starts from an
empty root: every stage computes from nothing, except that `--embeddings ROOT_CACHE` links that
root's embedding vectors (cache/embeddings and cache/onnx) in, because embedding every Mathlib text
is issue 10's measurement (a cold embedding, 24-57 min) and would otherwise be most of the cold
figure. The cold release is ungated (an empty root has no baseline); the next two are gated against
it. Prints the wall seconds of each run (process start to exit, Prefect's server included), its ratio
to the cold run beside it, and each run's stage seconds from its manifest.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from mathindex.cache.layout import CacheLayout
from mathindex.store.layout import RootLayout

ROOT = Path(__file__).resolve().parents[1]
CHANGED_FILE = "Mathlib/Algebra/Group/Basic.lean"
ADDED = """

/-- The sum of an element and zero, restated (a declaration `bench/rebuild.py` adds to one file). -/
theorem mathindex_bench_add_zero' {M : Type*} [AddMonoid M] (a : M) : a + 0 = a := add_zero a
"""
TARGETS = {"no change": 120.0, "one file changed": 180.0}


def lay_out(sources: Path, work: Path) -> Path:
    """WORK/corpus as hard links of the first source, and WORK/sources.yaml naming it (suites kept)."""
    spec = yaml.safe_load(sources.read_text())
    first = spec["sources"][0]
    src = (sources.parent / first["path"]).resolve()
    corpus = work / "corpus"
    if corpus.exists():
        shutil.rmtree(corpus)
    subprocess.run(["cp", "-al", str(src), str(corpus)], check=True)
    first = {**first, "path": str(corpus)}
    suites = [{**s, "path": str((sources.parent / s["path"]).resolve())} for s in spec.get("suites", [])]
    out = work / "sources.yaml"
    out.write_text(yaml.safe_dump({"sources": [first], "suites": suites}, sort_keys=False))
    return out


def change_one_file(corpus: Path, rel: str, variant: int = 0) -> None:
    """Appends a declaration to one file (`variant` > 0: another name, so each run's corpus is new
    and no cache keyed by content hits by chance), in place of one appended before: a new inode
    (write, then rename), the original untouched."""
    path = corpus / rel
    text = path.read_text(encoding="utf-8")
    marker = ADDED[: ADDED.index(" -/")]  # the appended docstring, which no Mathlib file has
    if marker in text:
        text = text[: text.index(marker)]
    added = ADDED if not variant else ADDED.replace("mathindex_bench_add_zero'", f"mathindex_bench_add_zero_{variant}'")
    tmp = path.with_suffix(".lean.tmp")
    tmp.write_text(text + added, encoding="utf-8")
    os.replace(tmp, path)


def release(sources: Path, root: Path, extra: list[str], log: Path) -> tuple[float, int, dict]:
    """(wall seconds, exit code, the new release's manifest stage seconds) of one `mathindex release`."""
    before = set((root / "releases").iterdir()) if (root / "releases").is_dir() else set()
    cmd = [sys.executable, "-m", "mathindex", "release", "--sources", str(sources), "--out", str(root), *extra]
    t0 = time.perf_counter()
    with log.open("w") as out:
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT).returncode
    wall = time.perf_counter() - t0
    new = sorted(set((root / "releases").iterdir()) - before) if (root / "releases").is_dir() else []
    stages = {}
    if new and (new[-1] / "manifest.json").is_file():
        line = json.loads((new[-1] / "manifest.json").read_text())["stages"]["seconds"]
        stages = {k.strip(): float(v) for k, v in (p.strip().rsplit(" ", 1) for p in line.split(","))}
    return wall, rc, stages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--model", help="the model of the cold release (default: the bundled one)")
    ap.add_argument("--precision", choices=["fp32", "bf16", "int8"])
    ap.add_argument("--embeddings", type=Path, help="a root's cache directory whose embedding vectors to link in")
    ap.add_argument("--changed-file", default=CHANGED_FILE)
    ap.add_argument("--again", type=float, metavar="COLD_SECONDS",
                    help="reuse WORK as an earlier run left it (no lay-out, no cold run): one release after "
                         "the code changed (caches keyed by the code refill), one with nothing changed, then "
                         "two with one file changed (each time a declaration of a new name: the second is a "
                         "nightly's steady state, with the first one's caches); ratios against the earlier "
                         "cold run's COLD_SECONDS")
    args = ap.parse_args()
    work = args.work.resolve()
    if args.again:
        again(work, args.again)
        return
    work.mkdir(parents=True, exist_ok=True)
    sources = lay_out(args.sources.resolve(), work)
    root = work / "root"
    if root.exists():
        shutil.rmtree(root)
    caches, given = RootLayout(root).caches, CacheLayout(args.embeddings or ".")
    caches.root.mkdir(parents=True)
    for part in (CacheLayout.EMBEDDINGS, CacheLayout.ONNX) if args.embeddings else ():
        if (given.root / part).is_dir():
            subprocess.run(["cp", "-al", str(given.root / part), str(caches.root / part)], check=True)
    cold_extra = ["--no-gate"] + (["--model", args.model] if args.model else [])
    cold_extra += ["--precision", args.precision] if args.precision else []
    runs = {}
    runs["cold"] = release(sources, root, cold_extra, work / "cold.log")
    runs["no change"] = release(sources, root, [], work / "no-change.log")
    change_one_file(work / "corpus", args.changed_file)
    runs["one file changed"] = release(sources, root, [], work / "one-file.log")
    print(f"root {root}; changed file {args.changed_file}")
    report(runs, runs["cold"][0])


def again(work: Path, cold: float) -> None:
    """The `--again` runs on WORK as an earlier run left it."""
    sources, root = work / "sources.yaml", work / "root"
    runs = {"after a code change": release(sources, root, [], work / "after-code-change.log"),
            "no change": release(sources, root, [], work / "no-change-again.log")}
    for n in (1, 2):
        change_one_file(work / "corpus", CHANGED_FILE, variant=int(time.time()) * 10 + n)
        runs[f"one file changed ({n})"] = release(sources, root, [], work / f"one-file-again-{n}.log")
    print(f"root {root}; the cold run beside it: {cold:.1f} s")
    report(runs, cold)


def report(runs: dict, cold: float) -> None:
    """A markdown table of the runs; exits 1 when one failed."""
    print("| run | exit | wall s | ratio to cold | target s | stage seconds |")
    print("|---|---|---|---|---|---|")
    for name, (wall, rc, stages) in runs.items():
        target = TARGETS.get(name.split(" (")[0])
        stage_s = ", ".join(f"{k} {v:.1f}" for k, v in stages.items())
        print(f"| {name} | {rc} | {wall:.1f} | {wall / cold:.3f} | {target or '-'} | {stage_s} |")
    sys.exit(0 if all(rc == 0 for _, rc, _ in runs.values()) else 1)


if __name__ == "__main__":
    main()
